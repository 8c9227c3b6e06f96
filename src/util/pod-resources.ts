/**
 * A pod's compute resources, from PARSED quantities, defined once for every subsystem that asks:
 * the QoS class (upstream apis/core/v1/helper/qos GetPodQOS), and the pod's requests and limits
 * (upstream component-helpers resource.PodRequests / PodLimits). Status, the pod cgroups, the
 * containers' OOM scores, eviction and admission all read these, so they cannot disagree: "1" and
 * "1000m" are the same cpu everywhere.
 *
 * Only cpu and memory count. A request left out next to a limit counts as equal to the limit:
 * the apiserver defaults it so, and static pods reach the agent without that defaulting. Pod-level
 * resources (spec.resources, upstream PodLevelResources, on by default since 1.34) replace the
 * containers' sums for the resources they name, as upstream.
 */
import type { Container, Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';
import { kubeletErrorClass } from '../errors.js';
import { parseIntValue, parseMilliValue } from './quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** A malformed quantity in a container's (or the pod's) resources. */
export class ResourceError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

type Kind = 'requests' | 'limits';
type Res = 'cpu' | 'memory';
const COMPUTE: readonly Res[] = ['cpu', 'memory'];
type ResourceList = Record<string, unknown> | undefined;

/** milli-CPU for cpu, bytes for memory (Quantity.MilliValue / Value, rounded up). */
function amount(list: ResourceList, name: Res, where: string, milli = name === 'cpu'): number | undefined {
  const q = list?.[name] as string | number | undefined | null;
  if (q === undefined || q === null) return undefined;
  try {
    return milli ? parseMilliValue(q) : parseIntValue(q);
  } catch (err) {
    throw new ResourceError(`${where}.${name}: ${(err as Error).message}`, { cause: err });
  }
}

function containerAmount(c: Container, kind: Kind, name: Res, milli?: boolean): number | undefined {
  return amount(c.resources?.[kind], name, `container ${c.name}: resources.${kind}`, milli);
}

/** milli-CPU of a container's cpu request or limit (0 when absent). */
export function containerMilliCPU(c: Container, kind: Kind): number {
  return containerAmount(c, kind, 'cpu') ?? 0;
}

/** Bytes of a container's memory request or limit (0 when absent). */
export function containerMemory(c: Container, kind: Kind): number {
  return containerAmount(c, kind, 'memory') ?? 0;
}

/** A request as the apiserver would have defaulted it: the limit when only the limit is set. */
function defaultedRequest(c: Container, name: Res, milli?: boolean): number {
  return containerAmount(c, 'requests', name, milli) ?? containerAmount(c, 'limits', name, milli) ?? 0;
}

export interface PodResourceTotals {
  /** milli-CPU. */
  cpu: number;
  /** bytes. */
  memory: number;
}

/**
 * The regular containers and sidecars add up; a regular init container runs alone (beside the
 * sidecars started before it), so the pod needs the larger of that and the sum (upstream
 * AggregateContainerRequests / AggregateContainerLimits).
 */
function containerTotals(pod: Pod, value: (c: Container, name: Res) => number): PodResourceTotals {
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
    if (isRestartableInitContainer(c)) {
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

/** Is spec.resources set for cpu or memory (upstream IsPodLevelResourcesSet)? */
export function hasPodLevelResources(pod: Pod): boolean {
  const r = pod.spec?.resources;
  return COMPUTE.some((name) => r?.requests?.[name] !== undefined || r?.limits?.[name] !== undefined);
}

/** A pod-level limit (cpu in milli-CPU, memory in bytes unless `milli`), undefined when not set. */
function podLevelLimit(pod: Pod, name: Res, milli?: boolean): number | undefined {
  return amount(pod.spec?.resources?.limits, name, 'spec.resources.limits', milli);
}

/**
 * A pod-level request as the apiserver would have defaulted it (upstream defaultPodRequests):
 * when pod-level limits are set, a missing request becomes the containers' aggregated request,
 * or, when no container requests that resource, the pod-level limit.
 */
function podLevelRequest(pod: Pod, name: Res, milli?: boolean): number | undefined {
  const set = amount(pod.spec?.resources?.requests, name, 'spec.resources.requests', milli);
  if (set !== undefined || Object.keys(pod.spec?.resources?.limits ?? {}).length === 0) return set;
  const aggregated = containerTotals(pod, (c, n) => (n === name ? defaultedRequest(c, n, milli) : 0))[name];
  return aggregated > 0 ? aggregated : podLevelLimit(pod, name, milli);
}

/** spec.resources.limits for cpu and memory (0 when not set). */
export function podLevelLimits(pod: Pod): PodResourceTotals {
  return { cpu: podLevelLimit(pod, 'cpu') ?? 0, memory: podLevelLimit(pod, 'memory') ?? 0 };
}

/** spec.overhead, parsed (and failing) like container resources. */
function overheadTotals(pod: Pod): PodResourceTotals {
  const o = pod.spec?.overhead;
  return { cpu: amount(o, 'cpu', 'spec.overhead') ?? 0, memory: amount(o, 'memory', 'spec.overhead') ?? 0 };
}

/** upstream PodResourcesOptions.ExcludeOverhead. */
export interface PodResourcesOptions {
  excludeOverhead?: boolean;
}

/**
 * upstream resource.PodRequests: the containers' aggregated requests, a pod-level request in
 * their place where one is set, plus the pod overhead (the runtime's own cost of the sandbox
 * counts as the pod's) unless excluded (eviction ranks by the containers' requests alone).
 */
export function podRequests(pod: Pod, opts: PodResourcesOptions = {}): PodResourceTotals {
  const sum = containerTotals(pod, (c, name) => defaultedRequest(c, name));
  if (hasPodLevelResources(pod)) {
    for (const name of COMPUTE) sum[name] = podLevelRequest(pod, name) ?? sum[name];
  }
  if (opts.excludeOverhead) return sum;
  const o = overheadTotals(pod);
  return { cpu: sum.cpu + o.cpu, memory: sum.memory + o.memory };
}

/**
 * upstream resource.PodLimits: the containers' aggregated limits, a pod-level limit in their
 * place where one is set, plus the pod overhead, added only to a resource that has a limit at
 * all (an unlimited pod stays unlimited).
 */
export function podLimits(pod: Pod): PodResourceTotals {
  const sum = containerTotals(pod, (c, name) => containerAmount(c, 'limits', name) ?? 0);
  if (hasPodLevelResources(pod)) {
    for (const name of COMPUTE) sum[name] = podLevelLimit(pod, name) ?? sum[name];
  }
  const o = overheadTotals(pod);
  return { cpu: sum.cpu > 0 ? sum.cpu + o.cpu : 0, memory: sum.memory > 0 ? sum.memory + o.memory : 0 };
}

/** Requests and limits as the QoS class adds them: positive values only, in exact milli-units. */
interface QOSSums {
  requests: Map<Res, number>;
  limits: Map<Res, number>;
  /** Every container (or the pod level) has a positive cpu and memory limit. */
  allLimited: boolean;
}

function addPositive(m: Map<Res, number>, name: Res, v: number | undefined): boolean {
  if (v === undefined || v <= 0) return false;
  m.set(name, (m.get(name) ?? 0) + v);
  return true;
}

/** upstream collectPodLevelResources. */
function podLevelSums(pod: Pod): QOSSums {
  const s: QOSSums = { requests: new Map(), limits: new Map(), allLimited: true };
  for (const name of COMPUTE) {
    addPositive(s.requests, name, podLevelRequest(pod, name, true));
    if (!addPositive(s.limits, name, podLevelLimit(pod, name, true))) s.allLimited = false;
  }
  return s;
}

/** upstream collectContainerLevelResources: regular and init containers, a plain sum. */
function containerLevelSums(pod: Pod): QOSSums {
  const s: QOSSums = { requests: new Map(), limits: new Map(), allLimited: true };
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const name of COMPUTE) {
      addPositive(s.requests, name, defaultedRequest(c, name, true));
      if (!addPositive(s.limits, name, containerAmount(c, 'limits', name, true))) s.allLimited = false;
    }
  }
  return s;
}

/**
 * upstream ComputePodQOS: BestEffort when nothing requests or limits cpu or memory; Guaranteed
 * when everything has a cpu and a memory limit and the requests add up to the limits; otherwise
 * Burstable. Quantities are compared parsed ("1" equals "1000m"), zero counts as unset.
 */
export function computePodQOSClass(pod: Pod): QOSClass {
  const { requests, limits, allLimited } = hasPodLevelResources(pod) ? podLevelSums(pod) : containerLevelSums(pod);
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  const equal = requests.size === limits.size && [...requests].every(([name, req]) => limits.get(name) === req);
  return allLimited && equal ? 'Guaranteed' : 'Burstable';
}

const QOS_CLASSES: readonly string[] = ['Guaranteed', 'Burstable', 'BestEffort'];

/**
 * upstream GetPodQOS: the class the apiserver recorded in status.qosClass when there is one (it
 * never changes, even when an in-place resize changes the resources), else computed.
 */
export function podQOSClass(pod: Pod): QOSClass {
  const recorded = pod.status?.qosClass;
  return recorded !== undefined && QOS_CLASSES.includes(recorded) ? (recorded as QOSClass) : computePodQOSClass(pod);
}
