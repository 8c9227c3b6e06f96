/**
 * Stopping containers and pods (upstream killContainer, executePreStopHook,
 * restoreSpecsFromContainerLabels, killContainersWithSyncResult, killPodWithSyncResult):
 *
 *  - the grace period comes from the pod (deletion grace period, else a failed probe's own,
 *    else terminationGracePeriodSeconds) or from an explicit override;
 *  - the preStop hook runs first, bounded by the grace period; StopContainer then gets what is
 *    left (grace − whole seconds spent in the hook), at least 2 s, and the runtime sends SIGTERM
 *    then SIGKILL when that runs out;
 *  - a sidecar also waits (within its grace) for the regular containers and the later sidecars to
 *    stop first (termination-ordering.ts);
 *  - without the pod (an orphan after a restart of the agent), grace period and preStop hook are
 *    read back from the container's annotations.
 *
 * Containers of a pod stop in parallel, then every sandbox of the pod is stopped; sandboxes are
 * removed later by garbage collection. NOT_FOUND means already gone, which is what a kill wants.
 */
import type { Container, Pod } from '../api/types.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, podTerminationGracePeriodSeconds, podUID } from '../api/pod.js';
import type { RuntimeService } from '../cri/types.js';
import { KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { isNotFound } from '../cri/errors.js';
import { hasRestartableInitContainer } from './init-containers.js';
import { getContainerInfoFromAnnotations, getContainerInfoFromLabels } from './labels.js';
import { runHandler, type HookTarget, type LifecycleHandler } from './lifecycle-hooks.js';
import type { ContainerKillReason } from './pod-actions.js';
import { TerminationOrdering } from './termination-ordering.js';
import type { PodRuntimeStatus, RunningPod, RuntimeContainer } from './types.js';

/** upstream minimumGracePeriodInSeconds: a minimal shutdown window avoids needless SIGKILLs. */
const MINIMUM_GRACE_PERIOD_SECONDS = 2;

/** What killing needs besides the runtime: the pod's IPs for httpGet preStop hooks. */
export interface KillDeps {
  runtime: RuntimeService;
  /** The pod's IPs (newest ready sandbox), for httpGet hooks without a host. */
  podIPs?: ((uid: string) => Promise<string[]>) | undefined;
  /** Raised before each stop: Killing (upstream, with the reason's message). */
  onKilling?: ((pod: Pod, containerName: string, message: string) => void) | undefined;
}

/**
 * upstream setTerminationGracePeriod: the pod's deletion grace period, else a failed probe's own
 * terminationGracePeriodSeconds, else the pod's; without a pod, what the container's annotation
 * recorded. No minimum applied (killContainer applies the 2 s one).
 */
function terminationGracePeriod(opts: {
  pod?: Pod | undefined;
  container?: Container | undefined;
  reason?: ContainerKillReason | undefined;
  recorded?: number | undefined;
}): number {
  const { pod, container, reason } = opts;
  if (!pod) return opts.recorded ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  if (pod.metadata?.deletionGracePeriodSeconds !== undefined && pod.metadata.deletionGracePeriodSeconds !== null) {
    return pod.metadata.deletionGracePeriodSeconds;
  }
  let grace = podTerminationGracePeriodSeconds(pod);
  const probe =
    reason === 'LivenessProbe'
      ? container?.livenessProbe
      : reason === 'StartupProbe'
        ? container?.startupProbe
        : undefined;
  if (probe?.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null)
    grace = probe.terminationGracePeriodSeconds;
  return grace;
}

/** What one container kill needs to know. */
export interface KillContainerRequest {
  id: string;
  name: string;
  /** The pod; undefined restores what is needed from the container's labels and annotations. */
  pod?: Pod | undefined;
  /** The container's spec when known (its preStop hook and probe grace periods). */
  container?: Container | undefined;
  reason?: ContainerKillReason | undefined;
  message?: string | undefined;
  /** Grace period recorded on the container (used without a pod). */
  recorded?: number | undefined;
  gracePeriodOverride?: number | undefined;
  ordering?: TerminationOrdering | undefined;
}

/** upstream restoreSpecsFromContainerLabels: the pod and container fields a kill uses. */
async function restoreSpecs(runtime: RuntimeService, id: string): Promise<{ pod: Pod; container: Container }> {
  const st = await runtime.containerStatus(id);
  const l = getContainerInfoFromLabels(st.labels);
  const { info } = getContainerInfoFromAnnotations(st.annotations);
  const pod: Pod = {
    metadata: {
      uid: l?.podUid ?? '',
      name: l?.podName ?? '',
      namespace: l?.podNamespace ?? '',
      ...(info.podDeletionGracePeriod !== undefined ? { deletionGracePeriodSeconds: info.podDeletionGracePeriod } : {}),
    },
    spec: {
      containers: [],
      ...(info.podTerminationGracePeriod !== undefined
        ? { terminationGracePeriodSeconds: info.podTerminationGracePeriod }
        : {}),
    },
  };
  const container: Container = { name: l?.containerName ?? st.metadata.name };
  if (info.containerPorts) container.ports = info.containerPorts;
  if (info.preStopHandler)
    container.lifecycle = { preStop: info.preStopHandler as NonNullable<Container['lifecycle']>['preStop'] };
  return { pod, container };
}

/** Runs the preStop hook, waiting at most graceSeconds; returns the whole seconds spent (upstream executePreStopHook). */
async function executePreStopHook(
  deps: KillDeps,
  { pod, container, containerId: id }: HookTarget,
  graceSeconds: number,
): Promise<number> {
  const start = Date.now();
  const ac = new AbortController();
  const hook = runHandler(container.lifecycle!.preStop as LifecycleHandler, {
    runtime: deps.runtime,
    pod,
    container,
    containerId: id,
    podIPs: () => (deps.podIPs ? deps.podIPs(podUID(pod)) : Promise.resolve([])),
    timeoutMs: graceSeconds * 1000,
    signal: ac.signal,
  }).then(
    () => log('kuberuntime').debug({ containerId: id, container: container.name }, 'preStop hook completed'),
    (err: unknown) =>
      log('kuberuntime').warn(
        { containerId: id, container: container.name, err: errorMessage(err) },
        'PreStop hook failed',
      ),
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log('kuberuntime').info(
        { containerId: id, container: container.name, gracePeriod: graceSeconds },
        'PreStop hook not completed in grace period',
      );
      resolve();
    }, graceSeconds * 1000);
  });
  await Promise.race([hook, deadline]);
  clearTimeout(timer);
  // A hook still running (an exec) ends with the container; a sleep or HTTP hook is cut short now.
  ac.abort();
  return Math.trunc((Date.now() - start) / 1000);
}

/** upstream killContainer: preStop hook, wait for its turn (sidecars), StopContainer with the remaining grace. */
export async function killContainer(deps: KillDeps, req: KillContainerRequest): Promise<void> {
  let { pod, container } = req;
  let recorded = req.recorded;
  if (!pod) {
    try {
      ({ pod, container } = await restoreSpecs(deps.runtime, req.id));
      recorded = undefined;
    } catch (err) {
      if (isNotFound(err)) return;
      log('kuberuntime').warn(
        { containerId: req.id, err: errorMessage(err) },
        'cannot restore the container spec from its annotations; stopping without hooks',
      );
      pod = undefined;
    }
  }
  let grace = req.gracePeriodOverride ?? terminationGracePeriod({ pod, container, reason: req.reason, recorded });
  // Upstream killContainer: the caller's message, else "Stopping container <name>"; the event says
  // exactly that (prefixing it again gave "Stopping container x: Stopping container x").
  const message = req.message || `Stopping container ${req.name}`;
  if (pod && container?.lifecycle?.preStop && grace > 0) {
    grace -= await executePreStopHook(deps, { pod, container, containerId: req.id }, grace);
  }
  if (req.ordering && grace > 0) grace -= Math.trunc(await req.ordering.waitForTurn(req.name, grace));
  // Always a minimal shutdown window, unless the caller explicitly asked for less.
  const floor =
    req.gracePeriodOverride !== undefined
      ? Math.min(req.gracePeriodOverride, MINIMUM_GRACE_PERIOD_SECONDS)
      : MINIMUM_GRACE_PERIOD_SECONDS;
  grace = Math.max(grace, floor, 0);
  log('kuberuntime').info(
    { containerId: req.id, container: req.name, gracePeriod: grace, message },
    'killing container',
  );
  if (pod) deps.onKilling?.(pod, req.name, message);
  try {
    await deps.runtime.stopContainer(req.id, grace);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  req.ordering?.containerTerminated(req.name);
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
  const sandboxes = status.sandboxStatuses.map((s) => ({
    id: s.id,
    ready: s.ready,
    attempt: s.attempt,
    createdAt: s.createdAt,
  }));
  return { uid: status.uid, name: status.name, namespace: status.namespace, containers, sandboxes };
}

function specOf(pod: Pod | undefined, name: string): Container | undefined {
  return (
    pod?.spec?.containers?.find((s) => s.name === name) ??
    pod?.spec?.initContainers?.find((s) => s.name === name) ??
    (pod?.spec?.ephemeralContainers?.find((s) => s.name === name) as Container | undefined)
  );
}

/**
 * Stops every non-exited container in parallel (sidecars after the regular containers), then
 * every sandbox; throws one error listing all failures.
 */
export async function killPod(
  deps: KillDeps,
  pod: Pod | undefined,
  running: RunningPod,
  gracePeriodOverride?: number,
): Promise<void> {
  const failures: string[] = [];
  const causes: unknown[] = [];
  const targets = running.containers.filter((c) => c.state !== 'exited');
  const ordering =
    pod && hasRestartableInitContainer(pod)
      ? new TerminationOrdering(
          pod,
          targets.map((c) => c.name),
        )
      : undefined;
  const results = await Promise.allSettled(
    targets.map((c) =>
      killContainer(deps, {
        id: c.id,
        name: c.name,
        pod,
        container: specOf(pod, c.name),
        recorded: c.terminationGracePeriodSeconds,
        gracePeriodOverride,
        ordering,
      }),
    ),
  );
  results.forEach((r, i) => {
    if (r.status === 'rejected') {
      failures.push(`container ${targets[i]!.name} (${targets[i]!.id}): ${errorMessage(r.reason)}`);
      causes.push(r.reason);
    }
  });
  // Every sandbox, ready or not: a not-ready one may still hold a network namespace.
  for (const s of running.sandboxes) {
    try {
      await deps.runtime.stopPodSandbox(s.id);
    } catch (err) {
      if (isNotFound(err)) continue;
      failures.push(`sandbox ${s.id}: ${errorMessage(err)}`);
      causes.push(err);
    }
  }
  if (failures.length > 0) {
    throw new KubeletError(
      'KTS_ERR_CRI',
      `failed to kill pod ${running.namespace}/${running.name}: ${failures.join('; ')}`,
      {
        cause: new AggregateError(causes),
      },
    );
  }
}
