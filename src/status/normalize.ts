/**
 * What the status manager does to every status it is given (upstream status manager SetPodStatus
 * and normalizeStatus), before it keeps it and sends it:
 *
 *  - status.observedGeneration is the metadata.generation of the pod the status was computed
 *    for (upstream CalculatePodStatusObservedGeneration; PodObservedGenerationTracking is GA and
 *    locked on in 1.35); a pod without a generation (a static pod's file) has none;
 *  - the termination messages of the pod share MaxPodTerminationMessageLogLength (12 KiB): each
 *    terminated state and last state keeps at most 12 KiB / (init + regular + ephemeral
 *    containers of the spec) bytes of its message, its beginning, as upstream cuts it. A
 *    character cut in half is dropped, so the cap holds in bytes of valid UTF-8.
 */
import type { ApiContainerStatus, ApiPodStatus, Pod } from '../api/types.js';

/** upstream kubecontainer.MaxPodTerminationMessageLogLength. */
export const MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH = 1024 * 12;

/** upstream CalculatePodStatusObservedGeneration with the gate on: the pod's generation. */
export function podStatusObservedGeneration(pod: Pod): number {
  return pod.metadata?.generation ?? 0;
}

/** The bytes each container's message may keep (upstream normalizeStatus's bytesPerStatus). */
export function terminationMessageBudget(pod: Pod): number {
  const spec = pod.spec;
  const containers =
    (spec?.containers?.length ?? 0) + (spec?.initContainers?.length ?? 0) + (spec?.ephemeralContainers?.length ?? 0);
  return containers > 0
    ? Math.floor(MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH / containers)
    : MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH;
}

/** The first `max` bytes of `s`, never half a character. */
export function utf8Head(s: string, max: number): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  let end = max;
  // Back off the continuation bytes, then the lead byte whose character did not fit.
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString('utf8');
}

type State = ApiContainerStatus['state'];

function capState(st: State, max: number): State {
  const t = st?.terminated;
  if (!t?.message || Buffer.byteLength(t.message, 'utf8') <= max) return st;
  return { ...st, terminated: { ...t, message: utf8Head(t.message, max) } };
}

function capStatus(s: ApiContainerStatus, max: number): ApiContainerStatus {
  const state = capState(s.state, max);
  const lastState = capState(s.lastState, max);
  if (state === s.state && lastState === s.lastState) return s;
  return { ...s, ...(state ? { state } : {}), ...(lastState ? { lastState } : {}) };
}

/** A copy of `status` whose termination messages keep within the pod's budget. */
export function capTerminationMessages(pod: Pod, status: ApiPodStatus): ApiPodStatus {
  const max = terminationMessageBudget(pod);
  const out: ApiPodStatus = { ...status };
  for (const k of ['initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses'] as const) {
    const list = status[k];
    if (list) out[k] = list.map((s) => capStatus(s, max));
  }
  return out;
}

/** The status as the status manager keeps it: observedGeneration first (upstream's field order), messages capped. */
export function normalizeStatus(pod: Pod, status: ApiPodStatus): ApiPodStatus {
  const { observedGeneration: _old, ...rest } = capTerminationMessages(pod, status);
  const generation = podStatusObservedGeneration(pod);
  return generation > 0 ? { observedGeneration: generation, ...rest } : rest;
}
