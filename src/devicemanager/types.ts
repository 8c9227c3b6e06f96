/**
 * The device manager's types: the v1beta1 messages as proto-loader decodes them (camelCase
 * fields), what the manager hands the runtime for one container, and the DeviceManager interface
 * the kubelet uses (upstream cm/devicemanager/types.go Manager).
 */
import type { Container, Pod } from '../api/types.js';
import type { PluginHandler } from '../pluginmanager/index.js';

export interface NumaNode {
  /** int64 on the wire, a decimal string with our loader options. */
  ID: string;
}

export interface Device {
  ID: string;
  health: string;
  topology: { nodes: NumaNode[] } | null;
}

export interface DevicePluginOptions {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

export interface RegisterRequest {
  version: string;
  endpoint: string;
  resourceName: string;
  options: DevicePluginOptions | null;
}

export interface MountSpec {
  containerPath: string;
  hostPath: string;
  readOnly: boolean;
}

export interface DeviceSpec {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

export interface ContainerAllocateResponse {
  envs: Record<string, string>;
  mounts: MountSpec[];
  devices: DeviceSpec[];
  annotations: Record<string, string>;
  cdiDevices: Array<{ name: string }>;
}

/**
 * What the runtime adds to one container (upstream DeviceRunContainerOptions): envs before the
 * container's own, mounts before volume mounts, devices, annotations the kubelet's own keys
 * override, and CDI device names (CRI CDI_devices).
 */
export interface DeviceRunContainerOptions {
  envs: Array<{ name: string; value: string }>;
  mounts: Array<{ name: string; containerPath: string; hostPath: string; readOnly: boolean; selinuxRelabel: false }>;
  devices: Array<{ pathOnHost: string; pathInContainer: string; permissions: string }>;
  annotations: Array<{ name: string; value: string }>;
  cdiDevices: Array<{ name: string }>;
}

/** One device as the pod resources API shows it: its NUMA nodes, none without topology. */
export interface DeviceInstance {
  numaNodes: number[];
}

/** resource name → device ID → instance (upstream ResourceDeviceInstances). */
export type ResourceDeviceInstances = Record<string, Record<string, DeviceInstance>>;

/** Node status figures: device counts per resource, and resources whose plugin is gone for good. */
export interface DeviceCapacity {
  capacity: Record<string, number>;
  allocatable: Record<string, number>;
  /** Resources removed by this call (grace period over): node status writes capacity 0 for them. */
  removed: string[];
}

/** What the manager needs from the kubelet at start (upstream Start's arguments). */
export interface DeviceManagerStartOptions {
  /** The pods that still hold resources (upstream ActivePodsFunc). */
  activePods: () => Pod[];
  /** Whether every pod source has been seen once (upstream SourcesReady.AllReady). */
  sourcesReady: () => boolean;
  /**
   * The containers the runtime reported running when the agent started, as (pod UID, container
   * name) pairs (upstream initialContainers + initialContainerRunningSet).
   */
  initialRunningContainers?: ReadonlyArray<{ podUid: string; containerName: string }>;
}

export interface DeviceManager {
  /** Reads the checkpoint, cleans stale sockets and serves Registration on kubelet.sock. */
  start(opts: DeviceManagerStartOptions): Promise<void>;
  /** Stops the registration server and every plugin client. */
  stop(): Promise<void>;
  /**
   * Chooses and allocates devices for one container (init containers first, in order); throws a
   * DeviceAllocationError with upstream's text (UnexpectedAdmissionError at admission).
   */
  allocate(pod: Pod, container: Container): Promise<void>;
  /**
   * The devices, mounts, envs, annotations and CDI names for one container at creation; calls
   * PreStartContainer where the plugin asks for it, and allocates again if the cache lost the pod.
   */
  deviceRunContainerOptions(pod: Pod, container: Container): Promise<DeviceRunContainerOptions | undefined>;
  /** Capacity and allocatable per resource; drops resources whose grace period is over. */
  getCapacity(): DeviceCapacity;
  /**
   * Raises `allocatable` (resource → count) to at least the devices allocated, if the pod holds
   * devices (upstream UpdatePluginResources / sanitizeNodeAllocatable). Returns a new record.
   */
  sanitizeAllocatable(pod: Pod, allocatable: Readonly<Record<string, number>>): Record<string, number>;
  /** Frees the devices of pods no longer active (only once all sources are ready). */
  updateAllocatedDevices(): void;
  /** The devices of one container (pod resources API List/Get). */
  getDevices(podUid: string, containerName: string): ResourceDeviceInstances;
  /** Every healthy device known (pod resources API GetAllocatableResources). */
  getAllocatableDevices(): ResourceDeviceInstances;
  /** True when the checkpoint directory holds no checkpoint: the node was recreated. */
  shouldResetExtendedResourceCapacity(): boolean;
  /** Whether `resource` is a device plugin resource (registered, or allocated from the checkpoint). */
  isDevicePluginResource(resource: string): boolean;
  /** The handler of the DevicePlugin type for the plugin manager (plugins_registry path). */
  readonly pluginHandler: PluginHandler;
  /** Undefined while the registration server serves; else why not (healthz check "device-plugin"). */
  healthy(): string | undefined;
}
