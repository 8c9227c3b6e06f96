/**
 * Pod cgroups under the QoS hierarchy (upstream cm/pod_container_manager_linux.go and
 * qos_container_manager_linux.go), shown here in the cgroupfs driver's form (the systemd driver
 * names the same cgroups kubepods.slice, kubepods-burstable.slice, kubepods-burstable-pod<uid>.slice):
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
import { podUID } from '../api/pod.js';
import { podCgroupLeaf } from '../util/pod-identity.js';
import { log } from '../util/log.js';
import type { CgroupManager } from './cgroup-manager.js';
import { qosCgroupNames, type CgroupName } from './cgroup-name.js';
import { milliCPUToShares, MIN_SHARES, podResourceConfig } from './helpers.js';
import { podQOSClass, podRequests } from '../util/pod-resources.js';
import type { PodContainerManager, ResourceConfig } from './types.js';
import { hugePageLimits, podHugePages } from '../node/hugepages.js';
import type { ReservedCgroup } from './node-allocatable.js';
import { ConfigError } from '../errors.js';

export interface PodContainerManagerOptions {
  /** The driver (cgroupfs or systemd). */
  cgroups: CgroupManager;
  /** upstream --cgroup-root (default '/'), in the driver's form. */
  cgroupRoot: string;
  /** The node's allocatable CPU in milli-CPU, for the kubepods cgroup's cpu.shares (omit to leave it). */
  allocatableMilliCPU?: number | undefined;
  /** The kubepods cgroup's limits (node-allocatable.ts kubepodsCgroupConfig); replaces allocatableMilliCPU. */
  kubepods?: ResourceConfig | undefined;
  /** upstream podPidsLimit: pids.max of every pod cgroup when positive. */
  podPidsLimit?: number | undefined;
  /** Existing cgroups limited to their reservation (enforceNodeAllocatable system-/kube-reserved). */
  reservedCgroups?: readonly ReservedCgroup[] | undefined;
}

export class PodContainerManagerImpl implements PodContainerManager {
  readonly enabled = true;
  private readonly cgroups: CgroupManager;
  readonly kubepods: CgroupName;
  readonly burstable: CgroupName;
  readonly besteffort: CgroupName;
  private qosReady: Promise<void> | undefined;
  /** milli-CPU requests of the Burstable pods this manager created, for the burstable cgroup's shares. */
  private readonly burstableRequests = new Map<string, number>();

  constructor(private readonly opts: PodContainerManagerOptions) {
    this.cgroups = opts.cgroups;
    ({
      kubepods: this.kubepods,
      burstable: this.burstable,
      besteffort: this.besteffort,
    } = qosCgroupNames(this.cgroups.naming.parse(opts.cgroupRoot)));
  }

  /** The pod's cgroup name (upstream GetPodContainerName's first result). */
  private podCgroupName(pod: Pod): CgroupName {
    const leaf = podCgroupLeaf(podUID(pod));
    switch (podQOSClass(pod)) {
      case 'Guaranteed':
        return [...this.kubepods, leaf];
      case 'Burstable':
        return [...this.burstable, leaf];
      default:
        return [...this.besteffort, leaf];
    }
  }

  /** upstream GetPodContainerName: in the driver's form (what the runtime gets as cgroup parent). */
  getPodContainerName(pod: Pod): string {
    return this.cgroups.naming.format(this.podCgroupName(pod));
  }

  /** Creates the node allocatable and QoS cgroups once (retried after a failure). */
  ensureQOSCgroups(): Promise<void> {
    this.qosReady ??= (async () => {
      await this.cgroups.create(this.kubepods, this.kubepodsConfig());
      await this.cgroups.create(this.burstable, { cpuShares: this.burstableShares() });
      await this.cgroups.create(this.besteffort, { cpuShares: MIN_SHARES });
      await this.enforceReservedCgroups();
    })().catch((err: unknown) => {
      this.qosReady = undefined;
      throw err;
    });
    return this.qosReady;
  }

  private kubepodsConfig(): ResourceConfig {
    const allocatable = this.opts.allocatableMilliCPU;
    if (this.opts.kubepods) return this.opts.kubepods;
    return allocatable !== undefined ? { cpuShares: milliCPUToShares(allocatable) } : {};
  }

  /** upstream enforceExistingCgroup: the reserved cgroups must exist already (the agent does not make them). */
  private async enforceReservedCgroups(): Promise<void> {
    for (const { name, config } of this.opts.reservedCgroups ?? []) {
      const parsed = this.cgroups.naming.parse(name);
      if (!(await this.cgroups.exists(parsed)))
        throw new ConfigError([
          `reserved cgroup ${name} does not exist in every hierarchy: create it (and put the daemons it reserves for in it) before enforcing its reservation`,
        ]);
      await this.cgroups.update(parsed, config);
      log('cm').info({ cgroup: name, config }, 'enforced the reservation on the reserved cgroup');
    }
  }

  /** upstream ResourceConfigForPod with the hugetlb limits, and podPidsLimit as the pod container manager adds it. */
  private podConfig(pod: Pod): ResourceConfig {
    const config: ResourceConfig = { ...podResourceConfig(pod), hugePageLimit: hugePageLimits(podHugePages(pod)) };
    const pids = this.opts.podPidsLimit;
    if (pids !== undefined && pids > 0) config.pidsLimit = pids;
    return config;
  }

  private burstableShares(): number {
    let sum = 0;
    for (const v of this.burstableRequests.values()) sum += v;
    return milliCPUToShares(sum);
  }

  private async updateBurstableShares(): Promise<void> {
    await this.cgroups
      .update(this.burstable, { cpuShares: this.burstableShares() })
      .catch((err: unknown) => log('cm').warn({ err: String(err) }, 'cannot update the burstable cgroup'));
  }

  exists(pod: Pod): Promise<boolean> {
    return this.cgroups.exists(this.podCgroupName(pod));
  }

  async ensureExists(pod: Pod): Promise<void> {
    await this.ensureQOSCgroups();
    const name = this.podCgroupName(pod);
    const config = this.podConfig(pod);
    if (!(await this.cgroups.exists(name))) {
      await this.cgroups.create(name, config);
      log('cm').debug({ cgroup: this.cgroups.naming.format(name), config }, 'created pod cgroup');
    } else {
      await this.cgroups.update(name, config);
    }
    if (podQOSClass(pod) === 'Burstable') {
      const uid = podUID(pod);
      const req = podRequests(pod).cpu;
      if (this.burstableRequests.get(uid) !== req) {
        this.burstableRequests.set(uid, req);
        await this.updateBurstableShares();
      }
    }
  }

  async setPodCgroupConfig(pod: Pod, r: ResourceConfig): Promise<void> {
    await this.cgroups.update(this.podCgroupName(pod), r);
    if (r.cpuShares !== undefined && podQOSClass(pod) === 'Burstable') {
      this.burstableRequests.set(podUID(pod), podRequests(pod).cpu);
      await this.updateBurstableShares();
    }
  }

  /** Removes a pod cgroup, named as getPodContainerName and getAllPodsFromCgroups give it. */
  async destroy(formatted: string): Promise<void> {
    const name = this.cgroups.naming.parse(formatted);
    await this.cgroups.destroy(name);
    const uid = this.cgroups.naming.podUidOfLeaf(formatted.slice(formatted.lastIndexOf('/') + 1));
    if (uid !== undefined && this.burstableRequests.delete(uid)) await this.updateBurstableShares();
    log('cm').debug({ cgroup: formatted }, 'removed pod cgroup');
  }

  /** upstream GetAllPodsFromCgroups: the pod cgroups under kubepods and the QoS cgroups. */
  async getAllPodsFromCgroups(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const { naming } = this.cgroups;
    for (const parent of [this.kubepods, this.burstable, this.besteffort]) {
      const path = naming.path(parent);
      for (const child of await this.cgroups.children(parent)) {
        const uid = naming.podUidOfLeaf(child);
        if (uid) out.set(uid, `${path}/${child}`);
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
  async setPodCgroupConfig(): Promise<void> {}
  async getAllPodsFromCgroups(): Promise<Map<string, string>> {
    return new Map();
  }
}
