/**
 * The pod worker state machine, in one place (upstream UpdatePod's decisions and the
 * complete* functions of pod_workers.go; Krustlet's explicit states). Every state declares the
 * states it may move to (EDGES); each state's handlers return a transition whose target the
 * compiler checks against that list, and the driver checks it again at run time. Pure: no I/O,
 * no clock, no logging — the driver (pod-workers.ts) applies the decisions.
 *
 *   syncing ──kill / deletion / terminal phase / eviction / orphan / pod completed──► terminating
 *   terminating ──containers stopped──► terminated        (an orphan runtime pod: ──► finished)
 *   terminated ──cleaned up──► finished
 *   terminating / terminated ──► finished at once: a static pod killed before it could start
 *
 * Within terminating, a shorter grace period restarts the kill. A create arriving while
 * termination is under way is remembered (restartRequested) and honoured once finished.
 */
import type { Pod } from '../api/types.js';
import { isTerminalPhase, podTerminationGracePeriodSeconds } from '../api/pod.js';
import type { KillPodOptions, PodWorkerState, UpdatePodOptions } from './types.js';

export const EDGES = {
  syncing: ['syncing', 'terminating'],
  terminating: ['terminating', 'terminated', 'finished'],
  terminated: ['terminated', 'finished'],
  finished: [],
} as const satisfies { readonly [S in PodWorkerState]: readonly PodWorkerState[] };

/** The states `S` may move to. */
export type Successor<S extends PodWorkerState> = (typeof EDGES)[S][number];

export function isAllowedEdge(from: PodWorkerState, to: PodWorkerState): boolean {
  return (EDGES[from] as readonly PodWorkerState[]).includes(to);
}

/** Why termination was requested (upstream: deleted, evicted, terminal phase, orphaned, completed). */
export type TerminationCause = 'deleted' | 'terminal-phase' | 'evicted' | 'removed' | 'orphaned' | 'completed';

/** What the handlers read of a worker. */
export interface WorkerView {
  readonly state: PodWorkerState;
  /** The latest pod spec, if any (orphans have none). */
  readonly pod: Pod | undefined;
  /** The effective grace period once terminating. */
  readonly gracePeriod: number | undefined;
  /** Termination runs for a runtime-only pod (no spec): the orphan kill. */
  readonly orphan: boolean;
}

export type UpdateDecision<S extends PodWorkerState> =
  | { kind: 'ignore'; why: string }
  /** A create for a UID that is terminating: honour it once the worker has finished. */
  | { kind: 'restart-requested' }
  /** A create for a finished UID: a new incarnation starts from scratch. */
  | { kind: 'new-incarnation' }
  | {
      kind: 'accept';
      to: Successor<S>;
      /** Set when this update requests termination. */
      cause?: TerminationCause;
      /** The effective grace period when `to` is terminating. */
      gracePeriod?: number;
      /** Abort the work in flight: a kill preempts a sync, a shorter grace preempts a longer kill. */
      preempt: boolean;
      /** This update is a wish to stop (a kill or a deletion): forget an earlier restart request. */
      cancelsRestart: boolean;
    };

/** The outcome of a state's work, as the driver reports it back. */
export type WorkDone = { state: 'syncing'; isTerminal: boolean } | { state: 'terminating' } | { state: 'terminated' };

export interface StateHandlers<S extends PodWorkerState> {
  onUpdate(w: WorkerView, u: UpdatePodOptions): UpdateDecision<S>;
  /** The state after this state's work succeeded, and the cause when that starts termination. */
  onWorkDone(w: WorkerView, done: WorkDone): { to: Successor<S>; cause?: TerminationCause; gracePeriod?: number };
}

/**
 * upstream calculateEffectiveGracePeriod: the grace period only ever shrinks. The apiserver's
 * deletionGracePeriodSeconds and a kill option override the current value when shorter (or
 * when there is none yet); without either, the pod's terminationGracePeriodSeconds; never
 * below 1 s. `shortened` is true when an existing value got smaller.
 */
export function effectiveGracePeriod(
  current: number | undefined,
  pod: Pod | undefined,
  kill: KillPodOptions | undefined,
): { gracePeriod: number; shortened: boolean } {
  let grace = current ?? 0;
  let overridden = false;
  const deletion = pod?.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null && (grace === 0 || deletion < grace)) {
    grace = deletion;
    overridden = true;
  }
  const override = kill?.gracePeriodSeconds;
  if (override !== undefined && (grace === 0 || override < grace)) {
    grace = override;
    overridden = true;
  }
  if (!overridden && grace === 0) grace = podTerminationGracePeriodSeconds(pod);
  if (grace < 1) grace = 1;
  return { gracePeriod: grace, shortened: current !== undefined && current !== 0 && current !== grace };
}

const isRuntimeOnly = (u: UpdatePodOptions): boolean => u.pod === undefined && u.runningPod !== undefined;
const wantsStop = (u: UpdatePodOptions): boolean =>
  u.updateType === 'kill' || u.pod?.metadata?.deletionTimestamp !== undefined;

const syncing: StateHandlers<'syncing'> = {
  onUpdate(w, u) {
    if (isRuntimeOnly(u) && u.updateType !== 'kill') return { kind: 'ignore', why: 'runtime pods can only be killed' };
    const pod = u.pod ?? w.pod;
    let cause: TerminationCause | undefined;
    if (isRuntimeOnly(u)) cause = 'orphaned';
    else if (pod?.metadata?.deletionTimestamp) cause = 'deleted';
    else if (isTerminalPhase(pod?.status?.phase)) cause = 'terminal-phase';
    else if (u.updateType === 'kill') cause = u.killPodOptions?.evict ? 'evicted' : 'removed';
    if (!cause) return { kind: 'accept', to: 'syncing', preempt: false, cancelsRestart: false };
    // A runtime-only kill of a pod we have a spec for uses the spec (upstream), with a 1 s grace
    // only when there is nothing else to go by.
    const kill: KillPodOptions | undefined =
      cause === 'orphaned' && !pod
        ? { ...u.killPodOptions, gracePeriodSeconds: u.killPodOptions?.gracePeriodSeconds ?? 1 }
        : u.killPodOptions;
    const { gracePeriod } = effectiveGracePeriod(undefined, pod, kill);
    return { kind: 'accept', to: 'terminating', cause, gracePeriod, preempt: true, cancelsRestart: true };
  },
  onWorkDone(w, done) {
    if (done.state === 'syncing' && done.isTerminal) {
      return {
        to: 'terminating',
        cause: 'completed',
        gracePeriod: effectiveGracePeriod(undefined, w.pod, undefined).gracePeriod,
      };
    }
    return { to: 'syncing' };
  },
};

const terminating: StateHandlers<'terminating'> = {
  onUpdate(w, u) {
    // Checked first: a runtime-only create is no request to restart the pod (upstream ignores it).
    if (isRuntimeOnly(u) && u.updateType !== 'kill') return { kind: 'ignore', why: 'runtime pods can only be killed' };
    if (u.updateType === 'create') return { kind: 'restart-requested' };
    const pod = u.pod ?? w.pod;
    const { gracePeriod, shortened } = effectiveGracePeriod(w.gracePeriod, pod, u.killPodOptions);
    return { kind: 'accept', to: 'terminating', gracePeriod, preempt: shortened, cancelsRestart: wantsStop(u) };
  },
  onWorkDone(w) {
    // An orphan has no API representation: once its containers are gone there is nothing left.
    return { to: w.orphan ? 'finished' : 'terminated' };
  },
};

const terminated: StateHandlers<'terminated'> = {
  onUpdate(_w, u) {
    if (isRuntimeOnly(u))
      return { kind: 'ignore', why: 'pod is terminated and waiting for cleanup, runtime-only update ignored' };
    if (u.updateType === 'create') return { kind: 'restart-requested' };
    return { kind: 'accept', to: 'terminated', preempt: false, cancelsRestart: wantsStop(u) };
  },
  onWorkDone() {
    return { to: 'finished' };
  },
};

const finished: StateHandlers<'finished'> = {
  onUpdate(_w, u) {
    if (u.updateType === 'create' && u.pod) return { kind: 'new-incarnation' };
    return { kind: 'ignore', why: 'pod is finished processing, no further updates' };
  },
  onWorkDone() {
    throw new Error('a finished pod worker has no work');
  },
};

export const HANDLERS: { readonly [S in PodWorkerState]: StateHandlers<S> } = {
  syncing,
  terminating,
  terminated,
  finished,
};

/**
 * A static pod terminated before it was allowed to start (it waited behind another instance with
 * the same full name) has nothing to stop and nothing to clean up: it finishes without calling the
 * syncer (upstream cleanupUnstartedPod). The cleanup would report a final status for a pod that
 * never ran, under the full name (mirror pod) of the instance that does. A pod seen in the
 * runtime is driven through the kill all the same (upstream observedRuntime).
 */
export function finishesWithoutWork(w: {
  readonly static: boolean;
  readonly started: boolean;
  readonly observedRuntime: boolean;
}): boolean {
  return w.static && !w.started && !w.observedRuntime;
}

/**
 * The state of a UID seen for the first time: syncing, except for a pod the API already reports
 * terminal whose runtime shows nothing running (a kubelet restart after it finished): terminated,
 * so only the cleanup runs (upstream: isPodStatusCacheTerminal).
 */
export function initialState(u: UpdatePodOptions, runtimeHasNothingRunning: boolean): 'syncing' | 'terminated' {
  return u.pod && isTerminalPhase(u.pod.status?.phase) && runtimeHasNothingRunning ? 'terminated' : 'syncing';
}
