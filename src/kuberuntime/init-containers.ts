/**
 * Init container progress (upstream kuberuntime_container.go computeInitContainerActions, the
 * SidecarContainers path that upstream uses for every pod since 1.29, and isInitContainerFailed):
 *
 *  - init containers run one at a time, in spec order; each must exit 0 before the next starts;
 *    a failed one is retried (restartPolicy Always/OnFailure, with crash-loop back-off) or fails
 *    the pod (restartPolicy Never: the pod is killed and its phase is Failed);
 *  - a restartable init container (a sidecar: `restartPolicy: Always` on the init container)
 *    counts as done once it is running (and its startup probe, if any, succeeded); the next init
 *    container then starts, and the sidecar keeps running beside the regular containers,
 *    restarted whenever it exits;
 *  - the list is walked backwards so that only the newest init container needs a status: the
 *    earlier ones may have been garbage collected.
 */
import type { Container, Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';
import { containerHashMatches } from './hash.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from './types.js';

/** Newest status of the container called name (containerStatuses are newest first). */
export function findContainerStatusByName(status: PodRuntimeStatus, name: string): ContainerRuntimeStatus | undefined {
  return status.containerStatuses.find((s) => s.name === name);
}

export function hasRestartableInitContainer(pod: Pod): boolean {
  return (pod.spec?.initContainers ?? []).some(isRestartableInitContainer);
}

function isInitContainerFailed(s: ContainerRuntimeStatus): boolean {
  // An OOM-killed init container failed even if the runtime reports exit code 0.
  if (s.reason === 'OOMKilled') return true;
  if (s.state === 'exited' && s.exitCode !== 0) return true;
  return s.state === 'unknown';
}

/** upstream hasAnyRegularContainerCreated: a regular container exists, so initialization finished once. */
export function hasAnyRegularContainerCreated(pod: Pod, status: PodRuntimeStatus): boolean {
  return (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatusByName(status, c.name);
    return s !== undefined && (s.state === 'created' || s.state === 'running' || s.state === 'exited');
  });
}

export type ProbeView = {
  /** 'LivenessProbe' / 'StartupProbe' when that probe failed for the container ID. */
  probeFailure?: ((containerId: string) => 'LivenessProbe' | 'StartupProbe' | undefined) | undefined;
  /**
   * Whether the container's startup probe has succeeded (undefined: no result yet). Without this
   * view a sidecar's startup probe is taken as succeeded.
   */
  startupProbeSucceeded?: ((containerId: string) => boolean | undefined) | undefined;
};

export interface InitContainerKill {
  status: ContainerRuntimeStatus;
  container: Container;
  message: string;
  reason: 'SpecChanged' | 'LivenessProbe' | 'StartupProbe' | 'Unknown';
}

export interface InitContainerActions {
  /** Indexes in spec.initContainers to start, in spec order. */
  toStart: number[];
  toKill: InitContainerKill[];
  /** Initialization failed under restartPolicy Never: kill the pod, start nothing. */
  killPod: boolean;
  /** Every init container is done (sidecars running): the regular containers may run. */
  initialized: boolean;
}

/** upstream computeInitContainerActions. */
export function computeInitContainerActions(
  pod: Pod,
  status: PodRuntimeStatus,
  view: ProbeView = {},
): InitContainerActions {
  const inits = pod.spec?.initContainers ?? [];
  const out: InitContainerActions = { toStart: [], toKill: [], killPod: false, initialized: false };
  if (inits.length === 0) {
    out.initialized = true;
    return out;
  }
  // A created or running regular container means initialization finished once, even if the
  // init containers were removed since; only sidecars must be kept running then.
  let initialized = (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatusByName(status, c.name);
    return s?.state === 'created' || s?.state === 'running';
  });
  let previouslyInitialized = initialized;
  const restartOnFailure = pod.spec?.restartPolicy !== 'Never';

  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i]!;
    const sidecar = isRestartableInitContainer(c);
    const s = findContainerStatusByName(status, c.name);
    if (!s) {
      if (previouslyInitialized && sidecar) out.toStart.push(i);
      continue;
    }
    if (previouslyInitialized && !sidecar) continue;

    switch (s.state) {
      case 'created':
        // Created but never started (the start failed): start a new instance.
        out.toStart.push(i);
        break;
      case 'running': {
        if (!sidecar) break; // a regular init container: wait for it to finish
        if (c.startupProbe) {
          if (view.probeFailure?.(s.id) === 'StartupProbe') {
            out.toKill.push({
              status: s,
              container: c,
              message: `Init container ${c.name} failed startup probe`,
              reason: 'StartupProbe',
            });
            out.toStart.push(i);
            break;
          }
          const started = view.startupProbeSucceeded ? view.startupProbeSucceeded(s.id) : true;
          if (started !== true) break; // wait for the startup probe
        }
        if (i === inits.length - 1) initialized = true;
        else if (!previouslyInitialized) out.toStart.push(i + 1);
        if (!containerHashMatches(c, s.hash)) {
          out.toKill.push({
            status: s,
            container: c,
            message: `Init container ${c.name} definition changed`,
            reason: 'SpecChanged',
          });
          out.toStart.push(i);
          break;
        }
        if (c.livenessProbe && view.probeFailure?.(s.id) === 'LivenessProbe') {
          out.toKill.push({
            status: s,
            container: c,
            message: `Init container ${c.name} failed liveness probe`,
            reason: 'LivenessProbe',
          });
          out.toStart.push(i);
        }
        break;
      }
      case 'exited':
        if (sidecar) {
          out.toStart.push(i);
          break;
        }
        if (isInitContainerFailed(s)) {
          if (!restartOnFailure) {
            out.killPod = true;
            out.toStart = [];
            return out;
          }
          out.toStart.push(i);
          break;
        }
        if (i === inits.length - 1) initialized = true;
        else out.toStart.push(i + 1);
        break;
      default: {
        // unknown: may still be running; kill it before starting another instance.
        const message = `Init container is in "unknown" state, try killing it before restart`;
        if (!sidecar && !restartOnFailure) {
          out.killPod = true;
          out.toStart = [];
          return out;
        }
        out.toKill.push({ status: s, container: c, message, reason: 'Unknown' });
        out.toStart.push(i);
      }
    }
    previouslyInitialized = true;
  }
  if (!previouslyInitialized) out.toStart.push(0);
  out.toStart.reverse();
  out.initialized = initialized;
  return out;
}
