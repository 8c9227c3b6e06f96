/**
 * The container manager factory: pod cgroups under the QoS hierarchy, with the cgroupfs or the
 * systemd driver, or a no-op manager when they are disabled or no cgroup filesystem is mounted.
 */
import { log } from '../util/log.js';
import { Cgroupfs, detectCgroupMounts, type CgroupfsOptions } from './cgroupfs.js';
import { PodContainerManagerImpl, NoopPodContainerManager } from './pod-container-manager.js';
import { CgroupfsCgroupManager } from './cgroup-manager.js';
import type { CgroupDriver } from './cgroup-name.js';
import { SystemdCgroupManager, type SliceUnits } from './systemd-cgroup-manager.js';
import type { CgroupMounts, PodContainerManager, ResourceConfig } from './types.js';
import type { ReservedCgroup } from './node-allocatable.js';

export * from './cgroup-name.js';
export { CgroupfsCgroupManager, type CgroupManager } from './cgroup-manager.js';
export { connectSystemdSlices, sliceUnits, SystemdUnavailableError } from './systemd-slices.js';
export {
  cgroupDriverFromRuntime,
  type CgroupDriverChoice,
  type RuntimeConfigSource,
} from './cgroup-driver-from-runtime.js';
export {
  SystemdCgroupManager,
  sliceResourceProperties,
  SYSTEMD_INFINITY,
  type SliceUnits,
  type SliceProperties,
} from './systemd-cgroup-manager.js';
export type { PodContainerManager, ResourceConfig, QOSClass, CgroupMounts } from './types.js';
export { Cgroupfs, parseCgroupMounts, detectCgroupMounts } from './cgroupfs.js';
export { PodContainerManagerImpl, NoopPodContainerManager } from './pod-container-manager.js';
export * from './node-allocatable.js';
export {
  MIN_SHARES,
  MAX_SHARES,
  SHARES_PER_CPU,
  MILLI_CPU_TO_CPU,
  QUOTA_PERIOD,
  MIN_QUOTA_PERIOD,
  cpuSharesToCpuWeight,
  milliCPUToQuota,
  milliCPUToShares,
  podResourceConfig,
} from './helpers.js';

export interface PodContainerManagerConfig {
  /** upstream --cgroups-per-qos (default true): pod cgroups under kubepods/<qos>. */
  cgroupsPerQOS?: boolean;
  /** upstream --cgroup-root (default '/'), in the driver's form. */
  cgroupRoot?: string;
  /** upstream cgroupDriver (default cgroupfs). */
  cgroupDriver?: CgroupDriver;
  /** systemd's slice operations (the systemd driver). */
  systemdUnits?: SliceUnits;
  /** The node's allocatable CPU in milli-CPU, written as the kubepods cgroup's cpu.shares. */
  allocatableMilliCPU?: number;
  /** The kubepods cgroup's limits (kubepodsCgroupConfig); replaces allocatableMilliCPU. */
  kubepods?: ResourceConfig;
  /** upstream podPidsLimit: pids.max of each pod cgroup when positive. */
  podPidsLimit?: number;
  /** Existing cgroups limited with enforceNodeAllocatable system-reserved / kube-reserved. */
  reservedCgroups?: readonly ReservedCgroup[];
  /** Mounts to use instead of /proc/self/mountinfo's (tests). */
  mounts?: CgroupMounts;
  cgroupfs?: CgroupfsOptions;
}

export function createPodContainerManager(config: PodContainerManagerConfig = {}): PodContainerManager {
  if (config.cgroupsPerQOS === false) return new NoopPodContainerManager();
  const mounts = config.mounts ?? detectCgroupMounts();
  const fs = new Cgroupfs(mounts, config.cgroupfs);
  if (!fs.available) {
    log('cm').warn('no cgroup filesystem is mounted; pod cgroups are disabled');
    return new NoopPodContainerManager();
  }
  let cgroups;
  if (config.cgroupDriver === 'systemd') {
    if (!config.systemdUnits) throw new TypeError("the systemd cgroup driver needs systemd's slice operations");
    cgroups = new SystemdCgroupManager({ units: config.systemdUnits, cgroupfs: fs });
  } else {
    cgroups = new CgroupfsCgroupManager(fs);
  }
  return new PodContainerManagerImpl({
    cgroups,
    cgroupRoot: config.cgroupRoot ?? '/',
    allocatableMilliCPU: config.allocatableMilliCPU,
    kubepods: config.kubepods,
    podPidsLimit: config.podPidsLimit,
    reservedCgroups: config.reservedCgroups,
  });
}
