/**
 * The pod phase (upstream kubelet_pods.go getPhase), from the API container statuses of the
 * init containers, the sidecars (restartable init containers) and the regular containers.
 *
 *  - A regular init container still running, not yet run, or waiting without a previous
 *    termination keeps the pod Pending; one that exited non-zero fails the pod under
 *    restartPolicy Never (it is retried otherwise, and the pod stays Pending).
 *  - A sidecar that is not yet started keeps the pod Pending, unless a regular container of the
 *    current sandbox has already started (podHasInitialized): a restarting sidecar does not send
 *    an initialized pod back to Pending. A running sidecar counts as running; a stopped one is
 *    ignored.
 *  - Then: any regular container waiting (never ran) → Pending; something running and nothing
 *    unknown → Running; nothing running, something stopped, nothing unknown → by restartPolicy
 *    (Always → Running; all succeeded → Succeeded; Never → Failed; OnFailure → Running), unless
 *    the pod is terminal (being torn down), when Succeeded/Failed follow the exit codes alone —
 *    except for static pods, which upstream leaves to the restart policy.
 */
import type { ApiContainerStatus, Pod } from '../api/types.js';
import { isStaticPod } from '../api/pod.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

function find(statuses: readonly ApiContainerStatus[], name: string): ApiContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

export function getPhase(
  pod: Pod,
  statuses: readonly ApiContainerStatus[],
  podIsTerminal: boolean,
  podHasInitialized: boolean,
): PodPhase {
  const spec = pod.spec;
  let pendingRegularInit = 0;
  let pendingRestartableInit = 0;
  let failedInit = 0;
  let unknown = 0,
    running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;

  for (const c of spec?.initContainers ?? []) {
    const s = find(statuses, c.name);
    if (c.restartPolicy === 'Always') {
      if (!s) {
        unknown++;
        continue;
      }
      if (s.state?.running) {
        if (s.started !== true) pendingRestartableInit++;
        running++;
      } else if (s.state?.terminated) {
        // A stopped sidecar does not count toward the phase.
      } else if (s.state?.waiting) {
        if (!s.lastState?.terminated) {
          pendingRestartableInit++;
          waiting++;
        }
      } else {
        pendingRestartableInit++;
        unknown++;
      }
      continue;
    }
    if (!s) {
      pendingRegularInit++;
      continue;
    }
    if (s.state?.running) pendingRegularInit++;
    else if (s.state?.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInit++;
      } else pendingRegularInit++;
    } else pendingRegularInit++;
  }

  for (const c of spec?.containers ?? []) {
    const s = find(statuses, c.name);
    if (!s) {
      unknown++;
      continue;
    }
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  const restartPolicy = spec?.restartPolicy ?? 'Always';
  if (failedInit > 0 && restartPolicy === 'Never') return 'Failed';
  if (pendingRegularInit > 0 || (pendingRestartableInit > 0 && !podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal && !isStaticPod(pod)) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}
