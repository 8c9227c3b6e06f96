/**
 * upstream killPodNow: the kill function the eviction manager and the node shutdown manager are
 * given. It asks the pod workers to terminate the pod (a shorter grace period wins), reports it
 * Failed with the caller's reason and message, and resolves once its containers have stopped.
 * It lives beside the pod workers, so nothing needs the Kubelet to stop a pod.
 */
import type { Pod } from '../api/types.js';
import { EvictedReason, markTerminatedByKubelet } from '../status/disruption.js';
import { realClock, type Clock } from '../util/clock.js';
import type { PodWorkers } from './types.js';

export type KillPodFunc = (pod: Pod, message: string, gracePeriodSeconds?: number, reason?: string) => Promise<void>;

export function killPodNow(
  podWorkers: Pick<PodWorkers, 'terminatePodAbnormally'>,
  clock: Clock = realClock,
): KillPodFunc {
  return (pod, message, gracePeriodSeconds, reason = EvictedReason) => {
    const now = clock.now();
    return podWorkers.terminatePodAbnormally(pod, {
      evict: true,
      reason,
      statusFn: (status) =>
        markTerminatedByKubelet(status, { reason, message, nowMs: now, generation: pod.metadata?.generation }),
      ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    });
  };
}
