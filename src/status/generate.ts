/**
 * Computes the API PodStatus from the pod spec and what the runtime reports (upstream
 * generateAPIPodStatus). Pure: no I/O, no clock except the `now` passed in, so every rule is
 * unit-testable. The steps, in upstream's order:
 *
 *  1. pod IPs (node family first) and container statuses (container-statuses.ts);
 *  2. the phase (phase.ts), then a three-way merge: a phase the status manager or the API
 *     already made terminal stays terminal; reason and message carry over while the phase is
 *     unchanged;
 *  3. a pod sync handler (the active deadline) may fail the pod, with its reason and message;
 *  4. started / ready from the probe results;
 *  5. conditions: those not owned by the kubelet are kept (readiness-gate conditions from the
 *     API, DisruptionTarget from the previous status), then PodReadyToStartContainers,
 *     Initialized, Ready, ContainersReady, PodScheduled (conditions.ts), each with the pod's
 *     generation as observedGeneration;
 *  6. hostIP(s), startTime (kept once set), qosClass.
 *
 * Differences from upstream, on purpose: hostIP/hostIPs (and the pod IPs of a hostNetwork pod)
 * are reported in standalone mode too, where upstream leaves them empty without an apiserver;
 * a pod whose sandbox is gone keeps the IPs it had; a pod first seen with a ready sandbox (the
 * agent restarted, nothing recorded it) starts at that sandbox's creation, where upstream
 * without an apiserver starts it again at the first status.
 */
import type { ApiContainerStatus, ApiPodStatus, Container, Pod, PodCondition } from '../api/types.js';
import type { ContainerRuntimeStatus, ContainerWaiting, PodRuntimeStatus } from '../kuberuntime/types.js';
import type { PodSyncHandler, ShouldEvictResponse } from './types.js';
import { podQOSClass } from '../util/pod-resources.js';
import { markOomKilled } from './oom-killed.js';
import { getPhase, type PodPhase } from './phase.js';
import {
  applyProbeResults,
  convertToAPIContainerStatuses,
  hasAnyActiveRegularContainerStarted,
  type ProbeResults,
} from './container-statuses.js';
import {
  DisruptionTarget,
  KUBELET_CONDITIONS,
  containersReadyCondition,
  podInitializedCondition,
  podReadyCondition,
  podReadyToStartContainersCondition,
  withObservedGeneration,
  withTimes,
} from './conditions.js';
import { apiTime } from '../util/time.js';
import { isTerminalPhase as isTerminal } from '../api/pod.js';

export interface GenerateInput {
  pod: Pod;
  runtime: PodRuntimeStatus;
  /** Failure of the last start attempt per container name (CrashLoopBackOff, ErrImagePull, ...). */
  waiting: ReadonlyMap<string, ContainerWaiting>;
  /** The status we reported before: transition times, startTime, terminal phase, old container states. */
  previous?: ApiPodStatus | undefined;
  hostIP: string;
  /** Every node IP (dual stack); default [hostIP]. */
  hostIPs?: readonly string[];
  now: Date;
  /** The pod is being torn down: its containers will not restart whatever the policy says. */
  podIsTerminal?: boolean;
  /** Readiness and startup probe results; absent = no prober, probes count as passed. */
  probes?: ProbeResults | undefined;
  /** The OOM watcher's lookup: a terminated container it saw OOM-killed reads OOMKilled. */
  wasOomKilled?: ((containerId: string) => boolean) | undefined;
  /** Modules that may fail the pod (upstream PodSyncHandlers: the active deadline). */
  podSyncHandlers?: readonly PodSyncHandler[] | undefined;
  /** In-place resize: the pod's PodResizePending / PodResizeInProgress conditions (allocation manager). */
  resizeConditions?: readonly PodCondition[] | undefined;
  /** In-place resize: a container's allocatedResources and actual resources (allocation manager). */
  containerResources?: ContainerResourcesFn | undefined;
}

export type ContainerResourcesFn = (
  container: Container,
  newest: ContainerRuntimeStatus | undefined,
) => Pick<ApiContainerStatus, 'allocatedResources' | 'resources'>;

/** upstream convertContainerStatusResources: allocated and actual resources on each status. */
function addContainerResources(
  statuses: ApiContainerStatus[],
  containers: readonly Container[],
  runtime: PodRuntimeStatus,
  fn: ContainerResourcesFn | undefined,
): void {
  if (!fn) return;
  for (const s of statuses) {
    const c = containers.find((x) => x.name === s.name);
    if (!c) continue;
    const newest = runtime.containerStatuses.find((x) => x.name === s.name);
    const r = fn(c, newest);
    if (r.allocatedResources) s.allocatedResources = r.allocatedResources;
    if (r.resources) s.resources = r.resources;
  }
}

const isIPv6 = (ip: string): boolean => ip.includes(':');

/** upstream sortPodIPs: the first IP of the node's family, then the first of the other. */
function sortPodIPs(ips: readonly string[], nodeIP: string): string[] {
  const v6First = nodeIP !== '' && isIPv6(nodeIP);
  const primary = ips.find((ip) => isIPv6(ip) === v6First);
  const secondary = ips.find((ip) => isIPv6(ip) !== v6First);
  return [primary, secondary].filter((ip): ip is string => ip !== undefined && ip !== '');
}

/**
 * upstream: a hostNetwork pod takes the node's IPs, but what the runtime reports comes first;
 * the node's other family is added when the runtime gave one family only (#105320).
 */
function hostNetworkPodIPs(fromRuntime: string[], hostIPs: readonly string[]): string[] {
  const ips = fromRuntime.length > 0 ? fromRuntime : hostIPs.slice(0, 1);
  const second = hostIPs[1];
  if (ips.length === 1 && second !== undefined && isIPv6(ips[0]!) !== isIPv6(second)) return [ips[0]!, second];
  return ips;
}

function podIPs(input: GenerateInput, previous: ApiPodStatus | undefined): string[] {
  const { pod, runtime } = input;
  const sandbox = runtime.sandboxStatuses[0];
  const hostNetwork = sandbox?.hostNetwork ?? pod.spec?.hostNetwork === true;
  const hostIPs = (input.hostIPs ?? [input.hostIP]).filter(Boolean);
  const fromRuntime = runtime.ips.length > 0 ? runtime.ips : sandbox ? [sandbox.ip, ...sandbox.additionalIps] : [];
  const ips = sortPodIPs(fromRuntime.filter(Boolean), hostIPs[0] ?? '');
  if (hostNetwork) return hostNetworkPodIPs(ips, hostIPs);
  if (ips.length > 0) return ips;
  return (previous?.podIPs ?? []).map((p) => p.ip).filter(Boolean);
}

/** The first eviction a pod sync handler asks for (upstream stops at the first). */
function firstEviction(pod: Pod, handlers: readonly PodSyncHandler[] | undefined): ShouldEvictResponse | undefined {
  for (const h of handlers ?? []) {
    const r = h.shouldEvict(pod);
    if (r.evict) return r;
  }
  return undefined;
}

/**
 * Where a pod's startTime comes from when we reported none yet: the API's (it survives a restart
 * of the agent, as upstream's status manager reads it), else the oldest ready sandbox of the pod
 * (the runtime keeps it across our restarts: a static pod's active deadline is not reset), else
 * now. A sandbox that is no longer ready belongs to a run that ended: a new incarnation of the
 * UID must not inherit it.
 */
function firstStartTime(input: GenerateInput, now: Date): Date {
  const fromApi = input.pod.status?.startTime;
  if (fromApi !== undefined && fromApi !== null && !Number.isNaN(new Date(fromApi).getTime()))
    return apiTime(new Date(fromApi));
  const created = input.runtime.sandboxStatuses.filter((s) => s.ready && s.createdAt > 0n).map((s) => s.createdAt);
  if (created.length === 0) return now;
  const oldest = created.reduce((a, b) => (b < a ? b : a));
  return apiTime(Number(oldest / 1_000_000n));
}

export function generateAPIPodStatus(input: GenerateInput): ApiPodStatus {
  const { pod, runtime, waiting } = input;
  // upstream oldPodStatus: the status manager's, else the API's (after a restart in apiserver
  // mode the API still has restart counts, start time and transition times).
  const previous = input.previous ?? pod.status;
  const now = apiTime(input.now);
  const apiStatus = pod.status;

  const containerStatuses = convertToAPIContainerStatuses({
    pod,
    runtime,
    previous: previous?.containerStatuses,
    containers: pod.spec?.containers ?? [],
    isInit: false,
    waiting,
  });
  const initContainerStatuses = convertToAPIContainerStatuses({
    pod,
    runtime,
    previous: previous?.initContainerStatuses,
    containers: pod.spec?.initContainers ?? [],
    isInit: true,
    waiting,
  });
  addContainerResources(containerStatuses, pod.spec?.containers ?? [], runtime, input.containerResources);
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  addContainerResources(initContainerStatuses, sidecars, runtime, input.containerResources);

  // upstream: the ephemeral containers' specs as containers, converted as regular ones (sorted by
  // name); they are left out of the phase and the conditions.
  const ephemeralContainerStatuses = convertToAPIContainerStatuses({
    pod,
    runtime,
    previous: previous?.ephemeralContainerStatuses,
    containers: ephemeralContainerSpecs(pod),
    isInit: false,
    waiting,
  });

  let phase: PodPhase = getPhase(
    pod,
    [...containerStatuses, ...initContainerStatuses],
    input.podIsTerminal === true,
    hasAnyActiveRegularContainerStarted(pod, runtime),
  );
  // A terminal phase already reported stays, even against another terminal phase (upstream keeps
  // the old one): an evicted pod whose containers then exit 0 still reads Failed/Evicted.
  if (isTerminal(previous?.phase)) phase = previous!.phase as PodPhase;
  else if (!isTerminal(phase) && isTerminal(apiStatus?.phase)) phase = apiStatus!.phase as PodPhase;
  let reason: string | undefined;
  let message: string | undefined;
  if (phase === (previous?.phase ?? apiStatus?.phase)) {
    reason = previous?.reason || apiStatus?.reason || undefined;
    message = previous?.message || apiStatus?.message || undefined;
  }
  // upstream PodSyncHandlers: a module (the active deadline) fails the pod with its own reason.
  // Not once a phase is terminal on our side or the API's: it stays, and asking again would only
  // repeat the handler's event.
  if (!isTerminal(previous?.phase) && !isTerminal(apiStatus?.phase)) {
    const evict = firstEviction(pod, input.podSyncHandlers);
    if (evict) {
      phase = 'Failed';
      reason = evict.reason;
      message = evict.message;
    }
  }
  // Pods never leave a terminal phase the API reports.
  if (isTerminal(apiStatus?.phase) && phase !== apiStatus!.phase) phase = apiStatus!.phase as PodPhase;

  applyProbeResults(pod, containerStatuses, initContainerStatuses, input.probes);

  const conditions: PodCondition[] = (apiStatus?.conditions ?? []).filter(
    (c) => !KUBELET_CONDITIONS.includes(c.type) && c.type !== DisruptionTarget,
  );
  const disruption = previous?.conditions?.find((c) => c.type === DisruptionTarget);
  if (disruption) conditions.push(disruption);
  const all: ApiContainerStatus[] = [...initContainerStatuses, ...containerStatuses];
  const owned = (c: Parameters<typeof withTimes>[0]) =>
    withObservedGeneration(withTimes(c, previous, now), pod.metadata?.generation);
  conditions.push(owned(podReadyToStartContainersCondition(pod, runtime)));
  conditions.push(owned(podInitializedCondition(pod, all, phase)));
  conditions.push(owned(podReadyCondition(pod, conditions, all, phase)));
  conditions.push(owned(containersReadyCondition(pod, all, phase)));
  conditions.push(owned({ type: 'PodScheduled', status: 'True' }));
  // The resize conditions name the generation whose resize they describe (KEP-5067).
  for (const c of input.resizeConditions ?? [])
    conditions.push(withObservedGeneration({ ...c }, pod.metadata?.generation));

  const hostIPs = (input.hostIPs ?? [input.hostIP]).filter(Boolean);
  const ips = podIPs(input, previous);
  // Upstream's field order (v1.PodStatus), so the JSON reads like the apiserver's.
  const status: ApiPodStatus = { phase, conditions };
  if (message) status.message = message;
  if (reason) status.reason = reason;
  if (hostIPs.length > 0) {
    status.hostIP = hostIPs[0];
    status.hostIPs = hostIPs.slice(0, 2).map((ip) => ({ ip }));
  }
  if (ips.length > 0) {
    status.podIP = ips[0];
    status.podIPs = ips.map((ip) => ({ ip }));
  }
  status.startTime = previous?.startTime ? apiTime(new Date(previous.startTime)) : firstStartTime(input, now);
  if (initContainerStatuses.length > 0) status.initContainerStatuses = initContainerStatuses;
  status.containerStatuses = containerStatuses;
  status.qosClass = podQOSClass(pod);
  if (ephemeralContainerStatuses.length > 0) status.ephemeralContainerStatuses = ephemeralContainerStatuses;
  if (input.wasOomKilled) markOomKilled(status, input.wasOomKilled);
  return status;
}

/** spec.ephemeralContainers as plain containers (without targetContainerName). */
function ephemeralContainerSpecs(pod: Pod): Container[] {
  return (pod.spec?.ephemeralContainers ?? []).map(({ targetContainerName: _target, ...common }) => common);
}

/**
 * The status of a pod refused at admission (upstream Kubelet.rejectPod): Failed with the
 * predicate's reason, the message prefixed "Pod was rejected: ", its QoS class and, as the
 * status manager adds it, a start time. No container ever ran.
 */
export function rejectedPodStatus(pod: Pod, reason: string, message: string, now: Date): ApiPodStatus {
  return {
    phase: 'Failed',
    message: `Pod was rejected: ${message}`,
    reason,
    startTime: apiTime(now),
    qosClass: podQOSClass(pod),
  };
}
