/**
 * Container requests/limits → CRI LinuxContainerResources, and the QoS-based OOM score, as
 * upstream computes them (kuberuntime_container_linux.go calculateLinuxResources,
 * cm.MilliCPUToShares / milliCPUToQuota, qos.GetContainerOOMScoreAdjust, v1qos.GetPodQOS).
 */
import type { Container, Pod } from '../api/types.js';
import type { LinuxContainerResources } from '../cri/types.js';
import { parseIntValue, parseMilliValue } from '../util/quantity.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262144;
export const SHARES_PER_CPU = 1024;
export const MILLI_CPU_TO_CPU = 1000;
/** cpu.cfs_period_us upstream uses by default (100 ms). */
export const QUOTA_PERIOD = 100000;
export const MIN_QUOTA_PERIOD = 1000;

export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BESTEFFORT_OOM_SCORE_ADJ = 1000;

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export class ResourceError extends Error {}

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

function quantity(c: Container, kind: 'requests' | 'limits', name: 'cpu' | 'memory'): string | number | undefined {
  const v = c.resources?.[kind]?.[name] as string | number | undefined;
  return v === undefined || v === null ? undefined : v;
}

function milli(c: Container, kind: 'requests' | 'limits', name: 'cpu' | 'memory'): number {
  const q = quantity(c, kind, name);
  if (q === undefined) return 0;
  try {
    return parseMilliValue(q);
  } catch (err) {
    throw new ResourceError(`container ${c.name}: resources.${kind}.${name}: ${(err as Error).message}`);
  }
}

function bytes(c: Container, kind: 'requests' | 'limits', name: 'memory'): number {
  const q = quantity(c, kind, name);
  if (q === undefined) return 0;
  try {
    return parseIntValue(q);
  } catch (err) {
    throw new ResourceError(`container ${c.name}: resources.${kind}.${name}: ${(err as Error).message}`);
  }
}

/**
 * upstream calculateLinuxResources with cpuCFSQuota on: shares from the cpu request (the limit
 * when there is no request, as the apiserver would have defaulted), quota from the cpu limit over
 * a 100 ms period, the memory limit in bytes when set, and the OOM score for the pod's QoS.
 */
export function linuxContainerResources(pod: Pod, container: Container, memoryCapacity: number): LinuxContainerResources {
  const cpuRequest = milli(container, 'requests', 'cpu');
  const cpuLimit = milli(container, 'limits', 'cpu');
  const memoryLimit = bytes(container, 'limits', 'memory');
  const r: LinuxContainerResources = {
    cpuShares: milliCPUToShares(cpuRequest === 0 && cpuLimit !== 0 ? cpuLimit : cpuRequest),
    cpuPeriod: QUOTA_PERIOD,
    cpuQuota: milliCPUToQuota(cpuLimit, QUOTA_PERIOD),
    oomScoreAdj: containerOOMScoreAdjust(pod, container, memoryCapacity),
  };
  if (memoryLimit !== 0) r.memoryLimitInBytes = memoryLimit;
  return r;
}

/**
 * upstream v1qos.GetPodQOS over init and regular containers, counting only cpu and memory. A
 * request left out next to a limit counts as equal to it, because the apiserver defaults it so
 * and static pods reach us without that defaulting.
 */
export function podQOSClass(pod: Pod): QOSClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of all) {
    const found = new Set<string>();
    for (const name of ['cpu', 'memory'] as const) {
      const lim = milli(c, 'limits', name);
      const reqRaw = milli(c, 'requests', name);
      const req = quantity(c, 'requests', name) === undefined ? lim : reqRaw;
      if (req > 0) requests.set(name, (requests.get(name) ?? 0) + req);
      if (lim > 0) {
        found.add(name);
        limits.set(name, (limits.get(name) ?? 0) + lim);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      if (limits.get(name) !== req) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/**
 * upstream qos.GetContainerOOMScoreAdjust: Guaranteed -997, BestEffort 1000, Burstable
 * 1000 - 1000*memoryRequest/capacity clamped to [3, 999] so it stays between the two.
 */
export function containerOOMScoreAdjust(pod: Pod, container: Container, memoryCapacity: number): number {
  const qos = podQOSClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const memoryRequest = bytes(container, 'requests', 'memory');
  const adj = memoryCapacity > 0 ? 1000 - Math.trunc((1000 * memoryRequest) / memoryCapacity) : 1000;
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
