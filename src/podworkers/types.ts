/**
 * Pod workers (upstream podWorkers): one serial worker per pod UID driving the pod through
 * syncing → terminating → terminated. The kubelet implements PodSyncer; the workers decide
 * which of its methods to call and when.
 */
import type { Pod } from '../api/types.js';
import type { PodRuntimeStatus, RunningPod } from '../kuberuntime/types.js';

export type UpdateType = 'create' | 'update' | 'sync' | 'kill';

export interface UpdatePodOptions {
  updateType: UpdateType;
  /** The desired pod; absent when killing a pod known only to the runtime (an orphan). */
  pod?: Pod;
  /** For orphans: what the runtime has. */
  runningPod?: RunningPod;
  /** Kill: a grace period that overrides the pod's (the shortest one wins). */
  gracePeriodSeconds?: number;
  /** Kill: why, for logs and events (Deleted, Evicted, ...). */
  reason?: string;
}

export interface SyncPodResult {
  /** The pod reached a terminal phase: start terminating it. */
  isTerminal: boolean;
  /** Sync again after this long (a container waits in back-off); default: the resync period. */
  requeueAfterMs?: number;
}

/** What the pod workers call; implemented by the Kubelet (upstream podSyncer). */
export interface PodSyncer {
  syncPod(updateType: UpdateType, pod: Pod, status: PodRuntimeStatus | undefined): Promise<SyncPodResult>;
  syncTerminatingPod(pod: Pod, status: PodRuntimeStatus | undefined, gracePeriodSeconds: number): Promise<void>;
  syncTerminatingRuntimePod(running: RunningPod): Promise<void>;
  syncTerminatedPod(pod: Pod, status: PodRuntimeStatus | undefined): Promise<void>;
}

export type PodWorkerState = 'syncing' | 'terminating' | 'terminated';

export interface PodWorkers {
  updatePod(opts: UpdatePodOptions): void;
  isPodTerminationRequested(uid: string): boolean;
  couldHaveRunningContainers(uid: string): boolean;
  /** Forget finished workers of pods no longer desired; returns the state of every known worker. */
  syncKnownPods(desired: readonly Pod[]): Map<string, PodWorkerState>;
  /** Pod UIDs whose resync is due now (the syncLoop's sync tick). */
  takeDueForSync(): string[];
  /** Resolves when every worker is idle (tests, shutdown). */
  idle(): Promise<void>;
}
