/**
 * The kubelet-owned pod conditions (upstream pkg/kubelet/status/generate.go), with reasons and
 * messages worded as upstream's:
 *
 *  - PodReadyToStartContainers: True once a sandbox with networking exists and no new one is
 *    needed (runtimeutil.PodSandboxChanged is false).
 *  - Initialized: True when every regular init container exited 0 and every sidecar started,
 *    or a regular container has already started; ContainersNotInitialized otherwise; True with
 *    PodCompleted for a Succeeded pod.
 *  - ContainersReady: every sidecar and regular container ready; ContainersNotReady with
 *    "containers with unready status: [a b]"; PodCompleted / PodFailed in terminal phases.
 *  - Ready: ContainersReady, then the readiness gates (ReadinessGatesNotReady).
 *  - PodScheduled: always True (the pod is on this node).
 *
 * lastTransitionTime is kept from the previous status while the condition's status is
 * unchanged (upstream status manager updateLastTransitionTime); lastProbeTime is null. Each
 * carries the metadata.generation of the pod it was computed for as observedGeneration
 * (upstream CalculatePodConditionObservedGeneration, PodObservedGenerationTracking locked on).
 */
import type { ApiContainerStatus, ApiPodStatus, Pod, PodCondition } from '../api/types.js';
import type { PodRuntimeStatus } from '../kuberuntime/types.js';
import type { PodPhase } from './phase.js';
import { apiTime } from '../util/time.js';

const PodCompleted = 'PodCompleted';
const PodFailedReason = 'PodFailed';
const ContainersNotReady = 'ContainersNotReady';
const ContainersNotInitialized = 'ContainersNotInitialized';
const ReadinessGatesNotReady = 'ReadinessGatesNotReady';

/** Condition types the kubelet owns and regenerates on every status (upstream PodConditionsByKubelet). */
export const KUBELET_CONDITIONS: readonly string[] = [
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodReadyToStartContainers',
  // In-place resize (GA in 1.35): the allocation manager's, given by GenerateInput.resizeConditions.
  'PodResizePending',
  'PodResizeInProgress',
];
/** Set by the kubelet on eviction and kept from then on (upstream PodConditionSharedByKubelet). */
export const DisruptionTarget = 'DisruptionTarget';

interface Cond {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  message?: string;
}

/** Go's %s of a []string: "[a b]". */
const goList = (names: string[]): string => `[${names.join(' ')}]`;

function find(statuses: readonly ApiContainerStatus[], name: string): ApiContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

/** upstream runtimeutil.PodSandboxChanged, reduced to "is a new sandbox needed". */
function podSandboxChanged(pod: Pod, runtime: PodRuntimeStatus): boolean {
  const sandboxes = runtime.sandboxStatuses;
  if (sandboxes.length === 0) return true;
  if (sandboxes.filter((s) => s.ready).length > 1) return true;
  const latest = sandboxes[0]!;
  if (!latest.ready) return true;
  const hostNetwork = pod.spec?.hostNetwork === true;
  if (latest.hostNetwork !== hostNetwork) return true;
  if (!hostNetwork && latest.ip === '') return true;
  return false;
}

export function podReadyToStartContainersCondition(pod: Pod, runtime: PodRuntimeStatus): Cond {
  return { type: 'PodReadyToStartContainers', status: podSandboxChanged(pod, runtime) ? 'False' : 'True' };
}

/** upstream HasAnyRegularContainerStarted (API statuses: running or terminated). */
function anyRegularContainerStarted(pod: Pod, statuses: readonly ApiContainerStatus[]): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return statuses.some(
    (s) => names.has(s.name) && (s.state?.running !== undefined || s.state?.terminated !== undefined),
  );
}

export function podInitializedCondition(pod: Pod, statuses: readonly ApiContainerStatus[], phase: PodPhase): Cond {
  const unknown: string[] = [];
  const incomplete: string[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    const s = find(statuses, c.name);
    if (!s) {
      unknown.push(c.name);
      continue;
    }
    const done = c.restartPolicy === 'Always' ? s.started === true : s.ready;
    if (!done) incomplete.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0)
    return { type: 'Initialized', status: 'True', reason: PodCompleted };
  if (anyRegularContainerStarted(pod, statuses)) return { type: 'Initialized', status: 'True' };
  const msgs: string[] = [];
  if (unknown.length > 0) msgs.push(`containers with unknown status: ${goList(unknown)}`);
  if (incomplete.length > 0) msgs.push(`containers with incomplete status: ${goList(incomplete)}`);
  if (msgs.length > 0)
    return { type: 'Initialized', status: 'False', reason: ContainersNotInitialized, message: msgs.join(', ') };
  return { type: 'Initialized', status: 'True' };
}

export function containersReadyCondition(pod: Pod, statuses: readonly ApiContainerStatus[], phase: PodPhase): Cond {
  const unknown: string[] = [];
  const unready: string[] = [];
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  for (const c of [...sidecars, ...(pod.spec?.containers ?? [])]) {
    const s = find(statuses, c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  if (phase === 'Succeeded' && unknown.length === 0)
    return { type: 'ContainersReady', status: 'False', reason: PodCompleted };
  if (phase === 'Failed') return { type: 'ContainersReady', status: 'False', reason: PodFailedReason };
  const msgs: string[] = [];
  if (unknown.length > 0) msgs.push(`containers with unknown status: ${goList(unknown)}`);
  if (unready.length > 0) msgs.push(`containers with unready status: ${goList(unready)}`);
  if (msgs.length > 0)
    return { type: 'ContainersReady', status: 'False', reason: ContainersNotReady, message: msgs.join(', ') };
  return { type: 'ContainersReady', status: 'True' };
}

export function podReadyCondition(
  pod: Pod,
  conditions: readonly PodCondition[],
  statuses: readonly ApiContainerStatus[],
  phase: PodPhase,
): Cond {
  const cr = containersReadyCondition(pod, statuses, phase);
  if (cr.status !== 'True') return { ...cr, type: 'Ready' };
  const msgs: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) msgs.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== 'True')
      msgs.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  if (msgs.length > 0)
    return { type: 'Ready', status: 'False', reason: ReadinessGatesNotReady, message: msgs.join(', ') };
  return { type: 'Ready', status: 'True' };
}

/** A condition with upstream's field order, lastProbeTime null and a stable transition time. */
export function withTimes(c: Cond, previous: ApiPodStatus | undefined, now: Date): PodCondition {
  const old = previous?.conditions?.find((x) => x.type === c.type);
  // A status read back from the API carries RFC 3339 strings, not Dates.
  const lastTransitionTime =
    old && old.status === c.status && old.lastTransitionTime ? apiTime(new Date(old.lastTransitionTime)) : now;
  const out: PodCondition = {
    type: c.type,
    status: c.status,
    lastProbeTime: null as unknown as Date,
    lastTransitionTime,
  };
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

/**
 * upstream CalculatePodConditionObservedGeneration with the gate on: `c` with the pod's
 * generation after its type (upstream's field order); a pod without one (0) leaves it out.
 */
export function withObservedGeneration(c: PodCondition, generation: number | undefined): PodCondition {
  if (!generation) return c;
  const { type, observedGeneration: _old, ...rest } = c;
  return { type, observedGeneration: generation, ...rest };
}

/**
 * upstream status.NeedToReconcilePodReadiness: a pod with readiness gates whose reported Ready
 * condition (status or message) differs from the one its gates and containers now give.
 */
export function needToReconcilePodReadiness(pod: Pod): boolean {
  if ((pod.spec?.readinessGates ?? []).length === 0) return false;
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === 'Ready');
  if (!current) return false;
  const wanted = podReadyCondition(
    pod,
    conditions,
    pod.status?.containerStatuses ?? [],
    (pod.status?.phase ?? 'Pending') as PodPhase,
  );
  return current.status !== wanted.status || (current.message ?? '') !== (wanted.message ?? '');
}
