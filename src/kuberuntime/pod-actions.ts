/**
 * computePodActions: what SyncPod must do to bring the runtime to the pod spec (upstream
 * kuberuntime_manager.go computePodActions, kuberuntime/util PodSandboxChanged,
 * kubecontainer.ShouldContainerBeRestarted, doBackOff's check). A pure function of the pod, the
 * runtime status and two read-only views (restart back-off, probe results), so it is tested table
 * by table without a runtime.
 */
import type { Container, Pod, ResourceRequirements } from '../api/types.js';
import { formatPod, podFullName, podUID } from '../api/pod.js';
import type { BackoffView } from '../util/backoff.js';
import { formatGoDuration } from '../util/backoff.js';
import { containerHashMatches, hashContainer } from './hash.js';
import {
  computeInitContainerActions,
  findContainerStatusByName,
  hasAnyRegularContainerCreated,
} from './init-containers.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from './types.js';
import { addUpdate, computeContainerResize, type ContainersToUpdate, type ResizeDecision } from './resize.js';

/** Why a container is killed; the message carries the details. */
export type ContainerKillReason =
  | 'SpecChanged'
  | 'NotInSpec'
  | 'Duplicate'
  | 'LivenessProbe'
  | 'StartupProbe'
  | 'Unknown'
  | 'FailedPostStartHook'
  | 'ResizeRestart';

export interface ContainerToKill {
  id: string;
  name: string;
  /** The spec, when the container is in the pod spec (for its grace period and hooks). */
  container?: Container;
  message: string;
  reason: ContainerKillReason;
}

/** The crash-loop back-off of a container about to be (re)started after a previous run. */
export interface RestartBackOff {
  /** Back-off key: pod name, namespace, UID, container name and spec hash (upstream GetStableKey). */
  key: string;
  /** finishedAt (ms) of the newest exited instance, which the delay is measured from. */
  since: number;
  inBackOff: boolean;
  /** The CrashLoopBackOff waiting message when inBackOff, else ''. */
  message: string;
}

export interface PodActions {
  /** Stop every container and the sandbox(es) first. */
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox to start containers in when no new one is created. */
  sandboxId: string;
  /** Sandbox attempt number (metadata.attempt of a new sandbox). */
  attempt: number;
  /**
   * Indexes in spec.initContainers to start, in spec order: the next init container, and sidecars
   * (restartable init containers) that must be (re)started.
   */
  initContainersToStart: number[];
  /** Indexes in spec.containers to start. */
  containersToStart: number[];
  /**
   * Indexes in spec.ephemeralContainers to start: those the runtime has no instance of. An
   * ephemeral container runs once; it is never restarted (upstream EphemeralContainersToStart).
   */
  ephemeralContainersToStart: number[];
  containersToKill: ContainerToKill[];
  /** By container name, for the containers to start that have run before. */
  backOff: Map<string, RestartBackOff>;
  /** In-place resizes by resource, decreases first (upstream ContainersToUpdate; resize.ts). */
  containersToUpdate: ContainersToUpdate;
}

export type ProbeFailure = 'LivenessProbe' | 'StartupProbe';

export interface PodActionsOptions {
  /** CrashLoopBackOff state; without it nothing is ever in back-off. */
  backOff?: BackoffView;
  /** Liveness/startup failures by container ID, from the prober's results managers. */
  probeFailure?: ((containerId: string) => ProbeFailure | undefined) | undefined;
  /** Whether a container's startup probe succeeded (sidecars wait for it); default: yes. */
  startupProbeSucceeded?: ((containerId: string) => boolean | undefined) | undefined;
  /**
   * The resources last given to the runtime for a container (allocation manager); absent or
   * unknown: the spec's, so nothing is resized.
   */
  actuated?: ((containerName: string) => ResourceRequirements | undefined) | undefined;
}

export function isHostNetworkPod(pod: Pod): boolean {
  return pod.spec?.hostNetwork === true;
}

function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec?.restartPolicy !== 'Never';
}

/**
 * upstream runtimeutil.PodSandboxChanged: whether the pod needs a new sandbox, the attempt for it
 * and the current sandbox ID if any. Sandboxes are newest first (by creation time) and, as
 * upstream, the new attempt is the newest sandbox's attempt + 1, not the highest attempt seen.
 */
function podSandboxChanged(
  pod: Pod,
  status: PodRuntimeStatus,
): { changed: boolean; attempt: number; sandboxId: string } {
  const sandboxes = status.sandboxStatuses;
  if (sandboxes.length === 0) return { changed: true, attempt: 0, sandboxId: '' };
  const newest = sandboxes[0]!;
  const next = newest.attempt + 1;
  // Several ready sandboxes: reconcile by starting over in one new sandbox.
  if (sandboxes.filter((s) => s.ready).length > 1) return { changed: true, attempt: next, sandboxId: newest.id };
  if (!newest.ready) return { changed: true, attempt: next, sandboxId: newest.id };
  // hostNetwork flipped: the network namespace cannot change under running containers.
  if (newest.hostNetwork !== isHostNetworkPod(pod)) return { changed: true, attempt: next, sandboxId: '' };
  if (!isHostNetworkPod(pod) && newest.ip === '') return { changed: true, attempt: next, sandboxId: newest.id };
  return { changed: false, attempt: newest.attempt, sandboxId: newest.id };
}

/** upstream ShouldContainerBeRestarted. */
function shouldContainerBeRestarted(container: Container, pod: Pod, status: PodRuntimeStatus): boolean {
  // A pod being deleted never gets new containers.
  if (pod.metadata?.deletionTimestamp) return false;
  const s = findContainerStatusByName(status, container.name);
  if (!s) return true;
  if (s.state === 'running') return false;
  if (s.state === 'unknown' || s.state === 'created') return true;
  if (pod.spec?.restartPolicy === 'Never') return false;
  if (pod.spec?.restartPolicy === 'OnFailure' && s.exitCode === 0) return false;
  return true;
}

function containerSucceeded(c: Container, status: PodRuntimeStatus): boolean {
  const s = findContainerStatusByName(status, c.name);
  return s !== undefined && s.state === 'exited' && s.exitCode === 0;
}

function emptyActions(changed: boolean, attempt: number, sandboxId: string): PodActions {
  return {
    killPod: changed,
    createSandbox: changed,
    sandboxId,
    attempt,
    initContainersToStart: [],
    containersToStart: [],
    ephemeralContainersToStart: [],
    containersToKill: [],
    backOff: new Map(),
    containersToUpdate: { cpu: [], memory: [] },
  };
}

export function computePodActions(pod: Pod, status: PodRuntimeStatus, opts: PodActionsOptions = {}): PodActions {
  const { changed, attempt, sandboxId } = podSandboxChanged(pod, status);
  const actions = emptyActions(changed, attempt, sandboxId);
  if (changed) computeSandboxRecreation(pod, status, actions);
  else computeContainerActions(pod, status, actions, opts);
  addBackOff(pod, status, actions, opts.backOff);
  return actions;
}

/** The sandbox is (re)created: everything restarts from the first init container. */
function computeSandboxRecreation(pod: Pod, status: PodRuntimeStatus, actions: PodActions): void {
  // restartPolicy Never and containers already ran: the pod is done; only clean up.
  if (!shouldRestartOnFailure(pod) && actions.attempt !== 0 && status.containerStatuses.length !== 0) {
    actions.createSandbox = false;
    return;
  }
  const toStart: number[] = [];
  (pod.spec?.containers ?? []).forEach((c, idx) => {
    if (pod.spec?.restartPolicy === 'OnFailure' && containerSucceeded(c, status)) return;
    toStart.push(idx);
  });
  // Nothing left to run and initialization already happened: no new sandbox, just the kill.
  if (toStart.length === 0 && hasAnyRegularContainerCreated(pod, status)) {
    actions.createSandbox = false;
    return;
  }
  if ((pod.spec?.initContainers ?? []).length > 0) {
    actions.initContainersToStart = [0];
    return;
  }
  actions.containersToStart = toStart;
}

function computeContainerActions(
  pod: Pod,
  status: PodRuntimeStatus,
  actions: PodActions,
  opts: PodActionsOptions,
): void {
  killUnwantedInstances(pod, status, actions);
  actions.ephemeralContainersToStart = ephemeralContainersToStart(pod, status);
  const init = computeInitContainerActions(pod, status, {
    probeFailure: opts.probeFailure,
    startupProbeSucceeded: opts.startupProbeSucceeded,
  });
  actions.initContainersToStart = init.toStart;
  for (const k of init.toKill) {
    actions.containersToKill.push({
      id: k.status.id,
      name: k.status.name,
      container: k.container,
      message: k.message,
      reason: k.reason,
    });
  }
  if (init.killPod) {
    actions.killPod = true;
    return;
  }
  if (!init.initialized) return;
  let keepCount = 0;
  (pod.spec?.containers ?? []).forEach((container, idx) => {
    const d = computeOneContainer(pod, container, status, opts);
    if (d.start) actions.containersToStart.push(idx);
    if (d.kill) actions.containersToKill.push(d.kill);
    if (d.keep) keepCount++;
    for (const r of ['cpu', 'memory'] as const) {
      const u = d.update?.[r];
      if (u) addUpdate(actions.containersToUpdate[r], u, r);
    }
  });
  if (keepCount === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    // Sidecars alone must not keep the pod alive: do not restart them.
    actions.initContainersToStart = [];
  }
}

/**
 * upstream computePodActions: an ephemeral container starts when the runtime has no instance of
 * it, even before initialization completes (it may be what debugs a stuck init container), and
 * never again once it has one, whatever its exit and the restart policy. Not with a new sandbox:
 * the pod starts over without its debug containers, as upstream.
 */
function ephemeralContainersToStart(pod: Pod, status: PodRuntimeStatus): number[] {
  const out: number[] = [];
  (pod.spec?.ephemeralContainers ?? []).forEach((c, idx) => {
    if (!findContainerStatusByName(status, c.name)) out.push(idx);
  });
  return out;
}

/** What computePodActions does with one regular container. */
interface ContainerDecision {
  /** It runs and stays running. */
  keep: boolean;
  /** It is (re)started in this sync. */
  start: boolean;
  /** Its running (or unknown) instance is killed first. */
  kill?: ContainerToKill;
  /** In-place resizes of the running instance. */
  update?: ResizeDecision['update'];
}

/** Decides start/kill/keep for one regular container. */
function computeOneContainer(
  pod: Pod,
  container: Container,
  status: PodRuntimeStatus,
  opts: PodActionsOptions,
): ContainerDecision {
  const s = findContainerStatusByName(status, container.name);
  if (!s || s.state !== 'running') {
    if (!shouldContainerBeRestarted(container, pod, status)) return { keep: false, start: false };
    // Unknown may still be running: kill it so two instances never run side by side.
    if (s?.state === 'unknown') {
      return {
        keep: false,
        start: true,
        kill: {
          id: s.id,
          name: s.name,
          container,
          message: `Container is in "unknown" state, try killing it before restart`,
          reason: 'Unknown',
        },
      };
    }
    return { keep: false, start: true };
  }
  let restart = shouldRestartOnFailure(pod);
  let message: string;
  let reason: ContainerKillReason;
  const probe = opts.probeFailure?.(s.id);
  if (!containerHashMatches(container, s.hash)) {
    message = `Container ${container.name} definition changed`;
    reason = 'SpecChanged';
    // A changed spec restarts the container whatever the restart policy says.
    restart = true;
  } else if (probe === 'LivenessProbe') {
    message = `Container ${container.name} failed liveness probe`;
    reason = probe;
  } else if (probe === 'StartupProbe') {
    message = `Container ${container.name} failed startup probe`;
    reason = probe;
  } else {
    return resizeDecision(container, s, opts);
  }
  if (restart) message = `${message}, will be restarted`;
  return { keep: false, start: restart, kill: { id: s.id, name: s.name, container, message, reason } };
}

/**
 * upstream computePodResizeAction: a running container that keeps its instance may need its
 * resources updated in place, or, when its resizePolicy says RestartContainer, a restart.
 */
function resizeDecision(container: Container, s: ContainerRuntimeStatus, opts: PodActionsOptions): ContainerDecision {
  const actuated = opts.actuated?.(container.name) ?? container.resources;
  const d = computeContainerResize(container, s, actuated);
  if (!d.restart) return { keep: true, start: false, update: d.update };
  const message = `Container ${container.name} resize requires restart`;
  return { keep: false, start: true, kill: { id: s.id, name: s.name, container, message, reason: 'ResizeRestart' } };
}

/**
 * Running containers the spec does not account for: names no longer in the spec, and older
 * running instances of a name whose newest instance is another one (left by an interrupted
 * start). Upstream leaves both to the pod's eventual kill; we stop them now, since nothing
 * restarts, probes or reports them while they hold the ports and files of the real containers
 * (docs/differences.md).
 */
function killUnwantedInstances(pod: Pod, status: PodRuntimeStatus, actions: PodActions): void {
  const names = new Set<string>([
    ...(pod.spec?.containers ?? []).map((c) => c.name),
    ...(pod.spec?.initContainers ?? []).map((c) => c.name),
    ...(pod.spec?.ephemeralContainers ?? []).map((c) => c.name),
  ]);
  const seen = new Set<string>();
  for (const s of status.containerStatuses) {
    const newest = !seen.has(s.name);
    seen.add(s.name);
    if (s.state !== 'running') continue;
    if (!names.has(s.name)) {
      actions.containersToKill.push({
        id: s.id,
        name: s.name,
        message: `Container ${s.name} is not in the pod spec`,
        reason: 'NotInSpec',
      });
    } else if (!newest) {
      actions.containersToKill.push({
        id: s.id,
        name: s.name,
        message: `Container ${s.name} has a newer instance`,
        reason: 'Duplicate',
      });
    }
  }
}

/** upstream GetStableKey: the back-off key of a container spec in a pod. */
export function restartBackOffKey(pod: Pod, container: Container): string {
  return `${podFullName(pod)}_${podUID(pod)}_${container.name}_${hashContainer(container)}`;
}

/** upstream doBackOff's check, without recording anything (SyncPod records the restart). */
function restartBackOff(
  pod: Pod,
  container: Container,
  status: PodRuntimeStatus,
  view: BackoffView | undefined,
): RestartBackOff | undefined {
  const exited = status.containerStatuses.find((s) => s.name === container.name && s.state === 'exited');
  if (!exited) return undefined;
  const key = restartBackOffKey(pod, container);
  const since = finishedAtMs(exited);
  const inBackOff = view?.isInBackOffSince(key, since) ?? false;
  const message = inBackOff
    ? `back-off ${formatGoDuration(view!.get(key))} restarting failed container=${container.name} pod=${formatPod(pod)}`
    : '';
  return { key, since, inBackOff, message };
}

function finishedAtMs(s: ContainerRuntimeStatus): number {
  return (s.finishedAt ?? s.startedAt ?? s.createdAt).getTime();
}

function addBackOff(pod: Pod, status: PodRuntimeStatus, actions: PodActions, view: BackoffView | undefined): void {
  const specs: Container[] = actions.containersToStart.map((i) => pod.spec!.containers[i]!);
  for (const i of actions.initContainersToStart) specs.push(pod.spec!.initContainers![i]!);
  for (const c of specs) {
    const b = restartBackOff(pod, c, status, view);
    if (b) actions.backOff.set(c.name, b);
  }
}
