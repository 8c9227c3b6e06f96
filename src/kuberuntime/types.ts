/**
 * The runtime manager's boundary (upstream kubecontainer.Runtime): what the kubelet, the PLEG
 * and the status code see of containers, independent of CRI wire types.
 */
import type { Pod } from '../api/types.js';
import type {
  ContainerStatus as CriContainerStatus,
  LinuxContainerResources,
  LinuxContainerUser,
  PodSandboxStatus,
  RuntimeStatus,
} from '../cri/types.js';

export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** Container as seen by a list (cheap, from labels). */
export interface RuntimeContainer {
  id: string;
  name: string;
  image: string;
  imageRef: string;
  /** Hash of the container spec it was created from (label), used to detect spec changes. */
  hash: string;
  state: RuntimeContainerState;
  /** Nanoseconds since the epoch. */
  createdAt: bigint;
  podSandboxId: string;
  /**
   * Grace period recorded on the container (pod deletion grace period, else the pod's
   * terminationGracePeriodSeconds), so an orphaned container is stopped as its pod asked even
   * when the agent no longer has the pod.
   */
  terminationGracePeriodSeconds?: number;
}

export interface RuntimeSandbox {
  id: string;
  ready: boolean;
  attempt: number;
  createdAt: bigint;
}

/** A pod as found in the runtime (upstream kubecontainer.Pod). */
export interface RunningPod {
  uid: string;
  name: string;
  namespace: string;
  containers: RuntimeContainer[];
  sandboxes: RuntimeSandbox[];
}

/** Detailed status of one container (upstream kubecontainer.Status). */
export interface ContainerRuntimeStatus {
  id: string;
  name: string;
  state: RuntimeContainerState;
  createdAt: Date;
  startedAt?: Date;
  finishedAt?: Date;
  exitCode: number;
  image: string;
  imageRef: string;
  restartCount: number;
  reason: string;
  message: string;
  hash: string;
  podSandboxId: string;
  /** The resources the runtime reports it applied (CRI ContainerStatus.resources), when it does. */
  resources?: LinuxContainerResources;
  /** The identity of its first process (CRI ContainerStatus.user), when the runtime reports it. */
  user?: { linux?: LinuxContainerUser };
}

export interface SandboxRuntimeStatus {
  id: string;
  ready: boolean;
  attempt: number;
  createdAt: bigint;
  ip: string;
  additionalIps: string[];
  hostNetwork: boolean;
}

/** Everything the runtime knows about one pod (upstream kubecontainer.PodStatus). */
export interface PodRuntimeStatus {
  uid: string;
  name: string;
  namespace: string;
  ips: string[];
  /** Newest first. */
  sandboxStatuses: SandboxRuntimeStatus[];
  /** Newest first per container name. */
  containerStatuses: ContainerRuntimeStatus[];
  /** When this status was observed (for the PLEG cache). */
  timestamp: Date;
}

/** The reason a container is waiting, kept between syncs so the status can report it. */
export interface ContainerWaiting {
  reason: string;
  message: string;
}

/** Result of one SyncPod: per-container start failures that status should show as waiting. */
export interface PodSyncResult {
  waiting: Map<string, ContainerWaiting>;
  /** Set when the sync failed as a whole (e.g. the sandbox could not be created). */
  error?: Error;
  /** Something was killed, created or started: the runtime state moved, relist now. */
  changed?: boolean;
  /** An in-place resize was actuated (or attempted): the status has new resources to show. */
  resized?: boolean;
  /** An in-place resize failed (upstream ErrResizePodInPlace): PodResizeInProgress says why. */
  resizeError?: string;
}

export interface Runtime {
  /** Runtime name/version for logs and node info. */
  version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }>;
  /** The runtime's conditions (upstream Runtime.Status): RuntimeReady and NetworkReady. */
  status(): Promise<RuntimeStatus>;
  /** Pods from sandbox and container labels; `all` includes exited containers and not-ready sandboxes. */
  getPods(all: boolean): Promise<RunningPod[]>;
  /** `previous`: the pod's last known status; its sandboxes and containers are asked for beside the lists. */
  getPodStatus(uid: string, name: string, namespace: string, previous?: PreviousPodStatus): Promise<PodRuntimeStatus>;
  /**
   * The pod's status with the runtime's own report of an exit written in (runtime-status.ts);
   * undefined when the report names nothing the status holds.
   */
  patchPodStatus(previous: PodRuntimeStatus, report: RuntimeExitReport): Promise<PodRuntimeStatus | undefined>;
  /**
   * Make the runtime match the pod spec: sandbox, containers, restarts per policy. The pod's
   * volumes must be mounted first (VolumeManager.mountPodVolumes, as Kubelet.syncPod does). When `signal`
   * fires, its CRI calls and image pulls are cancelled and it rejects with the cancellation.
   */
  syncPod(pod: Pod, status: PodRuntimeStatus, signal?: AbortSignal): Promise<PodSyncResult>;
  /** Stop every container and the sandbox. gracePeriodSeconds overrides the pod's. */
  killPod(pod: Pod | undefined, running: RunningPod, gracePeriodSeconds?: number): Promise<void>;
  /** Remove exited containers and stopped sandboxes of pods that no longer exist, and old dead instances. */
  garbageCollect(activePodUids: ReadonlySet<string>): Promise<void>;
  /**
   * upstream cleanupOrphanedPodCgroups, for housekeeping: removes the pod cgroups of the pods
   * `keep` does not hold (orphaned-pod-cgroups.ts).
   */
  cleanupOrphanedPodCgroups(keep: (uid: string) => Promise<boolean>): Promise<void>;
  /**
   * upstream podContainerDeletor: queue the removal of the pod's dead containers of the named
   * container's name beyond the newest max(maxPerPodContainer, 1); every dead container of the
   * pod when removeAll. Returns at once (container-deletor.ts).
   */
  deleteContainersInPod(exitedContainerId: string, status: PodRuntimeStatus, removeAll: boolean): void;
}

/**
 * The pod's last known status, for getPodStatus: its sandboxes' and containers' statuses are asked
 * for at once, beside the lists, instead of after them (one round trip instead of two when nothing
 * was added). What the lists no longer show is dropped; what they add is asked for after them.
 */
export type PreviousPodStatus = Pick<PodRuntimeStatus, 'sandboxStatuses' | 'containerStatuses'>;

/**
 * What the runtime said of a pod as it reported an exit: a CRI stop event's container statuses
 * and sandbox, or one container's ContainerStatus.
 */
export interface RuntimeExitReport {
  containers: readonly CriContainerStatus[];
  sandbox?: PodSandboxStatus;
}

/** ConfigMaps, Secrets and tokens: defined by the volume manager, which reads them too. */
export type { PodObjectSource } from '../volume/types.js';
