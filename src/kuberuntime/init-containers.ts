/**
 * Init container progress for regular (non-sidecar) pods: upstream findNextInitContainerToRun and
 * isInitContainerFailed. Init containers run one at a time, in order; a failed one is retried
 * (restartPolicy Always/OnFailure) or fails the pod (Never). Restartable init containers
 * (sidecars, restartPolicy Always on the init container) need upstream's
 * computeInitContainerActions instead; that goes beside this file when it is implemented, and
 * computePodActions chooses between the two.
 */
import type { Pod } from '../api/types.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from './types.js';

/** Newest status of the container called name (containerStatuses are newest first). */
export function findContainerStatusByName(status: PodRuntimeStatus, name: string): ContainerRuntimeStatus | undefined {
  return status.containerStatuses.find((s) => s.name === name);
}

export function isInitContainerFailed(s: ContainerRuntimeStatus): boolean {
  // An OOM-killed init container failed even if the runtime reports exit code 0.
  if (s.reason === 'OOMKilled') return true;
  if (s.state === 'exited' && s.exitCode !== 0) return true;
  return s.state === 'unknown';
}

export interface NextInitContainer {
  /** Status of the last failed init container, when one failed. */
  lastStatus?: ContainerRuntimeStatus;
  /** Index in pod.spec.initContainers of the one to run next. */
  next?: number;
  /** All init containers have succeeded (or a regular container already runs). */
  done: boolean;
}

export function findNextInitContainerToRun(pod: Pod, status: PodRuntimeStatus): NextInitContainer {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return { done: true };
  // A running regular container means initialization finished once, even if the init containers
  // have since been garbage collected; running them again would be wrong.
  for (const c of pod.spec?.containers ?? []) {
    if (findContainerStatusByName(status, c.name)?.state === 'running') return { done: true };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = findContainerStatusByName(status, inits[i]!.name);
    if (s && isInitContainerFailed(s)) return { lastStatus: s, next: i, done: false };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = findContainerStatusByName(status, inits[i]!.name);
    if (!s) continue;
    if (s.state === 'running') return { done: false };
    if (s.state === 'exited') {
      if (i === inits.length - 1) return { done: true };
      return { next: i + 1, done: false };
    }
  }
  return { next: 0, done: false };
}
