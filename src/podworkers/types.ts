/**
 * Pod workers (upstream podWorkers): one serial worker per pod UID driving the pod through
 * syncing → terminating → terminated → finished. The kubelet implements PodSyncer; the workers
 * decide which of its methods to call and when. The states and their allowed edges are in
 * states.ts, the driver that runs them in pod-workers.ts.
 */
import type { ApiPodStatus, Pod } from '../api/types.js';
import type { PodRuntimeStatus, RunningPod } from '../kuberuntime/types.js';

export type UpdateType = 'create' | 'update' | 'sync' | 'kill';

/** Amends the status a terminating pod reports (eviction: phase Failed, reason Evicted). */
export type PodStatusFunc = (status: ApiPodStatus) => void;

/** Options of a kill (upstream KillPodOptions + TerminatePodOptions). */
export interface KillPodOptions {
  /** Overrides the pod's grace period; the shortest request of all wins (upstream GracePeriodSecondsOverride). */
  gracePeriodSeconds?: number;
  /** The kubelet evicts the pod (upstream Evict). */
  evict?: boolean;
  /** Applied to the pod's status when its termination starts and when it ends. */
  statusFn?: PodStatusFunc;
  /** Called once every container has stopped (upstream CompletedCh), or at once if that already happened. */
  onTerminated?: () => void;
  /** Why, for logs (Deleted, Evicted, removed from its source, ...). */
  reason?: string;
}

export interface UpdatePodOptions {
  updateType: UpdateType;
  /** The desired pod; absent when killing a pod known only to the runtime (an orphan). */
  pod?: Pod;
  /** For orphans: what the runtime has. Only a kill is accepted for such a pod. */
  runningPod?: RunningPod;
  /** Only for kills. */
  killPodOptions?: KillPodOptions;
}

export interface SyncPodResult {
  /** The pod reached a terminal phase: start terminating it. */
  isTerminal: boolean;
  /** Sync again after this long (a container waits in back-off); default: the resync period. */
  requeueAfterMs?: number;
  /**
   * Run once the worker has recorded the sync's end (upstream postSync): a relist requested here
   * starts after that time, so its status is the first the next sync may act on.
   */
  postSync?: () => void;
}

/** Handed to every PodSyncer call: aborted when the work is superseded (a kill, a shorter grace). */
export interface SyncContext {
  signal: AbortSignal;
}

/** How a terminating pod is stopped: upstream SyncTerminatingPod's gracePeriod and podStatusFn. */
export interface TerminationOptions {
  gracePeriodSeconds: number;
  /** Amends the status reported while the pod terminates (e.g. Evicted). */
  statusFn: PodStatusFunc | undefined;
}

/** What the pod workers call; implemented by the Kubelet (upstream podSyncer). */
export interface PodSyncer {
  syncPod(
    ctx: SyncContext,
    updateType: UpdateType,
    pod: Pod,
    status: PodRuntimeStatus | undefined,
  ): Promise<SyncPodResult>;
  /**
   * Stop every container with `gracePeriodSeconds`. May be superseded by a call with a shorter
   * grace period while it runs (its context is then aborted and it is no longer awaited).
   * Resolves with the runtime status it read after the kill, when it read one: the cleanup that
   * follows needs one observed after the kill, and this is one (upstream's TODO in
   * SyncTerminatingPod: keep the terminal status rather than read it again).
   */
  syncTerminatingPod(
    ctx: SyncContext,
    pod: Pod,
    status: PodRuntimeStatus | undefined,
    termination: TerminationOptions,
  ): Promise<PodRuntimeStatus | void>;
  syncTerminatingRuntimePod(ctx: SyncContext, running: RunningPod): Promise<void>;
  /** `status` is a runtime status observed after the kill, or undefined when none is cached yet. */
  syncTerminatedPod(ctx: SyncContext, pod: Pod, status: PodRuntimeStatus | undefined): Promise<void>;
}

/**
 * syncing: set up and kept running; terminating: termination requested, containers being
 * stopped; terminated: nothing runs, resources being cleaned up; finished: done, takes no work.
 */
export type PodWorkerState = 'syncing' | 'terminating' | 'terminated' | 'finished';

export interface PodWorkers {
  updatePod(opts: UpdatePodOptions): void;
  /** Termination was requested (the worker is terminating, terminated or finished). */
  isPodTerminationRequested(uid: string): boolean;
  /** Every container is known to be stopped (terminated or finished). */
  isPodKnownTerminated(uid: string): boolean;
  /**
   * Containers may run: the worker is syncing or terminating. False for a UID no worker knows,
   * also before the first syncKnownPods (upstream CouldHaveRunningContainers says true then).
   */
  couldHaveRunningContainers(uid: string): boolean;
  /**
   * upstream ShouldPodContentBeRemoved: the pod was evicted, or deleted (a deletion request, a
   * runtime-only kill, or no longer desired at syncKnownPods) and is terminated, so all of its dead
   * containers may go; a pod no worker knows may too once syncKnownPods has run.
   */
  shouldPodContentBeRemoved(uid: string): boolean;
  /**
   * Forget finished workers of pods no longer desired (or asked to restart); start terminating
   * workers of pods no longer desired. Returns the state of every worker kept.
   */
  syncKnownPods(desired: readonly Pod[]): Map<string, PodWorkerState>;
  /**
   * The eviction hook (upstream TerminatePodAbnormallyAndWait): kill the pod with these options
   * and resolve once its containers have stopped; reject after max(10 s, 1.5 × grace).
   */
  terminatePodAbnormally(pod: Pod, opts: KillPodOptions): Promise<void>;
  /** Pod UIDs whose resync is due now (the syncLoop's sync tick). */
  takeDueForSync(): string[];
  /** Resolves when every worker is idle, abandoned kills included (tests, shutdown). */
  idle(): Promise<void>;
}
