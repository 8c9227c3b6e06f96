/**
 * The syncLoop's boundary (upstream pkg/kubelet's SyncHandler and syncLoopIteration inputs): what
 * one iteration receives, and the handler it dispatches to. The Kubelet implements SyncHandler;
 * a test can drive syncLoopIteration (sync-loop.ts) with a fake one.
 */
import type { Pod } from '../api/types.js';
import type { PodUpdate } from '../podconfig/types.js';
import type { PodLifecycleEvent } from '../pleg/types.js';

/** upstream SyncHandler: one method per kind of work the syncLoop hands out. */
export interface SyncHandler {
  handlePodAdditions(pods: Pod[]): void | Promise<void>;
  handlePodUpdates(pods: Pod[]): void;
  handlePodRemoves(pods: Pod[]): void;
  handlePodReconcile(pods: Pod[]): void;
  handlePodSyncs(pods: Pod[]): void;
  handlePodCleanups(): Promise<void>;
}

/** One item of the syncLoop's inbox: upstream's configCh, plegCh, syncCh, housekeepingCh and probe channels. */
export type SyncLoopInput =
  | { kind: 'config'; update: PodUpdate }
  | { kind: 'pleg'; event: PodLifecycleEvent }
  | { kind: 'sync' }
  | { kind: 'housekeeping' }
  | { kind: 'probe'; podUid: string };

/** What an iteration looks up besides the handler: the desired pods and the resyncs that are due. */
export interface SyncLoopView {
  getPodByUID(uid: string): Pod | undefined;
  /** UIDs whose periodic resync is due (upstream getPodsToSync). */
  podsDueForSync(): string[];
  /** upstream cleanUpContainersInPod, after a ContainerDied: queue removal of the pod's surplus dead containers. */
  cleanUpContainersInPod(podUid: string, exitedContainerId: string): void;
}
