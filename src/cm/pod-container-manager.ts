/**
 * Pod cgroups under the QoS hierarchy (upstream cm/pod_container_manager_linux.go and
 * qos_container_manager_linux.go, cgroupfs driver):
 *
 *   <cgroupRoot>/kubepods                    node allocatable (cpu.shares of the node's CPUs)
 *   <cgroupRoot>/kubepods/pod<uid>           Guaranteed pods
 *   <cgroupRoot>/kubepods/burstable          cpu.shares = the Burstable pods' cpu requests
 *   <cgroupRoot>/kubepods/burstable/pod<uid>
 *   <cgroupRoot>/kubepods/besteffort         cpu.shares = 2
 *   <cgroupRoot>/kubepods/besteffort/pod<uid>
 *
 * The QoS cgroups are created on first use and never removed (other pods, and other agents
 * sharing the root, may use them). A pod cgroup gets the pod-level limits of
 * podResourceConfig when it is created.
 */
import type { Pod } from '../api/types.js';
import { podCgroupLeaf } from '../util/pod-identity.js';
import { log } from '../util/log.js';
import type { Cgroupfs } from './cgroupfs.js';
import { milliCPUToShares, MIN_SHARES, podQOSClass, podRequests, podResourceConfig } from './helpers.js';
import type { PodContainerManager, ResourceConfig } from './types.js';

/** Prefix of a pod cgroup's name (podCgroupLeaf builds it; this parses it back). */
export const POD_CGROUP_PREFIX = 'pod';

export interface PodContainerManagerOptions {
  cgroupfs: Cgroupfs;
  /** upstream --cgroup-root (default '/'). */
  cgroupRoot: string;
  /** The node's allocatable CPU in milli-CPU, for the kubepods cgroup's cpu.shares (omit to leave it). */
  allocatableMilliCPU?: number | undefined;
}

/** Joins cgroup name parts into cgroupfs form: '/a/b'. */
function cgroupName(...parts: string[]): string {
  const segs = parts.flatMap((p) => p.split('/')).filter(Boolean);
  return `/${segs.join('/')}`;
}

export class CgroupfsPodContainerManager implements PodContainerManager {
  readonly enabled = true;
  readonly kubepods: string;
  readonly burstable: string;
  readonly besteffort: string;
  private qosReady: Promise<void> | undefined;
  /** milli-CPU requests of the Burstable pods this manager created, for the burstable cgroup's shares. */
  private readonly burstableRequests = new Map<string, number>();

  constructor(private readonly opts: PodContainerManagerOptions) {
    this.kubepods = cgroupName(opts.cgroupRoot, 'kubepods');
    this.burstable = cgroupName(this.kubepods, 'burstable');
    this.besteffort = cgroupName(this.kubepods, 'besteffort');
  }

  private get fs(): Cgroupfs {
    return this.opts.cgroupfs;
  }

  /** upstream GetPodContainerName. */
  getPodContainerName(pod: Pod): string {
    const leaf = podCgroupLeaf(pod.metadata?.uid ?? '');
    switch (podQOSClass(pod)) {
      case 'Guaranteed': return cgroupName(this.kubepods, leaf);
      case 'Burstable': return cgroupName(this.burstable, leaf);
      default: return cgroupName(this.besteffort, leaf);
    }
  }

  /** Creates the node allocatable and QoS cgroups once (retried after a failure). */
  ensureQOSCgroups(): Promise<void> {
    this.qosReady ??= (async () => {
      await this.fs.create(this.kubepods);
      if (this.opts.allocatableMilliCPU !== undefined) await this.fs.set(this.kubepods, { cpuShares: milliCPUToShares(this.opts.allocatableMilliCPU) });
      await this.fs.create(this.burstable);
      await this.fs.create(this.besteffort);
      await this.fs.set(this.besteffort, { cpuShares: MIN_SHARES });
      await this.updateBurstableShares();
    })().catch((err: unknown) => {
      this.qosReady = undefined;
      throw err;
    });
    return this.qosReady;
  }

  private async updateBurstableShares(): Promise<void> {
    let sum = 0;
    for (const v of this.burstableRequests.values()) sum += v;
    await this.fs.set(this.burstable, { cpuShares: milliCPUToShares(sum) });
  }

  exists(pod: Pod): Promise<boolean> {
    return this.fs.exists(this.getPodContainerName(pod));
  }

  async ensureExists(pod: Pod): Promise<void> {
    await this.ensureQOSCgroups();
    const name = this.getPodContainerName(pod);
    const config: ResourceConfig = podResourceConfig(pod);
    if (!(await this.fs.exists(name))) {
      await this.fs.create(name);
      log('cm').debug({ cgroup: name, config }, 'created pod cgroup');
    }
    await this.fs.set(name, config);
    if (podQOSClass(pod) === 'Burstable') {
      const uid = pod.metadata?.uid ?? '';
      const req = podRequests(pod).cpu;
      if (this.burstableRequests.get(uid) !== req) {
        this.burstableRequests.set(uid, req);
        await this.updateBurstableShares().catch((err: unknown) => log('cm').warn({ err: String(err) }, 'cannot update the burstable cgroup'));
      }
    }
  }

  async destroy(name: string): Promise<void> {
    await this.fs.destroy(name);
    const uid = name.slice(name.lastIndexOf('/') + 1 + POD_CGROUP_PREFIX.length);
    if (this.burstableRequests.delete(uid)) {
      await this.updateBurstableShares().catch((err: unknown) => log('cm').warn({ err: String(err) }, 'cannot update the burstable cgroup'));
    }
    log('cm').debug({ cgroup: name }, 'removed pod cgroup');
  }

  /** upstream GetAllPodsFromCgroups: pod<uid> directories under kubepods and the QoS cgroups. */
  async getAllPodsFromCgroups(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const parent of [this.kubepods, this.burstable, this.besteffort]) {
      for (const child of await this.fs.children(parent)) {
        if (!child.startsWith(POD_CGROUP_PREFIX)) continue;
        const uid = child.slice(POD_CGROUP_PREFIX.length);
        if (uid) out.set(uid, cgroupName(parent, child));
      }
    }
    return out;
  }
}

/** Pod cgroups turned off (cgroupsPerQOS false): the runtime chooses the cgroups. */
export class NoopPodContainerManager implements PodContainerManager {
  readonly enabled = false;
  getPodContainerName(): string {
    return '';
  }
  async ensureExists(): Promise<void> {}
  async exists(): Promise<boolean> {
    return true;
  }
  async destroy(): Promise<void> {}
  async getAllPodsFromCgroups(): Promise<Map<string, string>> {
    return new Map();
  }
}
