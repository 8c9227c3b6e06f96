import type { ApiPodStatus, Pod } from '../api/types.js';

/** Read-only view for consumers that only look (servers, PLEG-driven status). */
export interface PodStatusProvider {
  getPodStatus(uid: string): ApiPodStatus | undefined;
}

/** Owns the latest API status of every pod (upstream status.Manager). */
export interface StatusManager extends PodStatusProvider {
  setPodStatus(pod: Pod, status: ApiPodStatus): void;
  /** Forget one pod's status (a new incarnation of the UID starts from nothing). */
  removePodStatus(uid: string): void;
  /** Forget pods that are no longer desired. */
  removeOrphanStatuses(keep: ReadonlySet<string>): void;
}

/** What a pod sync handler answers (upstream lifecycle.ShouldEvictResponse). */
export interface ShouldEvictResponse {
  evict: boolean;
  /** Set when evict: the pod's status reason and message. */
  reason?: string;
  message?: string;
}

/**
 * A kubelet module that may fail a pod while its status is computed (upstream
 * lifecycle.PodSyncHandler; the active deadline is the one upstream has).
 */
export interface PodSyncHandler {
  shouldEvict(pod: Pod): ShouldEvictResponse;
}
