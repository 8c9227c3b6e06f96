/**
 * The status of a pod the kubelet stops on its own (upstream killPodNow's status function, used
 * by eviction and graceful node shutdown): phase Failed with the reason and message, and a
 * DisruptionTarget condition (reason TerminationByKubelet) in front of the others.
 */
import type { ApiPodStatus } from '../api/types.js';
import { apiTime } from '../util/time.js';
import { DisruptionTarget } from './conditions.js';

/** Upstream's eviction reason (eviction.Reason). */
export const EvictedReason = 'Evicted';
/** The DisruptionTarget reason the kubelet sets (v1.PodReasonTerminationByKubelet). */
export const TerminationByKubelet = 'TerminationByKubelet';

export function markTerminatedByKubelet(status: ApiPodStatus, reason: string, message: string, nowMs: number): void {
  status.phase = 'Failed';
  status.reason = reason;
  status.message = message;
  const conditions = (status.conditions ?? []).filter((c) => c.type !== DisruptionTarget);
  conditions.unshift({
    type: DisruptionTarget,
    status: 'True',
    lastProbeTime: null as unknown as Date,
    lastTransitionTime: apiTime(nowMs),
    reason: TerminationByKubelet,
    message,
  });
  status.conditions = conditions;
}
