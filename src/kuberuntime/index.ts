/** The runtime manager factory: the only way other subsystems get a Runtime. */
import { cpus, totalmem } from 'node:os';
import {
  createPodContainerManager,
  type CgroupDriver,
  type ReservedCgroup,
  type ResourceConfig,
  type SliceUnits,
} from '../cm/index.js';
import type { CgroupMounts, PodContainerManager } from '../cm/types.js';
import type { RuntimeService } from '../cri/types.js';
import type { EventRecorder } from '../events/types.js';
import type { Pod } from '../api/types.js';
import type { ImageManager, PullSecret } from '../images/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { backOffSettings, type BackOffSettings } from '../util/backoff.js';
import type { RuntimeVolumes } from '../volume/index.js';
import { DEFAULT_GC_POLICY, type GCPolicy } from './gc.js';
import { DEFAULT_HOOK_TIMEOUT_MS } from './lifecycle-hooks.js';
import { KubeGenericRuntimeManager } from './manager.js';
import type { ProbeFailure } from './pod-actions.js';
import type { PodObjectSource, Runtime } from './types.js';
import { createCriStartScheduler, CRI_START_CONCURRENCY } from './cri-scheduler.js';
import type { RuntimeClassLookup } from './runtime-class.js';
import type { ServiceLister } from './service-env.js';
import type { DeviceOptionsLookup, UserNamespaceMappings } from './sync-pod.js';

export type { PodObjectSource, Runtime } from './types.js';
export type { GCPolicy } from './gc.js';
export type { BackOffSettings } from '../util/backoff.js';
export { computePodActions, type PodActions } from './pod-actions.js';
export { hashContainer } from './hash.js';
export type { ActuatedResources } from './resize.js';
import type { ActuatedResources } from './resize.js';
export { runningPodFromStatus } from './kill.js';
export { DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_MAX_MS } from '../util/backoff.js';
export { DEFAULT_GC_POLICY } from './gc.js';
export { createCriStartScheduler, type CriStartScheduler, type StartClass } from './cri-scheduler.js';
export { runtimeHandlerFor, nameIsHandler } from './runtime-class.js';
export { DEFAULT_HOOK_TIMEOUT_MS } from './lifecycle-hooks.js';
export { fromServices, serviceEnvVarMap, serviceProblem, type Service, type ServiceLister } from './service-env.js';

export interface RuntimeManagerDeps {
  /**
   * At most this many RunPodSandbox / CreateContainer / StartContainer calls at once, restarts
   * and earlier pods first (cri-scheduler.ts); default CRI_START_CONCURRENCY, <= 0: no bound.
   */
  criStartConcurrency?: number;
  runtime: RuntimeService;
  /** EnsureImageExists for each container start (src/images; its pull limiter and ImagePullBackOff). */
  imageManager: ImageManager;
  clock?: Clock;
  /** upstream --pod-logs-dir (default /var/log/pods). */
  podLogsDir: string;
  /** upstream --root-dir (default /var/lib/kubelet): garbage collection tears down the volumes of pods gone from <rootDir>/pods. */
  rootDir: string;
  /** In-place resize: what each container was last given (the kubelet's allocation manager). */
  actuated?: ActuatedResources | undefined;
  nodeName: string;
  clusterDNS?: string[];
  clusterDomain?: string;
  /** For status.hostIP in the downward API, and httpGet hooks of hostNetwork pods. */
  hostIP?: string;
  /** Every node IP (dual stack): a hostNetwork pod's IPs and status.hostIPs; default [hostIP]. */
  hostIPs?: readonly string[];
  /** Host resolv.conf for dnsPolicy Default (default /etc/resolv.conf; '' for none). */
  resolvConf?: string;
  /** Node memory in bytes for the Burstable OOM score (default: os.totalmem()). */
  memoryCapacity?: number;
  /**
   * The node's allocatable resources: what a missing limit means to the downward API
   * (resourceFieldRef) and the kubepods cgroup's cpu.shares. Default: the capacity (os.cpus() ×
   * 1000 milli-CPU, memoryCapacity).
   */
  nodeAllocatable?: { cpuMilli?: number; memoryBytes?: number; ephemeralStorageBytes?: number };
  /** The kubepods cgroup's limits (cm kubepodsCgroupConfig); default: cpu.shares of nodeAllocatable's cpu. */
  kubepodsCgroup?: ResourceConfig;
  /** upstream podPidsLimit: pids.max of each pod cgroup when positive. */
  podPidsLimit?: number;
  /** The cgroup mounts, read once by the caller (main.ts shares them with the stats provider). */
  cgroupMounts?: CgroupMounts;
  /** Reserved cgroups limited with enforceNodeAllocatable system-reserved / kube-reserved. */
  reservedCgroups?: readonly ReservedCgroup[];
  /** Liveness/startup probe failures by container ID (the prober's results). */
  probeFailure?: (containerId: string) => ProbeFailure | undefined;
  /**
   * Whether a container's startup probe has succeeded (undefined: no result yet). The next init
   * container waits for a sidecar's startup probe; without this, a running sidecar counts as started.
   */
  startupProbeSucceeded?: (containerId: string) => boolean | undefined;
  /** Container events (Created, Started, Failed, BackOff, Killing); default: none. The image manager raises the pull events. */
  recorder?: EventRecorder;
  /** CrashLoopBackOff: first delay and cap (default 10 s and 5 min; reset after 2×max of clean running). */
  crashLoopBackOff?: BackOffSettings;
  /** Container GC policy (default minAgeMs 0, maxPerPodContainer 1, maxContainers -1 = unlimited). */
  gcPolicy?: Partial<GCPolicy>;
  /** upstream --cgroups-per-qos (default true): pod cgroups under <cgroupRoot>/kubepods/<qos>/pod<uid>. */
  cgroupsPerQOS?: boolean;
  /** upstream --cgroup-root (default '/'), in the driver's form. */
  cgroupRoot?: string;
  /** upstream cgroupDriver (default cgroupfs); systemd needs `systemdUnits`. */
  cgroupDriver?: CgroupDriver;
  /** systemd's slice operations, for the systemd driver. */
  systemdUnits?: SliceUnits;
  /** Pod cgroups implementation to use instead of the cgroupfs one (tests). */
  podContainerManager?: PodContainerManager;
  /** ConfigMaps and Secrets for container env (API server mode); volumes read them through the volume manager. */
  objects?: PodObjectSource;
  /** The Service informer for the Service env vars (API server mode); absent: none (standalone). */
  services?: ServiceLister;
  /** spec.runtimeClassName → handler (API server mode); absent: the class name is the handler. */
  runtimeClasses?: RuntimeClassLookup;
  /** upstream getPullSecretsForPod: the pod's imagePullSecrets from the secret cache (API server mode); absent: none. */
  pullSecretsFor?: (pod: Pod) => Promise<readonly PullSecret[]>;
  /** Why an ephemeral container cannot run here (a refused field); absent: none refused. */
  ephemeralRefusal?: (pod: Pod, index: number) => string | undefined;
  /** The pods' user namespaces (kubelet/userns UsernsManager); absent: no userns_options sent. */
  userNamespaces?: UserNamespaceMappings;
  /** Bound of a postStart hook, and of an httpGet hook request (default 2 min; preStop is bounded by the grace period). */
  hookTimeoutMs?: number;
  /** upstream seccompDefault: RuntimeDefault seccomp for containers that set no profile (default false). */
  seccompDefault?: boolean;
  /** The device manager's options for one container at creation (devices, mounts, envs, CDI); absent: none. */
  deviceOptions?: DeviceOptionsLookup;
  /**
   * The volume manager (src/volume), which the kubelet asks to mount each pod's volumes before
   * syncPod: containers bind what it set up, and it prepares their subPaths. Required, and the
   * kubelet's own: two managers would each see only half of a pod's volumes.
   */
  volumes: RuntimeVolumes;
}

export function createRuntimeManager(deps: RuntimeManagerDeps): Runtime {
  const memoryCapacity = deps.memoryCapacity ?? totalmem();
  const allocatable = {
    cpu: deps.nodeAllocatable?.cpuMilli ?? Math.max(1, cpus().length) * 1000,
    memory: deps.nodeAllocatable?.memoryBytes ?? memoryCapacity,
    ephemeralStorage: deps.nodeAllocatable?.ephemeralStorageBytes ?? 0,
  };
  const podCgroups =
    deps.podContainerManager ??
    createPodContainerManager({
      cgroupsPerQOS: deps.cgroupsPerQOS ?? true,
      cgroupRoot: deps.cgroupRoot ?? '/',
      cgroupDriver: deps.cgroupDriver,
      systemdUnits: deps.systemdUnits,
      allocatableMilliCPU: allocatable.cpu,
      kubepods: deps.kubepodsCgroup,
      podPidsLimit: deps.podPidsLimit,
      reservedCgroups: deps.reservedCgroups,
      mounts: deps.cgroupMounts,
    });
  return new KubeGenericRuntimeManager({
    runtime: deps.runtime,
    imageManager: deps.imageManager,
    clock: deps.clock ?? realClock,
    podLogsDir: deps.podLogsDir,
    rootDir: deps.rootDir,
    actuated: deps.actuated,
    nodeName: deps.nodeName,
    hostIP: deps.hostIP ?? '',
    hostIPs: deps.hostIPs,
    dns: {
      clusterDNS: deps.clusterDNS ?? [],
      clusterDomain: deps.clusterDomain ?? '',
      resolvConf: deps.resolvConf ?? '/etc/resolv.conf',
    },
    memoryCapacity,
    allocatable,
    probeFailure: deps.probeFailure,
    startupProbeSucceeded: deps.startupProbeSucceeded,
    recorder: deps.recorder,
    crashLoopBackOff: backOffSettings(deps.crashLoopBackOff),
    gcPolicy: { ...DEFAULT_GC_POLICY, ...deps.gcPolicy },
    objects: deps.objects,
    services: deps.services,
    pullSecretsFor: deps.pullSecretsFor,
    runtimeClasses: deps.runtimeClasses,
    ephemeralRefusal: deps.ephemeralRefusal,
    userNamespaces: deps.userNamespaces,
    podCgroups,
    hookTimeoutMs: deps.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    seccompDefault: deps.seccompDefault,
    deviceOptions: deps.deviceOptions,
    volumes: deps.volumes,
    criStarts: createCriStartScheduler(deps.criStartConcurrency ?? CRI_START_CONCURRENCY),
  });
}
