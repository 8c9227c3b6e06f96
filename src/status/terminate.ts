/**
 * The final status of a terminated pod (upstream status manager TerminatePod, called from
 * SyncTerminatedPod once its containers are stopped and its volumes torn down):
 *
 *  - once the pod has initialized, a regular container with no terminated state (it never
 *    started, or its record is gone) is reported terminated/ContainerStatusUnknown, exit 137:
 *    not knowing whether it succeeded, the kubelet never calls it a success;
 *  - init containers, but for the trailing ones that never tried to start, likewise;
 *  - a pod that is not static leaves in a terminal phase: Pending or Running becomes Failed.
 *    Without this a pod deleted while it waited (an image pull backing off, say) stays Pending
 *    and the API server never lets it go, since the final delete waits for a terminal phase.
 *    Static pods keep their phase, as upstream (its TODO #116484).
 */
import type { ApiContainerStatus, ApiPodStatus, Pod } from '../api/types.js';
import { isRestartableInitContainer, isStaticPod } from '../api/pod.js';

const ContainerStatusUnknown = 'ContainerStatusUnknown';
const UnknownMessage = 'The container could not be located when the pod was terminated';

/** A copy of `status` as upstream's TerminatePod leaves it; `pod.status` is the API's view. */
export function terminatedPodStatus(pod: Pod, status: ApiPodStatus): ApiPodStatus {
  const out: ApiPodStatus = { ...status };
  if (hasPodInitialized(pod, status)) out.containerStatuses = status.containerStatuses?.map(markUnknown);
  if (status.initContainerStatuses) {
    const tried = initializedContainers(status.initContainerStatuses).length;
    out.initContainerStatuses = status.initContainerStatuses.map((s, i) => (i < tried ? markUnknown(s) : s));
  }
  if (!isStaticPod(pod) && out.phase !== 'Succeeded' && out.phase !== 'Failed') out.phase = 'Failed';
  return out;
}

function markUnknown(s: ApiContainerStatus): ApiContainerStatus {
  if (s.state?.terminated) return s;
  // Only the state, as upstream: lastState, started and ready stay what they were.
  return { ...s, state: { terminated: { reason: ContainerStatusUnknown, message: UnknownMessage, exitCode: 137 } } };
}

/**
 * upstream hasPodInitialized: no init containers; or a regular container has left waiting (or
 * ran before); or the last init container completed with exit 0.
 * upstream reads the API pod's status; ours is the newest status we computed, which the API's
 * only lags behind. A sidecar counts once it runs and has started.
 */
export function hasPodInitialized(pod: Pod, status: ApiPodStatus): boolean {
  if ((pod.spec?.initContainers ?? []).length === 0) return true;
  for (const s of status.containerStatuses ?? []) {
    if (s.lastState?.terminated || !s.state?.waiting) return true;
  }
  const last = status.initContainerStatuses?.at(-1);
  if (!last) return false;
  const spec = pod.spec?.initContainers?.find((c) => c.name === last.name);
  if (!spec) return false;
  if (isRestartableInitContainer(spec)) return last.state?.running !== undefined && last.started === true;
  return last.state?.terminated?.exitCode === 0 || last.lastState?.terminated?.exitCode === 0;
}

/**
 * upstream initializedContainers: every status but the trailing run of those that are waiting
 * and never ran (they never tried to start); at least the first.
 */
function initializedContainers(statuses: readonly ApiContainerStatus[]): readonly ApiContainerStatus[] {
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i]!;
    if (!s.state?.waiting || s.lastState?.terminated) return statuses.slice(0, i + 1);
  }
  return statuses.slice(0, 1);
}
