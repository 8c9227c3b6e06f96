/**
 * The status of a pod the kubelet stops on its own (upstream killPodNow's status function, used
 * by eviction and graceful node shutdown): phase Failed with the reason and message, and a
 * DisruptionTarget condition (reason TerminationByKubelet) in front of the others, with the
 * pod's generation as its observedGeneration (upstream CalculatePodConditionObservedGeneration).
 */
import type { ApiPodStatus } from '../api/types.js';
import { apiTime } from '../util/time.js';
import { DisruptionTarget, withObservedGeneration } from './conditions.js';

/** Upstream's eviction reason (eviction.Reason). */
export const EvictedReason = 'Evicted';
/** The DisruptionTarget reason the kubelet sets (v1.PodReasonTerminationByKubelet). */
export const TerminationByKubelet = 'TerminationByKubelet';

/** Why and when the kubelet stops the pod, and the generation of the pod it stops. */
export interface KubeletTermination {
  reason: string;
  message: string;
  nowMs: number;
  /** The pod's metadata.generation (0 or absent: none). */
  generation?: number | undefined;
}

export function markTerminatedByKubelet(
  status: ApiPodStatus,
  { reason, message, nowMs, generation }: KubeletTermination,
): void {
  status.phase = 'Failed';
  status.reason = reason;
  status.message = message;
  const conditions = (status.conditions ?? []).filter((c) => c.type !== DisruptionTarget);
  const condition = {
    type: DisruptionTarget,
    status: 'True',
    lastProbeTime: null as unknown as Date,
    lastTransitionTime: apiTime(nowMs),
    reason: TerminationByKubelet,
    message,
  };
  conditions.unshift(withObservedGeneration(condition, generation));
  status.conditions = conditions;
}
