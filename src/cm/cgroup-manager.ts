/**
 * One cgroup, whatever the driver (upstream cm.CgroupManager): created with limits, updated,
 * checked, listed and destroyed by name. The cgroupfs driver writes the hierarchies itself; the
 * systemd driver asks systemd for a slice first (systemd-cgroup-manager.ts), then writes the same
 * files, as runc's systemd driver does on a cgroup v1 host.
 */
import type { Cgroupfs } from './cgroupfs.js';
import { cgroupNaming, type CgroupName, type CgroupNaming } from './cgroup-name.js';
import type { ResourceConfig } from './types.js';

export interface CgroupManager {
  readonly naming: CgroupNaming;
  /** Creates the cgroup (with its missing ancestors) and applies `r`. */
  create(name: CgroupName, r: ResourceConfig): Promise<void>;
  update(name: CgroupName, r: ResourceConfig): Promise<void>;
  /** True when the cgroup exists in every hierarchy. */
  exists(name: CgroupName): Promise<boolean>;
  /** Removes the cgroup and what is below it; a cgroup that still holds processes is an error. */
  destroy(name: CgroupName): Promise<void>;
  /** The last path elements of the cgroups right below `name`. */
  children(name: CgroupName): Promise<string[]>;
}

export class CgroupfsCgroupManager implements CgroupManager {
  readonly naming = cgroupNaming('cgroupfs');

  constructor(private readonly fs: Cgroupfs) {}

  async create(name: CgroupName, r: ResourceConfig): Promise<void> {
    const path = this.naming.path(name);
    await this.fs.create(path);
    await this.fs.set(path, r);
  }

  update(name: CgroupName, r: ResourceConfig): Promise<void> {
    return this.fs.set(this.naming.path(name), r);
  }

  exists(name: CgroupName): Promise<boolean> {
    return this.fs.exists(this.naming.path(name));
  }

  destroy(name: CgroupName): Promise<void> {
    return this.fs.destroy(this.naming.path(name));
  }

  children(name: CgroupName): Promise<string[]> {
    return this.fs.children(this.naming.path(name));
  }
}
