/**
 * The cgroupfs driver (upstream cm/cgroup_manager_linux.go with libcontainer's fs and fs2
 * managers, reduced to what pod cgroups need): a cgroup is named by its path from the hierarchy
 * root ("/kubepods/burstable/pod<uid>") and exists once per hierarchy:
 *
 *  - cgroup v1: a directory in every mounted hierarchy (cpu, cpuacct, memory, pids, cpuset,
 *    name=systemd, …); new cpuset cgroups get their parent's cpus and mems, since the kernel
 *    leaves them empty and an empty cpuset takes no tasks;
 *  - cgroup v2: a directory in the unified tree; the controllers it is limited by (cpu, memory,
 *    pids) are enabled in the ancestors' cgroup.subtree_control when the tree offers them. On a
 *    hybrid host the unified tree has none of them and only holds the directory.
 *
 * Limits go to whichever hierarchy has the controller. Removal is rmdir, deepest first: the
 * kernel refuses to remove a cgroup that still holds processes, so nothing running is touched.
 */
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { log } from '../util/log.js';
import { cpuSharesToCpuWeight } from './helpers.js';
import { hostHugePageSizes, hugePageSizeName } from '../node/hugepages.js';
import { metrics } from '../metrics/index.js';
import { detachString, MOUNTINFO, parseMountInfo, readMountInfoSync, type MountInfo } from '../util/mountinfo.js';
import type { CgroupMounts, ResourceConfig } from './types.js';

/** Mount options of a v1 cgroup mount that are not controller names. */
const NOT_CONTROLLERS = new Set([
  'rw',
  'ro',
  'relatime',
  'noatime',
  'nosuid',
  'nodev',
  'noexec',
  'clone_children',
  'xattr',
  'nsdelegate',
  'nofavordynmods',
  'favordynmods',
  'memory_localevents',
  'memory_recursiveprot',
  'memory_hugetlb_accounting',
  'cpuset_v2_mode',
  'noprefix',
]);

/** Parses /proc/self/mountinfo: cgroup (v1) mounts with their controllers, and the cgroup2 mount. */
export function parseCgroupMounts(mountinfo: string): CgroupMounts {
  return cgroupMountsOf(parseMountInfo(mountinfo));
}

/** The cgroup (v1) mounts with their controllers, and the cgroup2 mount, among `all`. */
function cgroupMountsOf(all: readonly MountInfo[]): CgroupMounts {
  const mounts: CgroupMounts = { v1: new Map() };
  for (const m of all) {
    // Kept for the agent's life: detached from the mountinfo text (src/util/mountinfo.ts).
    if (m.fsType === 'cgroup2') {
      mounts.unified ??= detachString(m.mountPoint);
    } else if (m.fsType === 'cgroup') {
      const controllers = m.superOptions
        .split(',')
        .filter((o) => !NOT_CONTROLLERS.has(o) && !o.startsWith('release_agent='))
        .map(detachString);
      if (controllers.length > 0 && !mounts.v1.has(m.mountPoint))
        mounts.v1.set(detachString(m.mountPoint), controllers);
    }
  }
  return mounts;
}

/** The cgroup mounts of this process (read once at start-up, so synchronously). */
export function detectCgroupMounts(mountinfoPath = MOUNTINFO): CgroupMounts {
  return cgroupMountsOf(readMountInfoSync(mountinfoPath));
}

function errno(err: unknown): string | undefined {
  return (err as { code?: string } | undefined)?.code;
}

export interface CgroupfsOptions {
  /** How a cgroup directory is removed (tests on plain directories remove their files too). */
  rmdir?: (path: string) => Promise<void>;
  /** The host's huge page sizes in bytes (default: /sys/kernel/mm/hugepages). */
  hugePageSizes?: readonly number[];
}

/** The controllers set() may limit in the unified tree. */
const V2_CONTROLLERS = ['cpu', 'memory', 'pids', 'hugetlb'];

export class Cgroupfs {
  private readonly rmdirFn: (path: string) => Promise<void>;
  private readonly hugePageSizes: readonly number[];

  constructor(
    readonly mounts: CgroupMounts,
    opts: CgroupfsOptions = {},
  ) {
    this.rmdirFn = opts.rmdir ?? ((p) => rmdir(p));
    this.hugePageSizes = opts.hugePageSizes ?? hostHugePageSizes();
  }

  /** True when at least one cgroup hierarchy is mounted. */
  get available(): boolean {
    return this.mounts.v1.size > 0 || this.mounts.unified !== undefined;
  }

  /** The directory of the cgroup in every hierarchy (v1 first, then the unified tree). */
  paths(name: string): string[] {
    const out = [...this.mounts.v1.keys()].map((m) => join(m, name));
    if (this.mounts.unified) out.push(join(this.mounts.unified, name));
    return out;
  }

  private v1Path(controller: string, name: string): string | undefined {
    for (const [mount, controllers] of this.mounts.v1) if (controllers.includes(controller)) return join(mount, name);
    return undefined;
  }

  /** Creates the cgroup (and its missing ancestors) in every hierarchy. */
  create(name: string): Promise<void> {
    return timedCgroupOperation('create', () => this.createUntimed(name));
  }

  private async createUntimed(name: string): Promise<void> {
    for (const [mount, controllers] of this.mounts.v1) {
      if (controllers.includes('cpuset')) await this.createCpuset(mount, name);
      else await mkdir(join(mount, name), { recursive: true });
    }
    if (this.mounts.unified) {
      await this.enableV2Controllers(name);
      await mkdir(join(this.mounts.unified, name), { recursive: true });
    }
  }

  /** Every level gets its parent's cpus and mems when they are empty (libcontainer ensureParent). */
  private async createCpuset(mount: string, name: string): Promise<void> {
    const parts = name.split('/').filter(Boolean);
    let dir = mount;
    for (const part of parts) {
      const parent = dir;
      dir = join(dir, part);
      await mkdir(dir, { recursive: true });
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const own = await readFile(join(dir, file), 'utf8').catch(() => undefined);
        if (own === undefined || own.trim() !== '') continue;
        const inherited = await readFile(join(parent, file), 'utf8').catch(() => '');
        if (inherited.trim() !== '') await writeFile(join(dir, file), inherited.trim());
      }
    }
  }

  /** Enables cpu/memory/pids in the subtree_control of every ancestor of name, where offered. */
  private async enableV2Controllers(name: string): Promise<void> {
    const root = this.mounts.unified!;
    const parts = name.split('/').filter(Boolean);
    let dir = root;
    for (let i = 0; i < parts.length; i++) {
      const offered = (await readFile(join(dir, 'cgroup.controllers'), 'utf8').catch(() => ''))
        .split(/\s+/)
        .filter(Boolean);
      const wanted = V2_CONTROLLERS.filter((c) => offered.includes(c));
      if (wanted.length > 0) {
        const enabled = (await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => ''))
          .split(/\s+/)
          .map((c) => c.replace(/^\+/, ''));
        const missing = wanted.filter((c) => !enabled.includes(c));
        if (missing.length > 0) {
          await writeFile(join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' ')).catch((err) =>
            log('cm').debug({ dir, controllers: missing, err: String(err) }, 'cannot enable cgroup v2 controllers'),
          );
        }
      }
      dir = join(dir, parts[i]!);
      await mkdir(dir, { recursive: true });
    }
  }

  /** True when the cgroup exists in every hierarchy. */
  async exists(name: string): Promise<boolean> {
    for (const p of this.paths(name)) {
      try {
        await readdir(p);
      } catch {
        return false;
      }
    }
    return this.available;
  }

  /** Writes the limits to the hierarchies that have the controllers; unset fields are left alone. */
  set(name: string, r: ResourceConfig): Promise<void> {
    return timedCgroupOperation('update', () => this.setUntimed(name, r));
  }

  private async setUntimed(name: string, r: ResourceConfig): Promise<void> {
    const cpu = this.v1Path('cpu', name);
    if (cpu) {
      if (r.cpuShares !== undefined) await writeFile(join(cpu, 'cpu.shares'), String(r.cpuShares));
      if (r.cpuPeriod !== undefined || r.cpuQuota !== undefined) await this.setCfs(cpu, r);
    }
    const memory = this.v1Path('memory', name);
    if (memory && r.memory !== undefined)
      await writeFile(join(memory, 'memory.limit_in_bytes'), r.memory > 0 ? String(r.memory) : '-1');
    const pids = this.v1Path('pids', name);
    if (pids && r.pidsLimit !== undefined)
      await writeFile(join(pids, 'pids.max'), r.pidsLimit > 0 ? String(r.pidsLimit) : 'max');
    const hugetlb = this.v1Path('hugetlb', name);
    if (hugetlb) await this.setHugetlb(hugetlb, r, 'limit_in_bytes');
    if (this.mounts.unified) await this.setV2(join(this.mounts.unified, name), r);
  }

  /** hugetlb.<size>.<file> for every page size of the host: the limit asked, else 0 (upstream maybeSetHugetlb). */
  private async setHugetlb(dir: string, r: ResourceConfig, file: 'limit_in_bytes' | 'max'): Promise<void> {
    if (!r.hugePageLimit) return;
    for (const size of this.hugePageSizes) {
      const limit = r.hugePageLimit.get(size) ?? 0;
      const value = Number.isFinite(limit) ? String(limit) : file === 'max' ? 'max' : '-1';
      await writeFile(join(dir, `hugetlb.${hugePageSizeName(size)}.${file}`), value);
    }
  }

  /** Period then quota; if the kernel refuses the period against the old quota, the other way round. */
  private async setCfs(dir: string, r: ResourceConfig): Promise<void> {
    const quota = r.cpuQuota !== undefined ? (r.cpuQuota > 0 ? String(r.cpuQuota) : '-1') : undefined;
    try {
      if (r.cpuPeriod !== undefined) await writeFile(join(dir, 'cpu.cfs_period_us'), String(r.cpuPeriod));
      if (quota !== undefined) await writeFile(join(dir, 'cpu.cfs_quota_us'), quota);
    } catch (err) {
      if (errno(err) !== 'EINVAL' || quota === undefined) throw err;
      await writeFile(join(dir, 'cpu.cfs_quota_us'), quota);
      if (r.cpuPeriod !== undefined) await writeFile(join(dir, 'cpu.cfs_period_us'), String(r.cpuPeriod));
    }
  }

  private async setV2(dir: string, r: ResourceConfig): Promise<void> {
    const parentEnabled = (await readFile(join(dir, '..', 'cgroup.subtree_control'), 'utf8').catch(() => ''))
      .split(/\s+/)
      .map((c) => c.replace(/^\+/, ''));
    if (parentEnabled.includes('cpu')) {
      if (r.cpuShares !== undefined)
        await writeFile(join(dir, 'cpu.weight'), String(cpuSharesToCpuWeight(r.cpuShares)));
      if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined) {
        const quota = r.cpuQuota !== undefined && r.cpuQuota > 0 ? String(r.cpuQuota) : 'max';
        await writeFile(join(dir, 'cpu.max'), `${quota} ${r.cpuPeriod ?? 100000}`);
      }
    }
    if (parentEnabled.includes('memory') && r.memory !== undefined)
      await writeFile(join(dir, 'memory.max'), r.memory > 0 ? String(r.memory) : 'max');
    if (parentEnabled.includes('pids') && r.pidsLimit !== undefined)
      await writeFile(join(dir, 'pids.max'), r.pidsLimit > 0 ? String(r.pidsLimit) : 'max');
    if (parentEnabled.includes('hugetlb')) await this.setHugetlb(dir, r, 'max');
  }

  /** The child cgroups of name (from the first hierarchy that has it). */
  async children(name: string): Promise<string[]> {
    for (const p of this.paths(name)) {
      try {
        const entries = await readdir(p, { withFileTypes: true });
        return entries.filter((e) => e.isDirectory()).map((e) => e.name);
      } catch {
        continue;
      }
    }
    return [];
  }

  /** Process IDs in the cgroup and below it (all hierarchies). */
  async pids(name: string): Promise<number[]> {
    const found = new Set<number>();
    const walk = async (dir: string): Promise<void> => {
      const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const l of text.split('\n')) if (l.trim()) found.add(Number(l));
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name));
    };
    for (const p of this.paths(name)) await walk(p);
    return [...found];
  }

  /**
   * Removes the cgroup and the cgroups below it, deepest first, in every hierarchy. A cgroup
   * that still holds processes cannot be removed: that error (EBUSY) is thrown after the other
   * hierarchies were tried.
   */
  destroy(name: string): Promise<void> {
    return timedCgroupOperation('destroy', () => this.destroyUntimed(name));
  }

  private async destroyUntimed(name: string): Promise<void> {
    let first: unknown;
    const remove = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (errno(err) === 'ENOENT') return;
        throw err;
      }
      for (const e of entries) if (e.isDirectory()) await remove(join(dir, e.name));
      try {
        await this.rmdirFn(dir);
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err;
      }
    };
    for (const p of this.paths(name)) {
      try {
        await remove(p);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}

/** upstream cgroupManagerImpl: kubelet_cgroup_manager_duration_seconds{operation_type}, success or not. */
async function timedCgroupOperation(
  operation: 'create' | 'update' | 'destroy',
  fn: () => Promise<void>,
): Promise<void> {
  const started = Date.now();
  try {
    await fn();
  } finally {
    metrics.cgroupManagerDuration.observe({ operation_type: operation }, (Date.now() - started) / 1000);
  }
}
