/**
 * The systemd cgroup driver (upstream cgroupManagerImpl with runc's systemd managers): a pod or
 * QoS cgroup is a transient slice unit that systemd creates (StartTransientUnit) and removes
 * (StopUnit), so that systemd, which owns the cgroup tree on such a node, knows every cgroup in
 * it and never moves or removes ours. Its limits go to systemd as unit properties (so a
 * daemon-reload keeps them) and, as runc's legacy systemd manager does, to the files too: the
 * directories of the hierarchies systemd leaves alone (cpuset, …) are created with the same path.
 */
import type { Cgroupfs } from './cgroupfs.js';
import { cgroupNaming, systemdSliceName, type CgroupName } from './cgroup-name.js';
import type { CgroupManager } from './cgroup-manager.js';
import { cpuSharesToCpuWeight } from './helpers.js';
import type { ResourceConfig } from './types.js';

/** What a slice unit is given (names as systemd's unit properties, in systemd.resource-control(5)). */
export interface SliceProperties {
  Description?: string;
  /** The parent slice, so that starting a slice starts its parents. */
  Wants?: string;
  CPUShares?: bigint;
  CPUWeight?: bigint;
  CPUQuotaPerSecUSec?: bigint;
  CPUQuotaPeriodUSec?: bigint;
  MemoryLimit?: bigint;
  MemoryMax?: bigint;
  TasksMax?: bigint;
}

/** The slice operations of systemd's manager (systemd/slice-units.ts over D-Bus; fakes in tests). */
export interface SliceUnits {
  /** Starts a transient slice (an existing one only gets the properties) and waits for the job. */
  startSlice(unit: string, props: SliceProperties): Promise<void>;
  setSliceProperties(unit: string, props: SliceProperties): Promise<void>;
  /** Stops the slice and waits for the job; a unit that does not exist is already stopped. */
  stopSlice(unit: string): Promise<void>;
}

/** systemd's "infinity" for uint64 properties. */
export const SYSTEMD_INFINITY = 2n ** 64n - 1n;

/**
 * upstream/runc resource → property conversion (runc libcontainer/cgroups/systemd v1.go/v2.go):
 * cgroup v1 takes CPUShares and MemoryLimit, v2 CPUWeight and MemoryMax; the CPU quota is per
 * second, rounded up to systemd's 10 ms granularity.
 */
export function sliceResourceProperties(r: ResourceConfig, unified: boolean): SliceProperties {
  const p: SliceProperties = {};
  if (r.cpuShares !== undefined) {
    if (unified) p.CPUWeight = BigInt(cpuSharesToCpuWeight(r.cpuShares));
    else p.CPUShares = BigInt(r.cpuShares);
  }
  if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined) {
    const period = r.cpuPeriod ?? 100_000;
    if (r.cpuPeriod !== undefined) p.CPUQuotaPeriodUSec = BigInt(period);
    p.CPUQuotaPerSecUSec =
      r.cpuQuota !== undefined && r.cpuQuota > 0 ? quotaPerSecond(r.cpuQuota, period) : SYSTEMD_INFINITY;
  }
  if (r.memory !== undefined) {
    const bytes = r.memory > 0 ? BigInt(r.memory) : SYSTEMD_INFINITY;
    if (unified) p.MemoryMax = bytes;
    else p.MemoryLimit = bytes;
  }
  if (r.pidsLimit !== undefined) p.TasksMax = r.pidsLimit > 0 ? BigInt(r.pidsLimit) : SYSTEMD_INFINITY;
  return p;
}

function quotaPerSecond(quota: number, period: number): bigint {
  const perSec = (BigInt(quota) * 1_000_000n) / BigInt(period);
  const rem = perSec % 10_000n;
  return rem === 0n ? perSec : perSec + 10_000n - rem;
}

export interface SystemdCgroupManagerOptions {
  units: SliceUnits;
  /** The hierarchies, for the files and the directories systemd does not create. */
  cgroupfs: Cgroupfs;
}

export class SystemdCgroupManager implements CgroupManager {
  readonly naming = cgroupNaming('systemd');
  private readonly unified: boolean;

  constructor(private readonly opts: SystemdCgroupManagerOptions) {
    const v1 = [...opts.cgroupfs.mounts.v1.values()].some((c) => c.includes('memory') || c.includes('cpu'));
    this.unified = !v1 && opts.cgroupfs.mounts.unified !== undefined;
  }

  async create(name: CgroupName, r: ResourceConfig): Promise<void> {
    const unit = systemdSliceName(name);
    const parent = name.length > 1 ? systemdSliceName(name.slice(0, -1)) : '-.slice';
    await this.opts.units.startSlice(unit, {
      Description: `kubelet-ts cgroup ${unit}`,
      Wants: parent,
      ...sliceResourceProperties(r, this.unified),
    });
    const path = this.naming.path(name);
    await this.opts.cgroupfs.create(path);
    await this.opts.cgroupfs.set(path, r);
  }

  async update(name: CgroupName, r: ResourceConfig): Promise<void> {
    await this.opts.units.setSliceProperties(systemdSliceName(name), sliceResourceProperties(r, this.unified));
    await this.opts.cgroupfs.set(this.naming.path(name), r);
  }

  exists(name: CgroupName): Promise<boolean> {
    return this.opts.cgroupfs.exists(this.naming.path(name));
  }

  async destroy(name: CgroupName): Promise<void> {
    await this.opts.units.stopSlice(systemdSliceName(name));
    // What systemd does not own (the cpuset directory, …) is removed like cgroupfs does.
    await this.opts.cgroupfs.destroy(this.naming.path(name));
  }

  children(name: CgroupName): Promise<string[]> {
    return this.opts.cgroupfs.children(this.naming.path(name));
  }
}
