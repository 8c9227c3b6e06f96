/**
 * Computes the API PodStatus from the pod spec and what the runtime reports (upstream's
 * generateAPIPodStatus, getPhase and convertToAPIContainerStatuses). Pure: no I/O, no clock
 * except the `now` passed in, so every rule is unit-testable.
 */
import type { ApiContainerState, ApiContainerStatus, ApiPodStatus, Container, Pod, PodCondition } from '../api/types.js';
import type { ContainerRuntimeStatus, ContainerWaiting, PodRuntimeStatus } from '../kuberuntime/types.js';
import { podQOSClass } from './qos.js';

export interface GenerateInput {
  pod: Pod;
  runtime: PodRuntimeStatus;
  /** Waiting reasons from the last SyncPod (CrashLoopBackOff, ErrImagePull, ...) by container name. */
  waiting: ReadonlyMap<string, ContainerWaiting>;
  /** The status we reported before, to keep transition times and startTime stable. */
  previous?: ApiPodStatus;
  hostIP: string;
  now: Date;
  /** Readiness per container id, from probes; absent = ready when running (no probe yet). */
  readiness?: ReadonlyMap<string, boolean>;
}

type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

const RUNTIME_PREFIX = 'containerd://';

function latestByName(statuses: ContainerRuntimeStatus[]): Map<string, ContainerRuntimeStatus[]> {
  const m = new Map<string, ContainerRuntimeStatus[]>();
  for (const s of statuses) {
    const list = m.get(s.name) ?? [];
    list.push(s);
    m.set(s.name, list);
  }
  // Newest instance first: by restart count, then creation time.
  for (const list of m.values()) list.sort((a, b) => b.restartCount - a.restartCount || b.createdAt.getTime() - a.createdAt.getTime());
  return m;
}

function terminatedState(s: ContainerRuntimeStatus): ApiContainerState {
  return {
    terminated: {
      exitCode: s.exitCode,
      reason: s.reason || (s.exitCode === 0 ? 'Completed' : 'Error'),
      ...(s.message ? { message: s.message } : {}),
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      containerID: RUNTIME_PREFIX + s.id,
    },
  };
}

function containerStatus(c: Container, history: ContainerRuntimeStatus[] | undefined, waiting: ContainerWaiting | undefined, readiness: ReadonlyMap<string, boolean> | undefined): ApiContainerStatus {
  const [cur, prev] = history ?? [];
  const base = { name: c.name, image: c.image ?? '', imageID: '', restartCount: 0, ready: false, started: false };
  if (!cur) {
    return { ...base, state: { waiting: { reason: waiting?.reason ?? 'ContainerCreating', ...(waiting?.message ? { message: waiting.message } : {}) } } };
  }
  const status: ApiContainerStatus = {
    ...base,
    imageID: cur.imageRef,
    containerID: RUNTIME_PREFIX + cur.id,
    restartCount: cur.restartCount,
    state: {},
  };
  if (cur.state === 'running') {
    status.state = { running: { startedAt: cur.startedAt } };
    status.started = true;
    status.ready = readiness?.get(cur.id) ?? true;
    if (prev && prev.state === 'exited') status.lastState = terminatedState(prev);
  } else if (cur.state === 'exited') {
    if (waiting) {
      // A dead container about to be restarted (or in back-off) shows as waiting, with the
      // death as lastState — what `kubectl get pods` shows as CrashLoopBackOff.
      status.state = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
      status.lastState = terminatedState(cur);
    } else {
      status.state = terminatedState(cur);
      if (prev && prev.state === 'exited') status.lastState = terminatedState(prev);
    }
  } else {
    status.state = { waiting: { reason: waiting?.reason ?? 'ContainerCreating', ...(waiting?.message ? { message: waiting.message } : {}) } };
  }
  return status;
}

/** Upstream getPhase for regular containers (init container rules come with their issue). */
export function getPhase(pod: Pod, statuses: ApiContainerStatus[], initialized: boolean, initFailed: boolean): Phase {
  if (initFailed) return 'Failed';
  if (!initialized) return 'Pending';
  let waiting = 0, running = 0, stopped = 0, succeeded = 0, unknown = 0;
  for (const c of pod.spec?.containers ?? []) {
    const s = statuses.find((x) => x.name === c.name);
    if (!s) { unknown++; continue; }
    if (s.state?.running) running++;
    else if (s.state?.terminated) { stopped++; if (s.state.terminated.exitCode === 0) succeeded++; }
    else if (s.state?.waiting) { if (s.lastState?.terminated) stopped++; else waiting++; }
    else unknown++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    const policy = pod.spec?.restartPolicy ?? 'Always';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    return policy === 'Never' ? 'Failed' : 'Running';
  }
  return 'Pending';
}

function initProgress(pod: Pod, statuses: ApiContainerStatus[]): { initialized: boolean; failed: boolean } {
  const inits = pod.spec?.initContainers ?? [];
  let failed = false;
  for (const c of inits) {
    const s = statuses.find((x) => x.name === c.name);
    // A sidecar (restartPolicy Always) counts once it has started.
    if (c.restartPolicy === 'Always') { if (!s?.started) return { initialized: false, failed }; continue; }
    const t = s?.state?.terminated;
    if (t?.exitCode === 0) continue;
    if (t && pod.spec?.restartPolicy === 'Never') failed = true;
    return { initialized: false, failed };
  }
  return { initialized: true, failed: false };
}

function condition(type: string, ok: boolean, now: Date, previous: ApiPodStatus | undefined, reason?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = previous?.conditions?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : now;
  return { type, status, lastTransitionTime, ...(reason && !ok ? { reason } : {}) } as PodCondition;
}

export function generateAPIPodStatus(input: GenerateInput): ApiPodStatus {
  const { pod, runtime, waiting, previous, now } = input;
  const byName = latestByName(runtime.containerStatuses);
  const statuses = (pod.spec?.containers ?? []).map((c) => containerStatus(c, byName.get(c.name), waiting.get(c.name), input.readiness));
  const initStatuses = (pod.spec?.initContainers ?? []).map((c) => containerStatus(c, byName.get(c.name), waiting.get(c.name), input.readiness));
  const { initialized, failed } = initProgress(pod, initStatuses);
  const phase = getPhase(pod, statuses, initialized, failed);

  const sandbox = runtime.sandboxStatuses[0];
  const sandboxReady = sandbox?.ready === true;
  const containersReady = statuses.length > 0 && statuses.every((s) => s.ready);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const notReadyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  // A hostNetwork pod's IPs are the node's (upstream: podIPs = hostIPs for host-network pods).
  const hostNetwork = sandbox?.hostNetwork ?? pod.spec?.hostNetwork === true;
  const podIPs = hostNetwork ? [input.hostIP].filter(Boolean) : sandbox ? [sandbox.ip, ...sandbox.additionalIps].filter(Boolean) : [];

  const status: ApiPodStatus = {
    phase,
    conditions: [
      condition('PodReadyToStartContainers', sandboxReady, now, previous),
      condition('Initialized', initialized, now, previous, 'ContainersNotInitialized'),
      condition('Ready', containersReady, now, previous, notReadyReason),
      condition('ContainersReady', containersReady, now, previous, notReadyReason),
      condition('PodScheduled', true, now, previous),
    ],
    hostIP: input.hostIP,
    hostIPs: input.hostIP ? [{ ip: input.hostIP }] : [],
    startTime: previous?.startTime ?? now,
    containerStatuses: statuses,
    qosClass: podQOSClass(pod),
  };
  if (podIPs.length > 0) {
    status.podIP = podIPs[0];
    status.podIPs = podIPs.map((ip) => ({ ip }));
  }
  if (initStatuses.length > 0) status.initContainerStatuses = initStatuses;
  return status;
}
