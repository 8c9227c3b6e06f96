/**
 * SyncPod in upstream's order (kubelet.SyncPod's pod cgroup step, then kuberuntime_manager.go
 * SyncPod):
 *
 *  0. the pod cgroup: created with the pod's limits when missing (if containers already run
 *     outside it, the pod is killed first so they restart inside it, as upstream);
 *  1. computePodActions;
 *  2. kill the pod when the sandbox changed (and purge init containers when a new sandbox
 *     follows), else kill the containers that must go (each with its preStop hook);
 *  3. prune dead init container instances;
 *  4. create the sandbox if needed (cgroup parent = the pod cgroup) and read its IPs;
 *  5. start the ephemeral containers to start (before the init containers, as upstream, so a
 *     pod stuck initializing can be debugged), then the init containers to start, in order (a
 *     failed regular one stops the sync, a sidecar's failure does not), then the regular ones.
 *
 * An ephemeral container with `targetContainerName` joins the process namespace of that
 * container's newest instance (NamespaceOption pid TARGET, upstream namespacesForPod and
 * getTargetID); one whose fields this node refuses (SyncDeps.ephemeralRefusal) is not created and
 * waits with CreateContainerConfigError naming the field.
 *
 * Starting a container (startContainer): crash-loop back-off check, EnsureImageExists, restart
 * count, container config, CreateContainer, StartContainer, then the postStart hook; a failed hook
 * kills the container (FailedPostStartHook) and reports PostStartHookError. Each failure becomes
 * the container's waiting reason in the result and does not keep the other containers from
 * starting.
 *
 * The pod's volumes are already set up: the kubelet asks the volume manager (src/volume) before
 * calling this, and a container only binds them (container-config.ts, container-mounts.ts). A
 * container whose volume could not be set up waits with that volume's error
 * (CreateContainerConfigError) and a FailedMount event.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { DeviceRunContainerOptions } from '../devicemanager/index.js';
import type { PodContainerManager } from '../cm/types.js';
import type { PodSandboxConfig, RuntimeService, UserNamespace } from '../cri/types.js';
import type { EventFields, EventRecorder } from '../events/types.js';
import { containerEventRef, podEventRef } from '../events/refs.js';
import type { ImageManager, PullSecret } from '../images/types.js';
import { ContainerStartError, KubeletError, VolumeError, errorMessage } from '../errors.js';
import type { NodeAllocatable } from '../fieldpath/index.js';
import { log } from '../util/log.js';
import { makePodDataDirs, type PodObjectSource, type RuntimeVolumes } from '../volume/index.js';
import type { Backoff } from '../util/backoff.js';
import { ContainerConfigError, generateContainerConfig } from './container-config.js';
import { getImageUser } from './run-as-non-root.js';
import { runtimeMessage } from '../cri/errors.js';
import { cdiRefusal } from '../cri/cdi.js';
import { podDNS, type DnsSettings } from './dns.js';
import type { CriStartScheduler, StartClass } from './cri-scheduler.js';
import { formatPod, isRestartableInitContainer, podNames, podUID } from '../api/pod.js';
import { findContainerStatusByName } from './init-containers.js';
import { killContainer, killPod, runningPodFromStatus, type KillDeps } from './kill.js';
import { runHandler, type HookTarget, type LifecycleHandler } from './lifecycle-hooks.js';
import { computePodActions, isHostNetworkPod, type PodActions, type ProbeFailure } from './pod-actions.js';
import { doPodResizeAction, type ActuatedResources } from './resize.js';
import { podResourceConfig } from '../cm/index.js';
import { removeAllLogged, removeContainer } from './remove.js';
import { runtimeHandlerFor, type RuntimeClassLookup } from './runtime-class.js';
import type { ServiceLister } from './service-env.js';
import { generatePodSandboxConfig, podHostnameAndDomain } from './sandbox-config.js';
import type { HostsFileInput } from './hosts-file.js';
import { discardTerminationMessageFile } from './termination-message.js';
import { DEFAULT_SECCOMP_PROFILE_ROOT, type SecurityProfileSettings } from './security-profiles.js';
import { containerLogsDirectory, podDir, restartCountOfLogFileName } from '../util/pod-identity.js';
import type { PodRuntimeStatus, PodSyncResult } from './types.js';
import { metrics } from '../metrics/index.js';

export interface SyncDeps {
  runtime: RuntimeService;
  /** EnsureImageExists (src/images): pull policy, pull limiter, ImagePullBackOff, pull events. */
  imageManager: ImageManager;
  crashBackOff: Backoff;
  probeFailure?: ((containerId: string) => ProbeFailure | undefined) | undefined;
  startupProbeSucceeded?: ((containerId: string) => boolean | undefined) | undefined;
  /** Container events (Created, Started, Failed, BackOff, Killing); default: none. */
  recorder?: EventRecorder | undefined;
  podLogsDir: string;
  nodeName: string;
  hostIP: string;
  /** Every node IP (dual stack); default [hostIP]. A hostNetwork pod's IPs are these. */
  hostIPs?: readonly string[];
  dns: DnsSettings;
  memoryCapacity: number;
  allocatable: NodeAllocatable;
  podCgroups: PodContainerManager;
  /** Bound of a postStart hook. */
  hookTimeoutMs: number;
  /** The pod's IPs from the runtime (httpGet preStop hooks of containers killed during a sync). */
  podIPs: (uid: string) => Promise<string[]>;
  /** ConfigMaps and Secrets for env: configMapKeyRef, secretKeyRef, envFrom (API server mode). */
  objects?: PodObjectSource;
  /** The Service informer for the Service env vars (API server mode). */
  services?: ServiceLister | undefined;
  /**
   * The pod's spec.imagePullSecrets read through the secret manager (upstream
   * kubelet.getPullSecretsForPod; in standalone mode each is reported missing). Absent: none.
   */
  pullSecretsFor?: ((pod: Pod) => Promise<readonly PullSecret[]>) | undefined;
  /** The pods' volumes, set up by the volume manager before each sync, and their subPaths. */
  volumes: RuntimeVolumes;
  /** spec.runtimeClassName → runtime handler; default: the class name is the handler (standalone). */
  runtimeClasses?: RuntimeClassLookup | undefined;
  /** The pod worker's cancellation: set per sync by bindSignal. */
  signal?: AbortSignal | undefined;
  /** Bounds and orders RunPodSandbox / CreateContainer / StartContainer across pods; default: none. */
  criStarts?: CriStartScheduler | undefined;
  /** upstream --root-dir: the pod directory holds the managed /etc/hosts; absent: none (unit tests). */
  rootDir?: string | undefined;
  /**
   * Why an ephemeral container of the pod cannot run here (a refused field, named), or undefined.
   * Ephemeral containers arrive by pod update, after admission; default: none refused.
   */
  ephemeralRefusal?: ((pod: Pod, index: number) => string | undefined) | undefined;
  /** In-place resize: what each container was last given (the allocation manager); absent: no resize. */
  actuated?: ActuatedResources | undefined;
  /** upstream seccompDefault: RuntimeDefault for containers without a seccomp profile; default false. */
  seccompDefault?: boolean | undefined;
  /**
   * upstream GetOrCreateUserNamespaceMappings (kubelet/userns): the pod's CRI userns_options for
   * the sandbox and its containers, given the pod's runtime handler; absent: none sent (tests).
   */
  userNamespaces?: UserNamespaceMappings | undefined;
  /**
   * upstream GetDeviceRunContainerOptions: what device plugins give a container (PreStartContainer
   * is called inside where asked); a failure is CreateContainerConfigError. Absent: no devices.
   */
  deviceOptions?: DeviceOptionsLookup | undefined;
}

export type DeviceOptionsLookup = (pod: Pod, container: Container) => Promise<DeviceRunContainerOptions | undefined>;

/**
 * What device plugins give the container. CDI names the runtime would drop (no CDI: containerd
 * 1.6, 1.7 without enable_cdi) refuse the container instead of starting it without the device
 * (cri/cdi.ts; a difference from upstream): CreateContainerConfigError.
 */
async function deviceOptionsFor(
  deps: SyncDeps,
  pod: Pod,
  container: Container,
): Promise<DeviceRunContainerOptions | undefined> {
  const opts = await deps.deviceOptions?.(pod, container);
  const refusal = await cdiRefusal(
    deps.runtime,
    (opts?.cdiDevices ?? []).map((d) => d.name),
  );
  if (refusal) throw new ContainerConfigError(refusal);
  return opts;
}

export type UserNamespaceMappings = (pod: Pod, runtimeHandler: string) => Promise<UserNamespace>;

/** The pod's user namespace options; only a hostUsers:false pod needs its handler resolved. */
async function podUserNamespace(deps: SyncDeps, pod: Pod): Promise<UserNamespace | undefined> {
  if (!deps.userNamespaces) return undefined;
  const handler = pod.spec?.hostUsers === false ? runtimeHandlerFor(pod, deps.runtimeClasses) : '';
  return deps.userNamespaces(pod, handler);
}

/**
 * The managed /etc/hosts of the pod's containers (hosts-file.ts): a hostNetwork pod's IPs are the
 * node's, as upstream's SyncPod sets them from the API status.
 */
/** upstream: a hostNetwork pod's IPs are the node's (its API status podIPs, set from them). */
function nodeIPsOf(deps: Pick<SyncDeps, 'hostIP' | 'hostIPs'>): string[] {
  return [...(deps.hostIPs ?? (deps.hostIP ? [deps.hostIP] : []))];
}

function hostsFileInput(deps: SyncDeps, pod: Pod, podIPs: readonly string[]): HostsFileInput | undefined {
  if (deps.rootDir === undefined) return undefined;
  const { hostname, hostDomain } = podHostnameAndDomain(pod, deps.dns.clusterDomain);
  const ips = isHostNetworkPod(pod) ? nodeIPsOf(deps) : podIPs;
  return { podDir: podDir(deps.rootDir, podUID(pod)), podIPs: ips, hostname, hostDomain };
}

function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e !== undefined && out.length < 5; e = (e as { cause?: unknown } | null)?.cause) out.push(e);
  return out;
}

/** A container-scoped pod event (the reference's fieldPath names the container). */
export function containerEvent(
  deps: Pick<SyncDeps, 'recorder'>,
  pod: Pod,
  container: Pick<Container, 'name'>,
  { type, reason, message }: EventFields,
): void {
  deps.recorder?.event(containerEventRef(pod, container.name), type, reason, message);
}

/** A pod-scoped event (no fieldPath), e.g. FailedCreatePodSandBox. */
function podEvent(deps: Pick<SyncDeps, 'recorder'>, pod: Pod, { type, reason, message }: EventFields): void {
  deps.recorder?.event(podEventRef(pod), type, reason, message);
}

/** Where the containers of this sync start: the sandbox and what they need to know about it. */
interface StartTarget {
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
  podIPs: string[];
}

/**
 * What every container start of one sync shares: the pod, the runtime status and the actions
 * computed from it, the sandbox they start in, and the result their failures are recorded in.
 */
interface StartContext {
  pod: Pod;
  status: PodRuntimeStatus;
  actions: PodActions;
  target: StartTarget;
  result: PodSyncResult;
  /** The pod's pull secrets, read once per sync on the first container start (upstream: once per SyncPod). */
  pullSecrets?: Promise<readonly PullSecret[]>;
}

export function killDeps(deps: Pick<SyncDeps, 'runtime' | 'podIPs' | 'recorder'>): KillDeps {
  const onKilling = (pod: Pod, name: string, message: string) =>
    containerEvent(deps, pod, { name }, { type: 'Normal', reason: 'Killing', message });
  return { runtime: deps.runtime, podIPs: deps.podIPs, onKilling };
}

/**
 * The deps of one sync bound to the pod worker's signal: every CRI call it makes is cancelled
 * when a kill arrives (upstream passes the worker's context down), and so are image pulls.
 */
function bindSignal(deps: SyncDeps, signal: AbortSignal | undefined): SyncDeps {
  if (!signal) return deps;
  return {
    ...deps,
    signal,
    runtime: deps.runtime.withSignal?.(signal) ?? deps.runtime,
    imageManager: deps.imageManager.withSignal(signal),
  };
}

/**
 * One pod-creating CRI call through the scheduler (when there is one). A pod bringing up its
 * first sandbox is a new start; anything else (a later sandbox attempt, a container of a pod
 * whose sandbox exists) is a restart and goes first.
 */
function criStart<T>(deps: SyncDeps, pod: Pod, actions: PodActions, fn: () => Promise<T>): Promise<T> {
  if (!deps.criStarts) return fn();
  const cls: StartClass = actions.createSandbox && actions.attempt === 0 ? 'new' : 'restart';
  return deps.criStarts.run(podUID(pod), cls, fn, deps.signal);
}

/** A failure that is only the cancellation: passed up as is, never reported as the pod's problem. */
function rethrowIfCancelled(deps: SyncDeps, err: unknown): void {
  if (deps.signal?.aborted) throw err;
}

export async function syncPod(
  baseDeps: SyncDeps,
  pod: Pod,
  status: PodRuntimeStatus,
  signal?: AbortSignal,
): Promise<PodSyncResult> {
  try {
    return await syncPodSteps(bindSignal(baseDeps, signal), pod, status);
  } finally {
    // The sync is over: the pod's place in the CRI start line goes (its next sync queues anew).
    baseDeps.criStarts?.release(podUID(pod));
  }
}

async function syncPodSteps(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus): Promise<PodSyncResult> {
  const result: PodSyncResult = { waiting: new Map() };
  if (!(await ensurePodCgroup(deps, pod, status, result))) return result;
  const uid = podUID(pod);
  const actuated = deps.actuated;
  const actions = computePodActions(pod, status, {
    backOff: deps.crashBackOff,
    probeFailure: deps.probeFailure,
    startupProbeSucceeded: deps.startupProbeSucceeded,
    actuated: actuated ? (name) => actuated.getActuated(uid, name) : undefined,
  });
  log('kuberuntime').debug({ pod: formatPod(pod), actions: describe(actions) }, 'computePodActions');
  if (actions.killPod || actions.containersToKill.length > 0) result.changed = true;
  try {
    await killWhatMustGo(deps, pod, status, actions);
  } catch (err) {
    rethrowIfCancelled(deps, err);
    result.error = err as Error;
    return result;
  }
  await resizeInPlace(deps, pod, actions, result);
  await pruneInitContainersBeforeStart(deps.runtime, pod, status);
  // A killed pod that gets no new sandbox has nowhere to start a debug container.
  if (actions.killPod && !actions.createSandbox) actions.ephemeralContainersToStart = [];
  if (nothingToStart(actions)) return result;

  let target: StartTarget;
  try {
    deps.signal?.throwIfAborted();
    target = await prepareSandbox(deps, pod, status, actions);
  } catch (err) {
    rethrowIfCancelled(deps, err);
    result.error = err as Error;
    return result;
  }
  const ctx: StartContext = { pod, status, actions, target, result };
  for (const idx of actions.ephemeralContainersToStart) {
    deps.signal?.throwIfAborted();
    await start(deps, ctx, ephemeralStartSpec(deps, pod, idx), 'ephemeral_container');
  }
  for (const idx of actions.initContainersToStart) {
    deps.signal?.throwIfAborted();
    const init = pod.spec!.initContainers![idx]!;
    const started = await start(deps, ctx, { container: init }, 'init_container');
    // A regular init container that could not start holds up initialization; a sidecar does not.
    if (!started && !isRestartableInitContainer(init)) return result;
  }
  for (const idx of actions.containersToStart) {
    deps.signal?.throwIfAborted();
    await start(deps, ctx, { container: pod.spec!.containers[idx]! }, 'container');
  }
  return result;
}

function nothingToStart(a: PodActions): boolean {
  return a.initContainersToStart.length + a.containersToStart.length + a.ephemeralContainersToStart.length === 0;
}

/** What starting one container needs beyond the pod: its spec, and for a debug container its target. */
interface ContainerStartSpec {
  container: Container;
  /** targetContainerName of an ephemeral container. */
  targetName?: string | undefined;
  /** Why this ephemeral container must not be created (a refused field). */
  refusal?: string | undefined;
}

function ephemeralStartSpec(deps: SyncDeps, pod: Pod, idx: number): ContainerStartSpec {
  const ec = pod.spec!.ephemeralContainers![idx]!;
  const { targetContainerName, ...common } = ec;
  return {
    container: common as Container,
    targetName: targetContainerName || undefined,
    refusal: deps.ephemeralRefusal?.(pod, idx),
  };
}

/**
 * upstream containerStartSpec.getTargetID: the ID of the target container's newest instance,
 * whose process namespace a debug container joins; an error while it has none.
 */
function targetContainerId(status: PodRuntimeStatus, spec: ContainerStartSpec): string | undefined {
  if (spec.targetName === undefined) return undefined;
  const target = findContainerStatusByName(status, spec.targetName);
  if (!target) throw new ContainerConfigError(`unable to find target container ${spec.targetName}`);
  return target.id;
}

/**
 * upstream SyncPod's resize step (doPodResizeAction, resize.ts) when the pod keeps running; a
 * container restarted for its resizePolicy gets the pod cgroup resized before it starts. A failure
 * is the resize's error (PodResizeInProgress reason Error); the next sync retries.
 */
async function resizeInPlace(deps: SyncDeps, pod: Pod, actions: PodActions, result: PodSyncResult): Promise<void> {
  if (actions.killPod || !deps.actuated) return;
  const updates = actions.containersToUpdate;
  const restarts = actions.containersToKill.some((k) => k.reason === 'ResizeRestart');
  if (updates.cpu.length === 0 && updates.memory.length === 0 && !restarts) return;
  result.changed = true;
  result.resized = true;
  try {
    if (restarts && deps.podCgroups.enabled) await deps.podCgroups.setPodCgroupConfig(pod, podResourceConfig(pod));
    await doPodResizeAction(deps, pod, updates);
  } catch (err) {
    rethrowIfCancelled(deps, err);
    result.resizeError = errorMessage(err);
    log('kuberuntime').warn({ pod: formatPod(pod), err: result.resizeError }, 'in-place resize failed');
  }
}

/**
 * upstream kubelet.SyncPod's pod cgroup step. Returns false when the sync must stop here (the
 * error, if any, is in result).
 */
async function ensurePodCgroup(
  deps: SyncDeps,
  pod: Pod,
  status: PodRuntimeStatus,
  result: PodSyncResult,
): Promise<boolean> {
  const pcm = deps.podCgroups;
  // A pod being deleted needs no cgroup created or updated.
  if (!pcm.enabled || pod.metadata?.deletionTimestamp) return true;
  try {
    if (await pcm.exists(pod)) return true;
    const firstSync = !status.containerStatuses.some((c) => c.state === 'running');
    if (!firstSync) {
      // Containers run outside the pod cgroup (e.g. pod cgroups were just turned on): restart
      // them inside it.
      log('kuberuntime').info(
        { pod: formatPod(pod), cgroup: pcm.getPodContainerName(pod) },
        'pod cgroup missing while containers run; killing the pod to restart it in its cgroup',
      );
      await killPod(killDeps(deps), pod, runningPodFromStatus(status));
      result.changed = true;
      if (pod.spec?.restartPolicy === 'Never') return false;
    }
    await pcm.ensureExists(pod);
    // After a kill the status is stale: the next sync restarts the pod in its cgroup.
    return firstSync;
  } catch (err) {
    result.error = new KubeletError(
      'KTS_ERR_SANDBOX',
      `failed to ensure that the pod: ${podUID(pod)} cgroups exist and are correctly applied: ${errorMessage(err)}`,
      { cause: err },
    );
    return false;
  }
}

function describe(a: PodActions): Record<string, unknown> {
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    sandboxId: a.sandboxId,
    attempt: a.attempt,
    initToStart: a.initContainersToStart,
    toStart: a.containersToStart,
    ephemeralToStart: a.ephemeralContainersToStart,
    toKill: a.containersToKill.map((k) => `${k.name}:${k.reason}`),
  };
}

async function killWhatMustGo(deps: SyncDeps, pod: Pod, status: PodRuntimeStatus, actions: PodActions): Promise<void> {
  if (actions.killPod) {
    await killPod(killDeps(deps), pod, runningPodFromStatus(status));
    if (actions.createSandbox) await purgeInitContainers(deps.runtime, pod, status);
    return;
  }
  for (const k of actions.containersToKill) {
    await killContainer(killDeps(deps), {
      id: k.id,
      name: k.name,
      pod,
      container: k.container,
      reason: k.reason,
      message: k.message,
    });
  }
}

/** A new sandbox restarts initialization from scratch: every old init container instance goes. */
async function purgeInitContainers(runtime: RuntimeService, pod: Pod, status: PodRuntimeStatus): Promise<void> {
  const names = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const ids = status.containerStatuses.filter((s) => names.has(s.name)).map((s) => s.id);
  await removeAllLogged('init container', ids, (id) => removeContainer(runtime, id));
}

/** Keeps only the newest exited instance of each init container (unknown ones all go). */
async function pruneInitContainersBeforeStart(
  runtime: RuntimeService,
  pod: Pod,
  status: PodRuntimeStatus,
): Promise<void> {
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
async function prepareSandbox(
  deps: SyncDeps,
  pod: Pod,
  status: PodRuntimeStatus,
  actions: PodActions,
): Promise<StartTarget> {
  // The pod directory holds the managed /etc/hosts. Kubelet.syncPod made it already; a runtime
  // manager driven on its own (tests, run-once) makes it here, with the same modes.
  if (deps.rootDir !== undefined) await makePodDataDirs(deps.rootDir, podUID(pod));
  let sandboxConfig: PodSandboxConfig;
  try {
    sandboxConfig = generatePodSandboxConfig({
      pod,
      attempt: actions.attempt,
      podLogsDir: deps.podLogsDir,
      clusterDomain: deps.dns.clusterDomain,
      dns: await podDNS(pod, deps.dns),
      cgroupParent: deps.podCgroups.getPodContainerName(pod),
      userns: await podUserNamespace(deps, pod),
    });
  } catch (err) {
    // upstream: generatePodSandboxConfig fails (resolvConf unreadable, a hostname that is no DNS
    // label); creating a sandbox reports it as FailedCreatePodSandBox, as any sandbox failure.
    if (actions.createSandbox)
      podEvent(deps, pod, {
        type: 'Warning',
        reason: 'FailedCreatePodSandBox',
        message: `Failed to create pod sandbox: ${errorMessage(err)}`,
      });
    throw err;
  }
  const hostNetwork = isHostNetworkPod(pod);
  if (!actions.createSandbox)
    return { sandboxId: actions.sandboxId, sandboxConfig, podIPs: hostNetwork ? nodeIPsOf(deps) : status.ips };
  let sandboxId: string;
  try {
    // An unknown RuntimeClass fails here, before anything of the pod exists (upstream
    // createPodSandbox looks the handler up first).
    const handler = runtimeHandlerFor(pod, deps.runtimeClasses);
    await mkdir(sandboxConfig.logDirectory, { recursive: true, mode: 0o755 });
    metrics.startedPods.inc();
    if (pod.spec?.hostUsers === false) metrics.startedUserNamespacedPods.inc();
    sandboxId = await criStart(deps, pod, actions, () => deps.runtime.runPodSandbox(sandboxConfig, handler));
  } catch (err) {
    rethrowIfCancelled(deps, err);
    metrics.startedPodsErrors.inc();
    if (pod.spec?.hostUsers === false) metrics.startedUserNamespacedPodsErrors.inc();
    const message = `Failed to create pod sandbox: ${runtimeMessage(err)}`;
    // upstream SyncPod: FailedCreatePodSandBox on the pod, and the sync fails (CreatePodSandboxError).
    podEvent(deps, pod, { type: 'Warning', reason: 'FailedCreatePodSandBox', message });
    throw new KubeletError('KTS_ERR_SANDBOX', message, { cause: err });
  }
  log('kuberuntime').info({ pod: formatPod(pod), sandboxId, attempt: actions.attempt }, 'created pod sandbox');
  let podIPs = hostNetwork ? nodeIPsOf(deps) : status.ips;
  try {
    const st = await deps.runtime.podSandboxStatus(sandboxId);
    // A host-network pod has no sandbox IP of its own: its IPs are the node's.
    if (!hostNetwork) podIPs = st.network.ip ? [st.network.ip, ...st.network.additionalIps] : [];
  } catch (err) {
    throw new KubeletError('KTS_ERR_SANDBOX', `Unable to get pod sandbox status: ${runtimeMessage(err)}`, {
      cause: err,
    });
  }
  return { sandboxId, sandboxConfig, podIPs };
}

/** Starts one container, recording a waiting reason on failure; returns whether it started. */
async function start(
  deps: SyncDeps,
  ctx: StartContext,
  startSpec: ContainerStartSpec,
  containerType: 'container' | 'init_container' | 'ephemeral_container',
): Promise<boolean> {
  const { pod, actions, result } = ctx;
  const { container } = startSpec;
  const backOff = actions.backOff.get(container.name);
  if (backOff?.inBackOff) {
    result.waiting.set(container.name, { reason: 'CrashLoopBackOff', message: backOff.message });
    log('kuberuntime').debug(
      { pod: formatPod(pod), container: container.name, message: backOff.message },
      'back-off restarting failed container',
    );
    containerEvent(deps, pod, container, {
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
    });
    return false;
  }
  // The restart is allowed: record it so the next failure waits longer.
  if (backOff) deps.crashBackOff.next(backOff.key, backOff.since);
  // upstream counts every attempt past the back-off check, and its failures by waiting reason.
  metrics.startedContainers.inc({ container_type: containerType });
  try {
    result.changed = true;
    const id = await startContainer(deps, ctx, startSpec);
    log('kuberuntime').info({ pod: formatPod(pod), container: container.name, containerId: id }, 'started container');
    containerEvent(deps, pod, container, {
      type: 'Normal',
      reason: 'Created',
      message: `Created container ${container.name}`,
    });
    containerEvent(deps, pod, container, {
      type: 'Normal',
      reason: 'Started',
      message: `Started container ${container.name}`,
    });
    return true;
  } catch (err) {
    rethrowIfCancelled(deps, err);
    const reason = err instanceof ContainerStartError ? err.reason : 'RunContainerError';
    metrics.startedContainersErrors.inc({ container_type: containerType, code: reason });
    result.waiting.set(container.name, { reason, message: errorMessage(err) });
    // A volume that cannot be set up is upstream's FailedMount; the rest are Failed.
    const mountProblem = causeChain(err).some((e) => e instanceof VolumeError);
    containerEvent(
      deps,
      pod,
      container,
      mountProblem
        ? { type: 'Warning', reason: 'FailedMount', message: errorMessage(err) }
        : { type: 'Warning', reason: 'Failed', message: `Error: ${reason}: ${errorMessage(err)}` },
    );
    log('kuberuntime').warn(
      { pod: formatPod(pod), container: container.name, reason, err: errorMessage(err) },
      'container start failed',
    );
    return false;
  }
}

/** No pullSecretsFor (tests, embedders): no pull secrets. */
const NO_PULL_SECRETS: readonly PullSecret[] = [];

/** seccompDefault, and Localhost seccomp profiles below `<root-dir>/seccomp` (upstream seccompProfileRoot). */
function securityProfileSettings(deps: SyncDeps): SecurityProfileSettings {
  return {
    seccompDefault: deps.seccompDefault === true,
    seccompProfileRoot: deps.rootDir !== undefined ? join(deps.rootDir, 'seccomp') : DEFAULT_SECCOMP_PROFILE_ROOT,
  };
}

/** upstream startContainer: image, restart count, config, create, start. Returns the container ID. */
async function startContainer(deps: SyncDeps, ctx: StartContext, spec: ContainerStartSpec): Promise<string> {
  const { pod, status, actions, target } = ctx;
  const { container } = spec;
  if (spec.refusal !== undefined)
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'CreateContainerConfigError', spec.refusal);
  ctx.pullSecrets ??= deps.pullSecretsFor?.(pod) ?? Promise.resolve(NO_PULL_SECRETS);
  const pullSecrets = await ctx.pullSecrets;
  const imageRef = await deps.imageManager.ensureImageExists(pod, container, pullSecrets, target.sandboxConfig);
  const logDir = containerLogsDirectory(deps.podLogsDir, podNames(pod), container.name);
  const previous = findContainerStatusByName(status, container.name);
  const restartCount = previous ? previous.restartCount + 1 : await restartCountFromLogDir(logDir);
  let config;
  try {
    const targetId = targetContainerId(status, spec);
    await mkdir(logDir, { recursive: true, mode: 0o755 });
    config = await generateContainerConfig({
      pod,
      container,
      restartCount,
      imageRef,
      imageUser: await getImageUser(deps.imageManager, container.image ?? ''),
      env: {
        nodeName: deps.nodeName,
        hostIP: deps.hostIP,
        hostIPs: nodeIPsOf(deps),
        podIP: target.podIPs[0] ?? '',
        podIPs: target.podIPs,
        objects: deps.objects,
        services: deps.services,
      },
      memoryCapacity: deps.memoryCapacity,
      allocatable: deps.allocatable,
      volumes: deps.volumes.getMountedVolumesForPod(pod.metadata?.uid ?? ''),
      subPaths: deps.volumes,
      hosts: hostsFileInput(deps, pod, target.podIPs),
      ...(targetId !== undefined ? { targetId } : {}),
      userns: target.sandboxConfig.linux.securityContext.namespaceOptions.usernsOptions,
      ...(deps.rootDir !== undefined ? { podDir: podDir(deps.rootDir, podUID(pod)) } : {}),
      securityProfiles: securityProfileSettings(deps),
      deviceOptions: await deviceOptionsFor(deps, pod, container),
    });
  } catch (err) {
    const msg = err instanceof ContainerConfigError ? err.message : errorMessage(err);
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'CreateContainerConfigError', msg, { cause: err });
  }
  let id: string;
  try {
    id = await criStart(deps, pod, actions, () =>
      deps.runtime.createContainer(target.sandboxId, config, target.sandboxConfig),
    );
  } catch (err) {
    await discardTerminationMessageFile(pod, container, config);
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'CreateContainerError', runtimeMessage(err), {
      cause: err,
    });
  }
  try {
    await criStart(deps, pod, actions, () => deps.runtime.startContainer(id));
  } catch (err) {
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'RunContainerError', runtimeMessage(err), { cause: err });
  }
  // What the container runs with now: the base an in-place resize is measured from.
  deps.actuated?.setActuated(podUID(pod), container.name, container.resources ?? {});
  const postStart = container.lifecycle?.postStart;
  if (postStart)
    await runPostStartHook(deps, { pod, container, containerId: id }, target, postStart as LifecycleHandler);
  return id;
}

/** Runs the postStart hook; on failure kills the container (FailedPostStartHook) and throws PostStartHookError. */
async function runPostStartHook(
  deps: SyncDeps,
  hook: HookTarget,
  target: StartTarget,
  handler: LifecycleHandler,
): Promise<void> {
  const { pod, container, containerId: id } = hook;
  try {
    await runHandler(handler, {
      runtime: deps.runtime,
      ...hook,
      podIPs: async () =>
        target.podIPs.length > 0
          ? target.podIPs
          : isHostNetworkPod(pod) && deps.hostIP
            ? nodeIPsOf(deps)
            : deps.podIPs(podUID(pod)),
      timeoutMs: deps.hookTimeoutMs,
    });
  } catch (err) {
    const message = errorMessage(err);
    log('kuberuntime').warn(
      { pod: formatPod(pod), container: container.name, containerId: id, err: message },
      'Failed to execute PostStartHook',
    );
    await killContainer(killDeps(deps), {
      id,
      name: container.name,
      pod,
      container,
      reason: 'FailedPostStartHook',
      message: 'FailedPostStartHook',
    }).catch((killErr: unknown) =>
      log('kuberuntime').error(
        { pod: formatPod(pod), container: container.name, containerId: id, err: errorMessage(killErr) },
        'Failed to kill container',
      ),
    );
    throw new ContainerStartError('KTS_ERR_CREATE_CONTAINER', 'PostStartHookError', message, { cause: err });
  }
}

/**
 * When no earlier instance is known (the runtime lost its state, e.g. after a reboot), continue
 * after the highest <n>.log in the container's log directory rather than overwrite 0.log.
 */
async function restartCountFromLogDir(logDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(logDir);
  } catch {
    return 0;
  }
  let max = -1;
  for (const e of entries) max = Math.max(max, restartCountOfLogFileName(e) ?? -1);
  return max + 1;
}
