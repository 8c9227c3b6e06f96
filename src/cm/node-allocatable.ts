/**
 * The cgroups enforcing node allocatable (upstream enforceNodeAllocatableCgroups): kubepods gets
 * the absolute allocatable of the internal capacity (with pids) when "pods" is enforced, else the
 * capacity itself; the reserved cgroups get their reservation ("*-compressible": cpu shares only).
 * The arithmetic is node/allocatable.ts.
 */
import { allocatableAbsolute, type NodeAllocatableConfig, type ResourceList } from '../node/allocatable.js';
import { hugePageLimits } from '../node/hugepages.js';
import { milliCPUToShares } from './helpers.js';
import type { ResourceConfig } from './types.js';

/** upstream getCgroupConfigInternal: a resource list as cgroup limits (compressible: cpu shares only). */
export function cgroupConfigOf(rl: ResourceList, compressibleOnly = false): ResourceConfig {
  const rc: ResourceConfig = {};
  if (rl.cpu !== undefined) rc.cpuShares = milliCPUToShares(rl.cpu);
  if (compressibleOnly) return rc;
  if (rl.memory !== undefined) rc.memory = rl.memory;
  if (rl.pid !== undefined) rc.pidsLimit = rl.pid;
  // Always a map, as upstream: sizes it does not name get 0 (maybeSetHugetlb).
  rc.hugePageLimit = hugePageLimits(rl);
  return rc;
}

/** The kubepods cgroup's limits: the absolute allocatable when "pods" is enforced, else the capacity. */
export function kubepodsCgroupConfig(cfg: NodeAllocatableConfig, enforce: readonly string[]): ResourceConfig {
  return cgroupConfigOf(enforce.includes('pods') ? allocatableAbsolute(cfg) : cfg.capacity);
}

/** A reserved cgroup to limit (upstream enforceExistingCgroup): its name in the driver's form, and the limits. */
export interface ReservedCgroup {
  name: string;
  config: ResourceConfig;
}

/** The reserved cgroups enforceNodeAllocatable asks for, with their limits. */
export function reservedCgroups(
  enforce: readonly string[],
  cgroups: { systemReservedCgroup: string; kubeReservedCgroup: string },
  reserved: { systemReserved?: ResourceList; kubeReserved?: ResourceList },
): ReservedCgroup[] {
  const out: ReservedCgroup[] = [];
  const pairs = [
    ['system', cgroups.systemReservedCgroup, reserved.systemReserved],
    ['kube', cgroups.kubeReservedCgroup, reserved.kubeReserved],
  ] as const;
  for (const [who, name, list] of pairs) {
    if (enforce.includes(`${who}-reserved`)) out.push({ name, config: cgroupConfigOf(list ?? {}) });
    else if (enforce.includes(`${who}-reserved-compressible`))
      out.push({ name, config: cgroupConfigOf(list ?? {}, true) });
  }
  return out;
}
