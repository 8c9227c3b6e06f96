/**
 * Node registration, node status and the node lease (upstream kubelet_node_status.go,
 * nodestatus/setters.go and nodelease). Interfaces and the small API shapes they use.
 */
import type { V1NodeCondition, V1Taint, V1Node, V1ContainerImage } from '@kubernetes/client-node';
import type { ApiClient } from '../apiclient/types.js';
import type { RuntimeFeatures, RuntimeHandler } from '../cri/types.js';
import type { EventRecorder } from '../events/types.js';
import type { NodeInfo } from '../node/node-info.js';
import type { Clock } from '../util/clock.js';

export type NodeCondition = V1NodeCondition;
export type Taint = V1Taint;
export type ApiNode = V1Node;
export type ContainerImage = V1ContainerImage;

export interface NodeStatusDeps {
  /** Rate-limited client: registration. */
  client: ApiClient;
  /** Heartbeat client: status updates and the lease. */
  heartbeat: ApiClient;
  node: NodeInfo;
  /** The node IPs (validated --node-ip, or the detected one): InternalIP addresses, in order. */
  nodeIPs: readonly string[];
  /** daemonEndpoints.kubeletEndpoint.Port. */
  kubeletPort: number;
  /** registerNode (default true): when false the Node must already exist. */
  registerNode: boolean;
  /** --register-with-taints. */
  taints: Taint[];
  /** Node root dir: ephemeral-storage capacity is its filesystem's size. */
  rootDir: string;
  /** Subtracted from ephemeral-storage allocatable (reserved + nodefs.available threshold). */
  reserved?: {
    systemReserved?: Readonly<Record<string, string>>;
    kubeReserved?: Readonly<Record<string, string>>;
    evictionHard?: Readonly<Record<string, string>>;
  };
  kubeletVersion: string;
  /** e.g. containerd://1.6.20; undefined while the runtime cannot be asked. */
  runtimeVersion(): Promise<string | undefined>;
  images(): Promise<ContainerImage[]>;
  /** The runtime handlers of the last CRI Status (status.runtimeHandlers); [] = none reported. */
  runtimeHandlers?: () => readonly RuntimeHandler[];
  /** CRI StatusResponse.features (status.features); undefined = the runtime sent none. */
  runtimeFeatures?: () => RuntimeFeatures | undefined;
  /** Why the node is not ready (runtime down, PLEG unhealthy, ...); empty = ready. */
  readinessErrors(): string[];
  /** MemoryPressure/DiskPressure/PIDPressure from the eviction manager; default all False. */
  pressureConditions?: () => NodeCondition[];
  /** nodeStatusUpdateFrequency (10 s) and nodeStatusReportFrequency (5 min). */
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  recorder?: EventRecorder;
  clock?: Clock;
  /**
   * upstream VolumesInUse setter: the volume manager's attachable volumes in use, for
   * status.volumesInUse; undefined (not synced yet, or no volume manager) leaves the Node's as is.
   */
  volumesInUse?: () => readonly string[] | undefined;
  /**
   * upstream nodeLister: the Node as the node informer (one watch of this Node) last saw it.
   * Each status update reads it instead of GETting the Node; a retry after a failure, or an
   * informer without the Node, GETs it (upstream tryUpdateNodeStatus). Absent: always a GET.
   */
  cachedNode?: () => ApiNode | undefined;
  /**
   * Extended resources from the device manager (devicemanager ExtendedResources.refresh),
   * counts per resource: into capacity and allocatable (upstream MachineInfo setter's
   * GetCapacity). A resource whose plugin is gone for good is 0 in both. Absent: none.
   */
  extendedResources?: () => ExtendedResourceCounts;
  /**
   * upstream ShouldResetExtendedResourceCapacity: the device checkpoint was missing at start (a
   * recreated node), so an existing Node's extended resources are set to 0 at registration.
   */
  resetExtendedResources?: boolean;
}

export interface ExtendedResourceCounts {
  capacity: Readonly<Record<string, number>>;
  allocatable: Readonly<Record<string, number>>;
}

export interface NodeStatusManager {
  /** Registers the node (retrying with back-off) and starts the status loop. */
  start(): void;
  /** Resolves once the node is registered (or found, with registerNode false). */
  registered(): Promise<void>;
  /** The Node's UID once known (lease owner reference, mirror pod owner reference). */
  nodeUID(): string | undefined;
  /**
   * status.volumesAttached[].name of the Node as last read (registration, each status GET and
   * PATCH answer): what the attach/detach controller attached here. No request of its own.
   */
  volumesAttached(): ReadonlySet<string>;
  /** One status update now (public for tests and the fast first update). */
  updateNodeStatus(): Promise<void>;
  /**
   * Ends the wait before the next status pass (devices changed); the pass still sends nothing
   * when the status is unchanged.
   */
  poke(): void;
  stop(): void;
}

export interface LeaseDeps {
  heartbeat: ApiClient;
  nodeName: string;
  /** nodeLeaseDurationSeconds (40); the lease is renewed every quarter of it (10 s). */
  leaseDurationSeconds: number;
  nodeUID(): string | undefined;
  clock?: Clock;
}

export interface LeaseController {
  start(): void;
  /** One ensure-and-renew attempt (public for tests). */
  renew(): Promise<void>;
  stop(): void;
}
