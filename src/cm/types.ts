/**
 * The container manager's boundary (upstream pkg/kubelet/cm): pod-level cgroups under the QoS
 * hierarchy, cgroupfs driver. Interfaces and types only.
 */
import type { Pod } from '../api/types.js';

export type { QOSClass } from '../util/pod-resources.js';

/** upstream cm.ResourceConfig: what a cgroup is limited to; unset fields are left alone. */
export interface ResourceConfig {
  /** cgroup v1 cpu.shares (v2: converted to cpu.weight). */
  cpuShares?: number;
  /** CFS quota in µs per period; 0 or negative: unlimited. */
  cpuQuota?: number;
  /** CFS period in µs. */
  cpuPeriod?: number;
  /** Memory limit in bytes; 0: unlimited. */
  memory?: number;
  /** Maximum number of pids; 0 or negative: unlimited. */
  pidsLimit?: number;
  /**
   * hugetlb limits: page size in bytes → bytes (upstream HugePageLimit). The host's page sizes
   * not named get 0, as upstream's maybeSetHugetlb does: a pod asking for none gets none.
   */
  hugePageLimit?: ReadonlyMap<number, number>;
}

/**
 * Pod cgroups (upstream PodContainerManager): one cgroup per pod, named in cgroupfs form
 * `<cgroupRoot>/kubepods[/burstable|/besteffort]/pod<uid>`, which is given to the runtime as the
 * sandbox's cgroup parent so that every container of the pod runs inside it.
 */
export interface PodContainerManager {
  /** False when pod cgroups are disabled (cgroupsPerQOS false, or no cgroup filesystem). */
  readonly enabled: boolean;
  /** The pod's cgroup name (cgroupfs form, for linux.cgroupParent); '' when disabled. */
  getPodContainerName(pod: Pod): string;
  /** Creates the QoS cgroups when needed, then the pod cgroup, and applies the pod's limits. */
  ensureExists(pod: Pod): Promise<void>;
  exists(pod: Pod): Promise<boolean>;
  /** upstream SetPodCgroupConfig: writes the given fields on the pod's cgroup (in-place resize). */
  setPodCgroupConfig(pod: Pod, r: ResourceConfig): Promise<void>;
  /** Removes a pod cgroup (and empty cgroups left below it) from every hierarchy. */
  destroy(cgroupName: string): Promise<void>;
  /** The pod cgroups present, by pod UID. */
  getAllPodsFromCgroups(): Promise<Map<string, string>>;
}

/** Where the cgroup filesystems are mounted. */
export interface CgroupMounts {
  /** cgroup v1 hierarchies: mount point → controllers mounted there (`name=systemd` included). */
  v1: Map<string, string[]>;
  /** The cgroup v2 (unified) mount point, if any. */
  unified?: string;
}
