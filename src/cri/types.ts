/**
 * The slice of CRI runtime.v1 (RuntimeService, ImageService) that kubelet-ts uses, in camelCase
 * TypeScript. Wire names and field numbers live in src/cri/proto/api.proto; the client in this
 * folder converts between the two. int64 timestamps are nanoseconds since the epoch as bigint so
 * that ordering is exact. Enums are the proto enum names as strings.
 */

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type Labels = Record<string, string>;

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}
/** A runtime handler the runtime reports in StatusResponse.runtime_handlers ('' = the default one). */
export interface RuntimeHandler {
  name: string;
  supportsRecursiveReadOnlyMounts: boolean;
  supportsUserNamespaces: boolean;
}

/** StatusResponse.features: what the CRI implementation supports, independent of handlers. */
export interface RuntimeFeatures {
  supplementalGroupsPolicy: boolean;
}

export interface RuntimeStatus {
  conditions: RuntimeCondition[];
  /** Empty when the runtime reports none (containerd before 2.0). */
  handlers: RuntimeHandler[];
  /** Absent when the runtime does not send the field (upstream: node status.features unset). */
  features?: RuntimeFeatures;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}
export interface ContainerMetadata {
  name: string;
  attempt: number;
}
export interface KeyValue {
  key: string;
  value: string;
}
export interface PortMapping {
  protocol: Protocol;
  containerPort: number;
  hostPort: number;
  hostIp: string;
}
export interface DNSConfig {
  servers: string[];
  searches: string[];
  options: string[];
}
export interface NamespaceOption {
  network: NamespaceMode;
  pid: NamespaceMode;
  ipc: NamespaceMode;
  /** The container whose namespace a TARGET mode joins (an ephemeral container's target). */
  targetId?: string;
  /** CRI userns_options: NODE (the host's) or POD with the pod's mappings (src/userns). */
  usernsOptions?: UserNamespace;
}

/** CRI IDMapping: `length` IDs from container_id inside map to host_id outside. */
export interface IDMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/** CRI UserNamespace (NamespaceOption.userns_options). */
export interface UserNamespace {
  mode: NamespaceMode;
  uids: IDMapping[];
  gids: IDMapping[];
}

export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
  /** hugetlb limits by the kernel's page size name ("2MB"), in bytes. */
  hugepageLimits?: HugepageLimit[];
}

export interface HugepageLimit {
  pageSize: string;
  limit: number;
}

/** CRI SecurityProfile (seccomp, AppArmor); localhostRef only with Localhost. */
export interface SecurityProfile {
  profileType: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhostRef?: string;
}

/** CRI SELinuxOption: the label parts; a runtime on a host without SELinux ignores them. */
export interface SELinuxOption {
  user: string;
  role: string;
  type: string;
  level: string;
}

/** CRI SupplementalGroupsPolicy: Merge (the enum's zero) adds the image's groups of the user. */
export type SupplementalGroupsPolicy = 'Merge' | 'Strict';

export interface Capability {
  addCapabilities: string[];
  dropCapabilities: string[];
  addAmbientCapabilities?: string[];
}

/** runtime.v1.LinuxSandboxSecurityContext: every field (seccompProfilePath is deprecated, never set). */
export interface LinuxSandboxSecurityContext {
  namespaceOptions: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: { value: number };
  runAsGroup?: { value: number };
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  privileged?: boolean;
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
  seccompProfilePath?: string;
}

/**
 * runtime.v1.LinuxContainerSecurityContext: every field. apparmorProfile and seccompProfilePath
 * are the deprecated string forms of apparmor and seccomp (upstream still fills apparmorProfile).
 */
export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  selinuxOptions?: SELinuxOption;
  runAsUser?: { value: number };
  runAsGroup?: { value: number };
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  supplementalGroupsPolicy?: SupplementalGroupsPolicy;
  noNewPrivs?: boolean;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
  apparmorProfile?: string;
  seccompProfilePath?: string;
}

/** runtime.v1.LinuxContainerUser: the identity of the container's first process. */
export interface LinuxContainerUser {
  uid: number;
  gid: number;
  supplementalGroups: number[];
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname: string;
  logDirectory: string;
  dnsConfig?: DNSConfig;
  portMappings: PortMapping[];
  labels: Labels;
  annotations: Labels;
  linux: {
    cgroupParent?: string;
    securityContext: LinuxSandboxSecurityContext;
    /** Admitted pod sysctls, dotted names (kubelet/sysctls.ts). */
    sysctls?: Record<string, string>;
  };
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
}

/** A host device node given to a container (CRI Device; from device plugins' Allocate answers). */
export interface Device {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

/** A CDI device by its fully qualified name (vendor.com/class=name); the runtime resolves it from its CDI specs. */
export interface CDIDevice {
  name: string;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: { image: string };
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValue[];
  mounts: Mount[];
  /** CRI field 8: device nodes (device plugins' Allocate answers). */
  devices?: Device[];
  labels: Labels;
  annotations: Labels;
  /** Relative to the sandbox's logDirectory. */
  logPath: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: {
    resources?: LinuxContainerResources;
    securityContext?: LinuxContainerSecurityContext;
  };
  /** CRI field 17 `CDI_devices` (proto-loader's camelCase of it): from device plugins' Allocate responses. */
  CDIDevices?: CDIDevice[];
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: bigint;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: bigint;
  network: { ip: string; additionalIps: string[] };
  /** Network namespace mode the sandbox was created with (NODE for hostNetwork). */
  networkNamespaceMode: NamespaceMode;
  labels: Labels;
  annotations: Labels;
  runtimeHandler?: string;
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: string;
  imageRef: string;
  /** The runtime's image id (CRI image_id, newer runtimes only; '' from containerd 1.6). */
  imageId?: string;
  state: ContainerState;
  createdAt: bigint;
  labels: Labels;
  annotations: Labels;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  image: string;
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  logPath: string;
  /** The runtime's image id (CRI image_id, newer runtimes only). */
  imageId?: string;
  /** The resources the runtime applied, when it reports them. */
  resources?: LinuxContainerResources;
  /** The mounts the container was created with (CRI mounts; the termination message file among them). */
  mounts?: Mount[];
  /** CRI ContainerStatus.user, when the runtime reports it (containerd 2.x; not 1.6/1.7). */
  user?: { linux?: LinuxContainerUser };
}

export interface ContainerFilter {
  id?: string;
  state?: ContainerState;
  podSandboxId?: string;
  labelSelector?: Labels;
}

export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxState;
  labelSelector?: Labels;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: bigint;
  pinned: boolean;
  /** The image's default user as a uid, when it is numeric (CRI Image.uid). */
  uid?: bigint;
  /** The image's default user as a name, when it is not numeric (CRI Image.username). */
  username?: string;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface FilesystemUsage {
  timestamp: bigint;
  mountpoint: string;
  usedBytes: bigint;
  inodesUsed: bigint;
}

/** Per-call options. timeoutMs replaces the call's default deadline. */
export interface CallOptions {
  timeoutMs?: number;
}

export interface CpuUsage {
  timestamp: bigint;
  usageCoreNanoSeconds?: bigint;
  usageNanoCores?: bigint;
}
export interface MemoryUsage {
  timestamp: bigint;
  workingSetBytes?: bigint;
  availableBytes?: bigint;
  usageBytes?: bigint;
  rssBytes?: bigint;
  pageFaults?: bigint;
  majorPageFaults?: bigint;
}

/** runtime.v1.ContainerStats, flattened: the attributes are at the top level. */
export interface ContainerStats {
  id: string;
  metadata: ContainerMetadata;
  labels: Labels;
  annotations: Labels;
  cpu?: CpuUsage;
  memory?: MemoryUsage;
  writableLayer?: FilesystemUsage;
}

export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: Labels;
}

export type ContainerEventType =
  'CONTAINER_CREATED_EVENT' | 'CONTAINER_STARTED_EVENT' | 'CONTAINER_STOPPED_EVENT' | 'CONTAINER_DELETED_EVENT';

/** One message of RuntimeService.GetContainerEvents (the evented PLEG's input). */
export interface ContainerEvent {
  containerId: string;
  type: ContainerEventType;
  createdAt: bigint;
  podSandboxStatus?: PodSandboxStatus;
  containersStatuses: ContainerStatus[];
}

/** runtime.v1.RuntimeService. Every call has a deadline; failures are CriError. */
export interface RuntimeService {
  /** This client with every call cancelled when `signal` fires (absent in fakes: calls are not cancellable). */
  withSignal?(signal: AbortSignal): RuntimeService;
  version(opts?: CallOptions): Promise<VersionResponse>;
  status(opts?: CallOptions): Promise<RuntimeStatus>;
  /**
   * Whether the runtime applies ContainerConfig.CDIDevices (cri/cdi.ts: Status(verbose)'s
   * enableCDI), cached. Absent (fakes): treat as no CDI.
   */
  cdiSupported?(): Promise<boolean>;
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  stopPodSandbox(podSandboxId: string): Promise<void>;
  removePodSandbox(podSandboxId: string): Promise<void>;
  podSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;
  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /** timeoutSeconds: the grace period before SIGKILL. The call deadline is extended to cover it. */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  /** In-place resize: the runtime applies new cpu/memory to a running container. */
  updateContainerResources(containerId: string, linux: LinuxContainerResources): Promise<void>;
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  close(): void;
}

/** runtime.v1.ImageService. */
export interface ImageService {
  /** This client with every call cancelled when `signal` fires (absent in fakes). */
  withSignal?(signal: AbortSignal): ImageService;
  listImages(): Promise<Image[]>;
  /** undefined when the runtime does not have the image. */
  imageStatus(image: string): Promise<Image | undefined>;
  /** Returns the image reference (digest) the runtime pulled. */
  pullImage(image: string, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string>;
  removeImage(image: string): Promise<void>;
  imageFsInfo(): Promise<FilesystemUsage[]>;
  close(): void;
}
