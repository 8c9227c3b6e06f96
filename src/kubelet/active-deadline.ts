/**
 * spec.activeDeadlineSeconds (upstream pkg/kubelet/active_deadline.go, activeDeadlineHandler): a
 * pod that has been active on the node for that long is failed with reason DeadlineExceeded and
 * killed. The handler plays two parts, as upstream:
 *
 *  - PodSyncLoopHandler: the sync tick also syncs a pod whose deadline has passed (upstream
 *    getPodsToSync), so the kill does not wait for the pod's next periodic resync;
 *  - PodSyncHandler: while the status is computed (generateAPIPodStatus) it turns the phase to
 *    Failed with its reason and message and records an event; syncPod then finds the pod terminal
 *    and the pod worker kills it with its grace period.
 *
 * "Active since" is the pod's status.startTime: what the status manager holds, else the API's
 * (both survive a restart of the agent; see status/generate.ts for a static pod's). A pod without
 * a start time has not started and has no deadline yet.
 */
import type { Pod } from '../api/types.js';
import { podUID } from '../api/pod.js';
import type { EventRecorder } from '../events/types.js';
import { podEventRef } from '../events/refs.js';
import type { PodStatusProvider, PodSyncHandler, ShouldEvictResponse } from '../status/index.js';
import type { Clock } from '../util/clock.js';

/** Upstream's reason and message, on the pod status and on the event. */
export const DeadlineExceededReason = 'DeadlineExceeded';
export const DeadlineExceededMessage = 'Pod was active on the node longer than the specified deadline';

/** A module that may ask the sync tick to sync a pod now (upstream lifecycle.PodSyncLoopHandler). */
export interface PodSyncLoopHandler {
  shouldSync(pod: Pod): boolean;
}

export interface ActiveDeadlineDeps {
  /** The latest status we computed (the status manager); the pod's own status when absent. */
  statusProvider: PodStatusProvider;
  recorder: EventRecorder;
  clock: Clock;
}

export type ActiveDeadlineHandler = PodSyncLoopHandler & PodSyncHandler;

/** upstream newActiveDeadlineHandler. */
export function newActiveDeadlineHandler(deps: ActiveDeadlineDeps): ActiveDeadlineHandler {
  return {
    shouldSync: (pod) => pastActiveDeadline(pod, deps),
    shouldEvict(pod): ShouldEvictResponse {
      if (!pastActiveDeadline(pod, deps)) return { evict: false };
      deps.recorder.event(podEventRef(pod), 'Normal', DeadlineExceededReason, DeadlineExceededMessage);
      return { evict: true, reason: DeadlineExceededReason, message: DeadlineExceededMessage };
    },
  };
}

/** The pod has been active for at least spec.activeDeadlineSeconds (upstream pastActiveDeadline). */
function pastActiveDeadline(pod: Pod, deps: ActiveDeadlineDeps): boolean {
  const deadline = pod.spec?.activeDeadlineSeconds;
  if (deadline === undefined || deadline === null) return false;
  const status = deps.statusProvider.getPodStatus(podUID(pod)) ?? pod.status;
  // From the API the time is still its JSON string; from us an ApiTime (a Date).
  const raw: unknown = status?.startTime;
  if (raw === undefined || raw === null || raw === '') return false;
  const start = new Date(raw as string | Date).getTime();
  if (Number.isNaN(start)) return false;
  return deps.clock.now() - start >= deadline * 1000;
}
