/**
 * Resource arithmetic shared by the container and pod cgroups (upstream cm/helpers_linux.go
 * MilliCPUToShares, MilliCPUToQuota, ResourceConfigForPod; api/v1/resource PodRequests and
 * PodLimits; apis/core/v1/helper/qos GetPodQOS). Pure functions of the pod spec.
 *
 * Requests left out next to a limit count as equal to the limit: the apiserver defaults them so,
 * and static pods reach the agent without that defaulting.
 */
import type { Container, Pod } from '../api/types.js';
import { kubeletErrorClass } from '../errors.js';
import { parseIntValue, parseMilliValue } from '../util/quantity.js';
import type { QOSClass, ResourceConfig } from './types.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262144;
export const SHARES_PER_CPU = 1024;
export const MILLI_CPU_TO_CPU = 1000;
/** cpu.cfs_period_us upstream uses by default (100 ms). */
export const QUOTA_PERIOD = 100000;
export const MIN_QUOTA_PERIOD = 1000;

/** A malformed quantity in a container's resources. */
export class ResourceError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

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

type Kind = 'requests' | 'limits';
type Res = 'cpu' | 'memory';

function raw(c: Container, kind: Kind, name: Res): string | number | undefined {
  const v = c.resources?.[kind]?.[name] as string | number | undefined;
  return v === undefined || v === null ? undefined : v;
}

function parse(c: Container, kind: Kind, name: Res, milli: boolean): number {
  const q = raw(c, kind, name);
  if (q === undefined) return 0;
  try {
    return milli ? parseMilliValue(q) : parseIntValue(q);
  } catch (err) {
    throw new ResourceError(`container ${c.name}: resources.${kind}.${name}: ${(err as Error).message}`, { cause: err });
  }
}

/** milli-CPU of a container's cpu request or limit (0 when absent). */
export function containerMilliCPU(c: Container, kind: Kind): number {
  return parse(c, kind, 'cpu', true);
}

/** Bytes of a container's memory request or limit (0 when absent). */
export function containerMemory(c: Container, kind: Kind): number {
  return parse(c, kind, 'memory', false);
}

/** A request as the apiserver would have defaulted it: the limit when only the limit is set. */
function defaultedRequest(c: Container, name: Res): number {
  const milli = name === 'cpu';
  return raw(c, 'requests', name) === undefined ? parse(c, 'limits', name, milli) : parse(c, 'requests', name, milli);
}

/**
 * upstream v1qos.GetPodQOS over init and regular containers, counting only cpu and memory.
 */
export function podQOSClass(pod: Pod): QOSClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of all) {
    const found = new Set<string>();
    for (const name of ['cpu', 'memory'] as const) {
      const lim = parse(c, 'limits', name, true);
      const req = raw(c, 'requests', name) === undefined ? lim : parse(c, 'requests', name, true);
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

export interface PodResourceTotals {
  /** milli-CPU. */
  cpu: number;
  /** bytes. */
  memory: number;
}

/**
 * upstream resource.PodRequests / PodLimits: the regular containers and sidecars add up; a
 * regular init container runs alone (beside the sidecars started before it), so the pod needs the
 * larger of that and the sum.
 */
function podTotals(pod: Pod, value: (c: Container, name: Res) => number): PodResourceTotals {
  const sum = { cpu: 0, memory: 0 };
  for (const c of pod.spec?.containers ?? []) {
    sum.cpu += value(c, 'cpu');
    sum.memory += value(c, 'memory');
  }
  const sidecars = { cpu: 0, memory: 0 };
  const initMax = { cpu: 0, memory: 0 };
  for (const c of pod.spec?.initContainers ?? []) {
    const own = { cpu: value(c, 'cpu'), memory: value(c, 'memory') };
    let need: PodResourceTotals;
    if (c.restartPolicy === 'Always') {
      sum.cpu += own.cpu;
      sum.memory += own.memory;
      sidecars.cpu += own.cpu;
      sidecars.memory += own.memory;
      need = { ...sidecars };
    } else {
      need = { cpu: own.cpu + sidecars.cpu, memory: own.memory + sidecars.memory };
    }
    initMax.cpu = Math.max(initMax.cpu, need.cpu);
    initMax.memory = Math.max(initMax.memory, need.memory);
  }
  return { cpu: Math.max(sum.cpu, initMax.cpu), memory: Math.max(sum.memory, initMax.memory) };
}

/** spec.overhead as a pseudo-container, so it parses (and fails) like container resources. */
function overheadTotals(pod: Pod): PodResourceTotals {
  const overhead = pod.spec?.overhead;
  if (!overhead) return { cpu: 0, memory: 0 };
  const c: Container = { name: 'overhead', resources: { limits: overhead } };
  return { cpu: parse(c, 'limits', 'cpu', true), memory: parse(c, 'limits', 'memory', false) };
}

/** upstream PodResourcesOptions.ExcludeOverhead. */
export interface PodResourcesOptions {
  excludeOverhead?: boolean;
}

/**
 * Requests plus the pod overhead (the runtime's own cost of the sandbox counts as the pod's),
 * unless excluded (eviction ranks by the containers' requests alone, as upstream).
 */
export function podRequests(pod: Pod, opts: PodResourcesOptions = {}): PodResourceTotals {
  const sum = podTotals(pod, (c, name) => defaultedRequest(c, name));
  if (opts.excludeOverhead) return sum;
  const o = overheadTotals(pod);
  return { cpu: sum.cpu + o.cpu, memory: sum.memory + o.memory };
}

/**
 * Limits plus the pod overhead, added only to a resource that has a limit at all (upstream
 * PodLimits: an unlimited pod stays unlimited).
 */
export function podLimits(pod: Pod): PodResourceTotals {
  const sum = podTotals(pod, (c, name) => parse(c, 'limits', name, name === 'cpu'));
  const o = overheadTotals(pod);
  return { cpu: sum.cpu > 0 ? sum.cpu + o.cpu : 0, memory: sum.memory > 0 ? sum.memory + o.memory : 0 };
}

/**
 * upstream ResourceConfigForPod with CFS quota enforced: Guaranteed pods get shares, quota and
 * memory limit; Burstable pods get shares, and quota / memory limit only when every container
 * declares that limit; BestEffort pods get the minimum shares.
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
