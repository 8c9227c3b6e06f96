/**
 * API container statuses from the runtime's (upstream convertToAPIContainerStatuses and the
 * prober's UpdatePodStatus):
 *
 *  - every container of the spec gets a status; one the runtime never had waits with reason
 *    ContainerCreating (PodInitializing when the pod has init containers);
 *  - the newest runtime instance is the state (running / created → waiting{} / exited →
 *    terminated with exitCode, reason, message, startedAt, finishedAt, containerID), the one
 *    before it the lastState; restartCount, image, imageID and containerID come from the newest;
 *  - a container the runtime no longer reports keeps its old terminated status; one that was
 *    running and vanished is reported as terminated/ContainerStatusUnknown (exit 137);
 *  - a regular init container the runtime no longer has, once a regular container was created,
 *    is reported terminated/Completed (its record was garbage-collected);
 *  - a container that will be started again (ShouldContainerBeRestarted) and whose last start
 *    failed shows the failure as waiting (CrashLoopBackOff, ErrImagePull, ...) with its previous
 *    death as lastState;
 *  - started: running and (no startup probe, or it succeeded); ready: started and (no
 *    readiness probe, or it succeeded); a regular init container is ready once it exited 0;
 *  - user: the uid, gid and supplemental groups the runtime reports for the newest instance.
 *
 * Regular container statuses are sorted by name, init container statuses follow the spec.
 */
import type { ApiContainerState, ApiContainerStatus, Container, Pod } from '../api/types.js';
import type { ContainerRuntimeStatus, ContainerWaiting, PodRuntimeStatus } from '../kuberuntime/types.js';
import { apiTime } from '../util/time.js';

/** Probe results by container ID; undefined = no result yet. Absent provider = no prober. */
export interface ProbeResults {
  readiness(containerId: string): boolean | undefined;
  startup(containerId: string): boolean | undefined;
}

const ContainerCreating = 'ContainerCreating';
const PodInitializing = 'PodInitializing';
const ContainerStatusUnknown = 'ContainerStatusUnknown';
const InitStatusLost =
  'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally';

const RUNTIME_PREFIX = 'containerd://';

function containerIDString(id: string): string {
  return RUNTIME_PREFIX + id;
}

function stripPrefix(cid: string | undefined): string | undefined {
  if (!cid) return undefined;
  const i = cid.indexOf('://');
  return i >= 0 ? cid.slice(i + 3) : cid;
}

/** Runtime statuses of one container name, newest first (by creation time, as upstream). */
function byNameNewestFirst(statuses: readonly ContainerRuntimeStatus[]): Map<string, ContainerRuntimeStatus[]> {
  const m = new Map<string, ContainerRuntimeStatus[]>();
  for (const s of statuses) {
    const list = m.get(s.name) ?? [];
    list.push(s);
    m.set(s.name, list);
  }
  for (const list of m.values())
    list.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.restartCount - a.restartCount);
  return m;
}

/** The state of one runtime instance (upstream convertContainerStatus). */
function runtimeState(
  cs: ContainerRuntimeStatus,
  old: ApiContainerStatus | undefined,
): { state: ApiContainerState; restartBump: boolean } {
  const cid = containerIDString(cs.id);
  switch (cs.state) {
    case 'running':
      return { state: { running: { startedAt: apiTime(cs.startedAt ?? cs.createdAt) } }, restartBump: false };
    case 'created':
      return { state: { waiting: {} }, restartBump: false };
    case 'exited':
      return {
        state: {
          terminated: {
            exitCode: cs.exitCode,
            // containerd reports Completed / Error / OOMKilled; the same default if a runtime does not.
            reason: cs.reason || (cs.exitCode === 0 ? 'Completed' : 'Error'),
            ...(cs.message ? { message: cs.message } : {}),
            startedAt: (cs.startedAt ? apiTime(cs.startedAt) : null) as unknown as Date,
            finishedAt: (cs.finishedAt ? apiTime(cs.finishedAt) : null) as unknown as Date,
            containerID: cid,
          },
        },
        restartBump: false,
      };
    default:
      if (old?.state?.running) {
        return {
          state: {
            terminated: {
              exitCode: 137,
              reason: ContainerStatusUnknown,
              message: 'The container could not be located when the pod was terminated',
              startedAt: null as unknown as Date,
              finishedAt: null as unknown as Date,
            },
          },
          restartBump: true,
        };
      }
      return { state: { waiting: {} }, restartBump: false };
  }
}

/** upstream ShouldContainerBeRestarted (sidecars always restart while the pod lives). */
function shouldContainerBeRestarted(
  c: Container,
  pod: Pod,
  newest: ContainerRuntimeStatus | undefined,
  isInit: boolean,
): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  if (!newest) return true;
  if (newest.state === 'running') return false;
  if (newest.state === 'unknown' || newest.state === 'created') return true;
  if (isInit && c.restartPolicy === 'Always') return true;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && newest.exitCode === 0) return false;
  return true;
}

function ordered(s: ApiContainerStatus): ApiContainerStatus {
  // Upstream field order, so the JSON reads like the apiserver's.
  const out: ApiContainerStatus = {
    name: s.name,
    state: s.state ?? {},
    lastState: s.lastState ?? {},
    ready: s.ready,
    restartCount: s.restartCount,
    image: s.image,
    imageID: s.imageID,
  };
  if (s.containerID) out.containerID = s.containerID;
  if (s.started !== undefined) out.started = s.started;
  if (s.allocatedResources) out.allocatedResources = s.allocatedResources;
  if (s.resources) out.resources = s.resources;
  if (s.user) out.user = s.user;
  return out;
}

/**
 * upstream convertContainerStatusUser (SupplementalGroupsPolicy, GA in 1.35): the identity the
 * runtime reports for the container's first process; none from a runtime that reports none
 * (containerd 1.6/1.7), an empty user from one that reports no Linux part.
 */
function apiContainerUser(cs: ContainerRuntimeStatus): ApiContainerStatus['user'] {
  if (!cs.user) return undefined;
  const linux = cs.user.linux;
  if (!linux) return {};
  return { linux: { uid: linux.uid, gid: linux.gid, supplementalGroups: [...linux.supplementalGroups] } };
}

export interface ConvertInput {
  pod: Pod;
  runtime: PodRuntimeStatus;
  previous: readonly ApiContainerStatus[] | undefined;
  containers: readonly Container[];
  isInit: boolean;
  /** Failure of the last start attempt per container name (upstream reasonCache). */
  waiting: ReadonlyMap<string, ContainerWaiting>;
}

export function convertToAPIContainerStatuses(input: ConvertInput): ApiContainerStatus[] {
  const { pod, runtime, containers, isInit, waiting } = input;
  const hasInit = (pod.spec?.initContainers?.length ?? 0) > 0;
  const old = new Map((input.previous ?? []).map((s) => [s.name, s]));
  const defaultReason = hasInit ? PodInitializing : ContainerCreating;
  const statuses = new Map<string, ApiContainerStatus>();

  for (const c of containers) {
    const o = old.get(c.name);
    if (o?.state?.terminated) {
      statuses.set(c.name, structuredCloneStatus(o));
      continue;
    }
    statuses.set(c.name, {
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: false,
      restartCount: o?.restartCount ?? 0,
      state: { waiting: { reason: defaultReason } },
      lastState: o?.lastState ?? {},
    });
  }

  const history = byNameNewestFirst(runtime.containerStatuses);
  for (const c of containers) {
    const list = history.get(c.name);
    if (list && list.length > 0) continue;
    // Vanished while running (removed behind our back): show a termination we could not see,
    // so the pod does not fall back to Pending.
    const o = old.get(c.name);
    const s = statuses.get(c.name)!;
    if (!o?.state?.running || !s.state?.waiting || s.state.waiting.reason !== defaultReason || s.lastState?.terminated)
      continue;
    s.lastState = {
      terminated: {
        exitCode: 137,
        reason: ContainerStatusUnknown,
        message: 'The container could not be located when the pod was deleted.  The container used to be Running',
        startedAt: null as unknown as Date,
        finishedAt: null as unknown as Date,
      },
    };
    if (!pod.metadata?.deletionTimestamp) s.restartCount += 1;
  }

  for (const c of containers) {
    const list = history.get(c.name);
    if (!list || list.length === 0) continue;
    const o = old.get(c.name);
    const [cur, prev] = list;
    const { state, restartBump } = runtimeState(cur!, o);
    const s: ApiContainerStatus = {
      name: c.name,
      state,
      lastState: {},
      ready: false,
      restartCount: restartBump ? (o?.restartCount ?? 0) + 1 : cur!.restartCount,
      image: cur!.image || c.image || '',
      imageID: cur!.imageRef,
      containerID: containerIDString(cur!.id),
    };
    const user = apiContainerUser(cur!);
    if (user) s.user = user;
    if (prev) s.lastState = runtimeState(prev, undefined).state;
    statuses.set(c.name, s);
  }

  const regularCreated = isInit && hasAnyRegularContainerCreated(pod, runtime);
  for (const c of containers) {
    const newest = history.get(c.name)?.[0];
    if (isInit && c.restartPolicy !== 'Always' && newest?.state === 'exited' && newest.exitCode === 0) continue;
    const s = statuses.get(c.name)!;
    // upstream: a regular init container whose record is gone (garbage-collected, or a static pod
    // after a restart) ran to completion if a regular container was created after it.
    if (isInit && c.restartPolicy !== 'Always' && !newest && regularCreated && s.state?.waiting) {
      s.state = {
        terminated: {
          exitCode: 0,
          reason: 'Completed',
          message: InitStatusLost,
          startedAt: null as unknown as Date,
          finishedAt: null as unknown as Date,
        },
      };
      continue;
    }
    if (!shouldContainerBeRestarted(c, pod, newest, isInit)) continue;
    const reason = waiting.get(c.name);
    if (!reason) continue;
    if (s.state?.terminated) s.lastState = s.state;
    s.state = { waiting: { reason: reason.reason, ...(reason.message ? { message: reason.message } : {}) } };
  }

  const list = containers.map((c) => statuses.get(c.name)!);
  if (!isInit) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return list;
}

function structuredCloneStatus(s: ApiContainerStatus): ApiContainerStatus {
  return { ...s, state: { ...s.state }, lastState: { ...s.lastState } };
}

/** upstream prober manager isContainerStarted. */
function isStarted(c: Container | undefined, s: ApiContainerStatus, probes: ProbeResults | undefined): boolean {
  if (!s.state?.running) return false;
  const id = stripPrefix(s.containerID);
  if (!probes || !c?.startupProbe || !id) return true;
  return probes.startup(id) === true;
}

function isReady(c: Container | undefined, s: ApiContainerStatus, probes: ProbeResults | undefined): boolean {
  if (!s.state?.running) return false;
  const id = stripPrefix(s.containerID);
  if (!probes || !c?.readinessProbe || !id) return true;
  return probes.readiness(id) === true;
}

/** upstream prober manager UpdatePodStatus: sets started and ready on every status. */
export function applyProbeResults(
  pod: Pod,
  statuses: ApiContainerStatus[],
  initStatuses: ApiContainerStatus[],
  probes: ProbeResults | undefined,
): void {
  for (const s of statuses) {
    const c = pod.spec?.containers?.find((x) => x.name === s.name);
    s.started = isStarted(c, s, probes);
    s.ready = s.started ? isReady(c, s, probes) : false;
  }
  for (const s of initStatuses) {
    const c = pod.spec?.initContainers?.find((x) => x.name === s.name);
    s.started = isStarted(c, s, probes);
    if (c?.restartPolicy !== 'Always') {
      s.ready = s.state?.terminated?.exitCode === 0;
      continue;
    }
    s.ready = s.started ? isReady(c, s, probes) : false;
  }
  for (let i = 0; i < statuses.length; i++) statuses[i] = ordered(statuses[i]!);
  for (let i = 0; i < initStatuses.length; i++) initStatuses[i] = ordered(initStatuses[i]!);
}

/** upstream kuberuntime.HasAnyRegularContainerCreated: the runtime has created a regular container. */
function hasAnyRegularContainerCreated(pod: Pod, runtime: PodRuntimeStatus): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return runtime.containerStatuses.some(
    (c) => names.has(c.name) && (c.state === 'created' || c.state === 'running' || c.state === 'exited'),
  );
}

/** upstream HasAnyActiveRegularContainerStarted: a regular container exists in the newest sandbox. */
export function hasAnyActiveRegularContainerStarted(pod: Pod, runtime: PodRuntimeStatus): boolean {
  const sandbox = runtime.sandboxStatuses[0];
  if (!sandbox) return false;
  const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  return runtime.containerStatuses.some((c) => names.has(c.name) && c.podSandboxId === sandbox.id);
}
