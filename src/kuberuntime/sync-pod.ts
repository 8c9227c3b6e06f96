/**
 * SyncPod in upstream's order (kuberuntime_manager.go SyncPod):
 *
 *  1. computePodActions;
 *  2. kill the pod when the sandbox changed (and purge init containers when a new sandbox
 *     follows), else kill the containers that must go;
 *  3. prune dead init container instances;
 *  4. create the sandbox if needed and read its IPs;
 *  5. start the next init container (stop on failure: later ones wait), or the containers.
 *
 * Starting a container (startContainer): crash-loop back-off check, EnsureImageExists, restart
 * count, container config, CreateContainer, StartContainer. Each failure becomes the container's
 * waiting reason in the result and does not keep the other containers from starting.
 */
import { mkdir, readdir } from 'node:fs/promises';
import type { Container, Pod } from '../api/types.js';
import type { PodSandboxConfig, RuntimeService } from '../cri/types.js';
import { ContainerStartError, KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import type { Backoff } from './backoff.js';
import { ContainerConfigError, generateContainerConfig } from './container-config.js';
import { runtimeMessage } from './cri-errors.js';
import { podDNS, type DnsSettings } from './dns.js';
import type { ImagePuller } from './images.js';
import { findContainerStatusByName } from './init-containers.js';
import { gracePeriodFor, killContainer, killPod, runningPodFromStatus } from './kill.js';
import { computePodActions, formatPod, isHostNetworkPod, type PodActions, type ProbeFailure } from './pod-actions.js';
import { removeAllLogged, removeContainer } from './remove.js';
import { containerLogsDirectory, generatePodSandboxConfig } from './sandbox-config.js';
import type { PodRuntimeStatus, PodSyncResult } from './types.js';

export interface SyncDeps {
  runtime: RuntimeService;
  puller: ImagePuller;
  crashBackOff: Backoff;
  probeFailure?: ((containerId: string) => ProbeFailure | undefined) | undefined;
  podLogsDir: string;
  rootDir: string;
  nodeName: string;
  hostIP: string;
  dns: DnsSettings;
  memoryCapacity: number;
}

/** Where the containers of this sync start: the sandbox and what they need to know about it. */
interface StartTarget {
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  podIPs: string[];
}

export async function syncPod(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus): Promise<PodSyncResult> {
  const result: PodSyncResult = { waiting: new Map() };
  const actions = computePodActions(pod, status, { backOff: deps.crashBackOff, probeFailure: deps.probeFailure });
  log('kuberuntime').debug({ pod: formatPod(pod), actions: describe(actions) }, 'computePodActions');
  if (actions.killPod || actions.containersToKill.length > 0) result.changed = true;
  try {
    await killWhatMustGo(deps, pod, status, actions);
  } catch (err) {
    result.error = err as Error;
    return result;
  }
  await pruneInitContainersBeforeStart(deps.runtime, pod, status);
  if (actions.nextInitContainerToStart === undefined && actions.containersToStart.length === 0) return result;

  let target: StartTarget;
  try {
    target = await prepareSandbox(deps, pod, status, actions);
  } catch (err) {
    result.error = err as Error;
    return result;
  }
  if (actions.nextInitContainerToStart !== undefined) {
    // One init container at a time; the regular containers are never started in the same sync.
    const init = pod.spec!.initContainers![actions.nextInitContainerToStart]!;
    await start(deps, pod, status, actions, target, init, result);
    return result;
  }
  for (const idx of actions.containersToStart) {
    await start(deps, pod, status, actions, target, pod.spec!.containers[idx]!, result);
  }
  return result;
}

function describe(a: PodActions): Record<string, unknown> {
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    sandboxId: a.sandboxId,
    attempt: a.attempt,
    nextInit: a.nextInitContainerToStart,
    toStart: a.containersToStart,
    toKill: a.containersToKill.map((k) => `${k.name}:${k.reason}`),
  };
}

async function killWhatMustGo(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus, actions: PodActions): Promise<void> {
  if (actions.killPod) {
    await killPod(deps.runtime, pod, runningPodFromStatus(status));
    if (actions.createSandbox) await purgeInitContainers(deps.runtime, pod, status);
    return;
  }
  for (const k of actions.containersToKill) {
    const grace = gracePeriodFor({ pod, container: k.container, reason: k.reason });
    await killContainer(deps.runtime, k.id, k.name, grace, k.message);
  }
}

/** A new sandbox restarts initialization from scratch: every old init container instance goes. */
async function purgeInitContainers(runtime: RuntimeService, pod: Pod, status: PodRuntimeStatus): Promise<void> {
  const names = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const ids = status.containerStatuses.filter((s) => names.has(s.name)).map((s) => s.id);
  await removeAllLogged('init container', ids, (id) => removeContainer(runtime, id));
}

/** Keeps only the newest exited instance of each init container (unknown ones all go). */
async function pruneInitContainersBeforeStart(runtime: RuntimeService, pod: Pod, status: PodRuntimeStatus): Promise<void> {
  const ids: string[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    let count = 0;
    for (const s of status.containerStatuses) {
      if (s.name !== c.name || (s.state !== 'exited' && s.state !== 'unknown')) continue;
      count++;
      if (count === 1 && s.state === 'exited') continue;
      ids.push(s.id);
    }
  }
  await removeAllLogged('init container', ids, (id) => removeContainer(runtime, id));
}

/** The sandbox config, and a new sandbox with its IPs when the actions ask for one. */
async function prepareSandbox(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus, actions: PodActions): Promise<StartTarget> {
  const sandboxConfig = generatePodSandboxConfig({
    pod,
    attempt: actions.attempt,
    podLogsDir: deps.podLogsDir,
    clusterDomain: deps.dns.clusterDomain,
    dns: await podDNS(pod, deps.dns),
  });
  if (!actions.createSandbox) return { sandboxId: actions.sandboxId, sandboxConfig, podIPs: status.ips };
  let sandboxId: string;
  try {
    await mkdir(sandboxConfig.logDirectory, { recursive: true, mode: 0o755 });
    sandboxId = await deps.runtime.runPodSandbox(sandboxConfig);
  } catch (err) {
    throw new KubeletError('KTS_ERR_SANDBOX', `Failed to create pod sandbox: ${runtimeMessage(err)}`, { cause: err });
  }
  log('kuberuntime').info({ pod: formatPod(pod), sandboxId, attempt: actions.attempt }, 'created pod sandbox');
  let podIPs = status.ips;
  try {
    const st = await deps.runtime.podSandboxStatus(sandboxId);
    // A host-network pod has no sandbox IP of its own; the status manager reports the host's.
    if (!isHostNetworkPod(pod)) podIPs = st.network.ip ? [st.network.ip, ...st.network.additionalIps] : [];
  } catch (err) {
    throw new KubeletError('KTS_ERR_SANDBOX', `Unable to get pod sandbox status: ${runtimeMessage(err)}`, { cause: err });
  }
  return { sandboxId, sandboxConfig, podIPs };
}

/** Starts one container, recording a waiting reason on failure; returns whether it started. */
async function start(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus, actions: PodActions, target: StartTarget, container: Container, result: PodSyncResult): Promise<boolean> {
  const backOff = actions.backOff.get(container.name);
  if (backOff?.inBackOff) {
    result.waiting.set(container.name, { reason: 'CrashLoopBackOff', message: backOff.message });
    log('kuberuntime').debug({ pod: formatPod(pod), container: container.name, message: backOff.message }, 'back-off restarting failed container');
    return false;
  }
  // The restart is allowed: record it so the next failure waits longer.
  if (backOff) deps.crashBackOff.next(backOff.key, backOff.since);
  try {
    result.changed = true;
    const id = await startContainer(deps, pod, status, target, container);
    log('kuberuntime').info({ pod: formatPod(pod), container: container.name, containerId: id }, 'started container');
    return true;
  } catch (err) {
    const reason = err instanceof ContainerStartError ? err.reason : 'RunContainerError';
    result.waiting.set(container.name, { reason, message: errorMessage(err) });
    log('kuberuntime').warn({ pod: formatPod(pod), container: container.name, reason, err: errorMessage(err) }, 'container start failed');
    return false;
  }
}

/** upstream startContainer: image, restart count, config, create, start. Returns the container ID. */
export async function startContainer(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus, target: StartTarget, container: Container): Promise<string> {
  const imageRef = await deps.puller.ensureImageExists(pod, container, target.sandboxConfig);
  const logDir = containerLogsDirectory(deps.podLogsDir, pod, container.name);
  const previous = findContainerStatusByName(status, container.name);
  const restartCount = previous ? previous.restartCount + 1 : await restartCountFromLogDir(logDir);
  let config;
  try {
    await mkdir(logDir, { recursive: true, mode: 0o755 });
    config = await generateContainerConfig({
      pod,
      container,
      restartCount,
      imageRef,
      env: { nodeName: deps.nodeName, hostIP: deps.hostIP, podIP: target.podIPs[0] ?? '', podIPs: target.podIPs },
      rootDir: deps.rootDir,
      memoryCapacity: deps.memoryCapacity,
    });
  } catch (err) {
    const msg = err instanceof ContainerConfigError ? err.message : errorMessage(err);
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'CreateContainerConfigError', msg, { cause: err });
  }
  let id: string;
  try {
    id = await deps.runtime.createContainer(target.sandboxId, config, target.sandboxConfig);
  } catch (err) {
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'CreateContainerError', runtimeMessage(err), { cause: err });
  }
  try {
    await deps.runtime.startContainer(id);
  } catch (err) {
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'RunContainerError', runtimeMessage(err), { cause: err });
  }
  // TODO(lifecycle): run the postStart hook here and kill the container when it fails.
  return id;
}

/**
 * When no earlier instance is known (the runtime lost its state, e.g. after a reboot), continue
 * after the highest <n>.log in the container's log directory rather than overwrite 0.log.
 */
export async function restartCountFromLogDir(logDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(logDir);
  } catch {
    return 0;
  }
  let max = -1;
  for (const e of entries) {
    const m = /^(\d+)\.log$/.exec(e);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}
