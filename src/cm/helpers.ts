/**
 * Resource arithmetic shared by the container and pod cgroups (upstream cm/helpers_linux.go
 * MilliCPUToShares, MilliCPUToQuota, ResourceConfigForPod). Pure functions of the pod spec; the
 * pod's requests, limits and QoS class come from util/pod-resources.ts, as everywhere else.
 */
import type { Pod } from '../api/types.js';
import {
  containerMemory,
  containerMilliCPU,
  podLevelLimits,
  podLimits,
  podQOSClass,
  podRequests,
} from '../util/pod-resources.js';
import type { ResourceConfig } from './types.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262144;
export const SHARES_PER_CPU = 1024;
export const MILLI_CPU_TO_CPU = 1000;
/** cpu.cfs_period_us upstream uses by default (100 ms). */
export const QUOTA_PERIOD = 100000;
export const MIN_QUOTA_PERIOD = 1000;

/** cpu shares for a milli-CPU request: 0 → 2 (the kernel minimum, not Docker's 1024). */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / MILLI_CPU_TO_CPU);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** CFS quota for a milli-CPU limit over period; 0 (unlimited) when there is no limit. */
export function milliCPUToQuota(milliCPU: number, period: number): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD, Math.floor((milliCPU * period) / MILLI_CPU_TO_CPU));
}

/** upstream CpuSharesToCpuWeight (cgroup v2 cpu.weight from v1 shares). */
export function cpuSharesToCpuWeight(shares: number): number {
  return Math.floor(1 + ((shares - 2) * 9999) / 262142);
}

/**
 * upstream ResourceConfigForPod with CFS quota enforced: Guaranteed pods get shares, quota and
 * memory limit; Burstable pods get shares, and quota / memory limit only when every container
 * (or the pod level, spec.resources) declares that limit; BestEffort pods get the minimum shares.
 */
export function podResourceConfig(pod: Pod, cpuPeriod = QUOTA_PERIOD): ResourceConfig {
  const reqs = podRequests(pod);
  const limits = podLimits(pod);
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    if (containerMilliCPU(c, 'limits') === 0) cpuLimitsDeclared = false;
    if (containerMemory(c, 'limits') === 0) memoryLimitsDeclared = false;
  }
  // A pod-level limit bounds the whole pod, whatever its containers declare.
  const podLevel = podLevelLimits(pod);
  if (podLevel.cpu > 0) cpuLimitsDeclared = true;
  if (podLevel.memory > 0) memoryLimitsDeclared = true;
  const cpuShares = milliCPUToShares(reqs.cpu);
  const cpuQuota = milliCPUToQuota(limits.cpu, cpuPeriod);
  switch (podQOSClass(pod)) {
    case 'Guaranteed':
      return { cpuShares, cpuQuota, cpuPeriod, memory: limits.memory };
    case 'Burstable': {
      const r: ResourceConfig = { cpuShares };
      if (cpuLimitsDeclared) {
        r.cpuQuota = cpuQuota;
        r.cpuPeriod = cpuPeriod;
      }
      if (memoryLimitsDeclared) r.memory = limits.memory;
      return r;
    }
    default:
      return { cpuShares: MIN_SHARES };
  }
}
