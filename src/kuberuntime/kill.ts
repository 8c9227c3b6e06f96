/**
 * Stopping containers and pods (upstream killContainer, killContainersWithSyncResult,
 * killPodWithSyncResult). Containers of a pod stop in parallel, each with its grace period, then
 * every sandbox of the pod is stopped; sandboxes are removed later by garbage collection. A
 * NOT_FOUND means the object is already gone, which is what a kill wants.
 */
import type { Container, Pod } from '../api/types.js';
import type { RuntimeService } from '../cri/types.js';
import { KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { isNotFound } from './cri-errors.js';
import type { ContainerKillReason } from './pod-actions.js';
import type { PodRuntimeStatus, RunningPod, RuntimeContainer } from './types.js';

/** upstream minimumGracePeriodInSeconds: a minimal shutdown window avoids needless SIGKILLs. */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;
/** The apiserver's default terminationGracePeriodSeconds. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/**
 * upstream setTerminationGracePeriod + the minimum: the pod's deletion grace period, else a
 * failed probe's own terminationGracePeriodSeconds, else the pod's; without a pod, what the
 * container's annotation recorded. An explicit override (eviction, SIGKILL paths) wins over
 * everything, the minimum included, as upstream.
 */
export function gracePeriodFor(opts: {
  pod?: Pod | undefined;
  container?: Container | undefined;
  reason?: ContainerKillReason | undefined;
  recorded?: number | undefined;
  override?: number | undefined;
}): number {
  if (opts.override !== undefined) return Math.max(0, opts.override);
  const { pod, container, reason } = opts;
  let grace: number;
  if (!pod) {
    grace = opts.recorded ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  } else if (pod.metadata?.deletionGracePeriodSeconds !== undefined && pod.metadata.deletionGracePeriodSeconds !== null) {
    grace = pod.metadata.deletionGracePeriodSeconds;
  } else {
    grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
    const probe = reason === 'LivenessProbe' ? container?.livenessProbe : reason === 'StartupProbe' ? container?.startupProbe : undefined;
    if (probe?.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null) grace = probe.terminationGracePeriodSeconds;
  }
  return Math.max(grace, MINIMUM_GRACE_PERIOD_SECONDS);
}

/** StopContainer with the grace period; a container already gone counts as stopped. */
export async function killContainer(runtime: RuntimeService, id: string, name: string, graceSeconds: number, message: string): Promise<void> {
  log('kuberuntime').info({ containerId: id, container: name, gracePeriod: graceSeconds, message }, 'killing container');
  try {
    await runtime.stopContainer(id, graceSeconds);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** upstream ConvertPodStatusToRunningPod: what a kill has to stop, from a status. */
export function runningPodFromStatus(status: PodRuntimeStatus): RunningPod {
  const containers: RuntimeContainer[] = status.containerStatuses
    .filter((c) => c.state !== 'exited')
    .map((c) => ({
      id: c.id,
      name: c.name,
      image: c.image,
      imageRef: c.imageRef,
      hash: c.hash,
      state: c.state,
      createdAt: BigInt(c.createdAt.getTime()) * 1_000_000n,
      podSandboxId: c.podSandboxId,
    }));
  const sandboxes = status.sandboxStatuses.map((s) => ({ id: s.id, ready: s.ready, attempt: s.attempt, createdAt: s.createdAt }));
  return { uid: status.uid, name: status.name, namespace: status.namespace, containers, sandboxes };
}

/** Stops every non-exited container in parallel, then every sandbox; throws one error listing all failures. */
export async function killPod(runtime: RuntimeService, pod: Pod | undefined, running: RunningPod, gracePeriodOverride?: number): Promise<void> {
  const failures: string[] = [];
  const causes: unknown[] = [];
  const targets = running.containers.filter((c) => c.state !== 'exited');
  const results = await Promise.allSettled(targets.map((c) => {
    const spec = pod?.spec?.containers?.find((s) => s.name === c.name) ?? pod?.spec?.initContainers?.find((s) => s.name === c.name);
    const grace = gracePeriodFor({ pod, container: spec, recorded: c.terminationGracePeriodSeconds, override: gracePeriodOverride });
    return killContainer(runtime, c.id, c.name, grace, 'Stopping container');
  }));
  results.forEach((r, i) => {
    if (r.status === 'rejected') {
      failures.push(`container ${targets[i]!.name} (${targets[i]!.id}): ${errorMessage(r.reason)}`);
      causes.push(r.reason);
    }
  });
  // Every sandbox, ready or not: a not-ready one may still hold a network namespace.
  for (const s of running.sandboxes) {
    try {
      await runtime.stopPodSandbox(s.id);
    } catch (err) {
      if (isNotFound(err)) continue;
      failures.push(`sandbox ${s.id}: ${errorMessage(err)}`);
      causes.push(err);
    }
  }
  if (failures.length > 0) {
    throw new KubeletError('KTS_ERR_CRI', `failed to kill pod ${running.namespace}/${running.name}: ${failures.join('; ')}`, {
      cause: new AggregateError(causes),
    });
  }
}
