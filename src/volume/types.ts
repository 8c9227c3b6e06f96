/**
 * The volume manager's boundary (upstream pkg/kubelet/volumemanager and pkg/volume): what the
 * kubelet and the runtime manager see of a pod's volumes, and the one interface every volume
 * plugin implements. Types only; the implementations are volume-manager.ts and plugins/.
 */
import type {
  V1CSIDriver,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Volume,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import type { Pod } from '../api/types.js';
import type { VolumeError } from '../errors.js';
import type { NodeAllocatable } from '../fieldpath/index.js';
import type { CsiDrivers, CsiMountedInfo } from './csi/csi-types.js';
import type { Mounter } from './mount.js';
import type { SubPathMount } from './subpath/subpath.js';

export type Volume = V1Volume;

/**
 * ConfigMaps, Secrets and service account tokens for volumes and env (API server mode; upstream
 * the configmap/secret managers and the token manager). Lookups are synchronous reads of a
 * cache: `undefined` = not synced yet (the container waits: CreateContainerConfigError, retried),
 * `null` = does not exist.
 */
export interface PodObjectSource {
  configMap(
    namespace: string,
    name: string,
  ): { data?: Record<string, string>; binaryData?: Record<string, string> } | null | undefined;
  /** data values are base64, as on the API. */
  secret(namespace: string, name: string): { data?: Record<string, string> } | null | undefined;
  serviceAccountToken(pod: Pod, audience: string | undefined, expirationSeconds: number): string | undefined;
}

/**
 * The storage API objects a CSI volume is resolved through (API server mode; upstream the
 * desired state populator's PVC/PV GETs, the CSIDriver lister, the attacher's VolumeAttachment
 * GET and the node's status). `null` = the object does not exist; an unreachable API server
 * throws (the volume waits and is retried, as any volume not ready).
 */
export interface StorageObjectSource {
  persistentVolumeClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | null>;
  persistentVolume(name: string): Promise<V1PersistentVolume | null>;
  csiDriver(name: string): Promise<V1CSIDriver | null>;
  /** upstream csiAttacher: the VolumeAttachment csi-<sha256(handle+driver+node)> of an attachable volume. */
  volumeAttachment(name: string): Promise<V1VolumeAttachment | null>;
  /** node.status.volumesAttached[].name as last read (kubernetes.io/csi/<driver>^<handle>). */
  attachedVolumes(): ReadonlySet<string>;
  /** A Secret's data, base64-decoded (the PV's nodeStage/nodePublish/nodeExpandSecretRef). */
  secret(namespace: string, name: string): Promise<Record<string, string> | null>;
  /** A merge patch of the claim's status subresource (after NodeExpandVolume). */
  patchPersistentVolumeClaimStatus(namespace: string, name: string, patch: object): Promise<void>;
}

/**
 * What plugins get from the node (upstream VolumeHost): where pod directories live, the host's
 * mounts, what a missing limit means, and the API objects.
 */
export interface VolumeHost {
  /** upstream --root-dir: volumes live under <rootDir>/pods/<uid>/volumes/<plugin>/<name>. */
  rootDir: string;
  mounter: Mounter;
  /** For resourceFieldRefs and the default tmpfs size. */
  allocatable: NodeAllocatable;
  /** ConfigMaps, Secrets and tokens (API server mode); absent: those volumes are errors. */
  objects?: PodObjectSource | undefined;
  /** PVCs, PVs, CSIDrivers, VolumeAttachments (API server mode); absent: those volumes are errors. */
  storage?: StorageObjectSource | undefined;
  /** The CSI drivers registered through plugins_registry (the plugin manager's CSI handler). */
  csiDrivers?: CsiDrivers | undefined;
  nodeName: string;
  hostIP: string;
}

/** One volume as set up on the host (upstream MountedVolume). */
export interface MountedVolume {
  /** The directory (or file, for a hostPath) the containers' volumeMounts bind. */
  hostPath: string;
  /** The plugin mounts it read-only whatever the volumeMount says (API data volumes). */
  readOnly: boolean;
  /** A CSI volume: what stats, expansion and teardown need to reach it through its driver. */
  csi?: CsiMountedInfo;
}

/**
 * A volume plugin (upstream volume.VolumePlugin with its Mounter and Unmounter): it recognises
 * the volumes it serves, sets one up for a pod, and tears one down. A CSI driver is one more
 * implementation of this interface.
 */
export interface VolumePlugin {
  /** upstream's escaped plugin name, the directory under pods/<uid>/volumes (kubernetes.io~empty-dir). */
  readonly name: string;
  /** upstream RequiresRemount: set up again on every sync (API data refreshed, hostPath checked). */
  readonly requiresRemount: boolean;
  /** upstream CanSupport: this plugin serves the volume. */
  canSupport(volume: Volume): boolean;
  /** upstream SetUp: idempotent; a problem is a VolumeError naming the volume. */
  setUp(pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume>;
  /**
   * upstream TearDown of one volume directory of this plugin (pods/<uid>/volumes/<name>/<volume>):
   * what is mounted there unmounted, then the data deleted; a mount that will not go throws
   * and nothing is deleted through it.
   */
  tearDown(dir: string, host: VolumeHost): Promise<void>;
  /**
   * What the plugin mounted outside any pod's dir and no pod uses any more (CSI global mounts
   * whose last publisher is gone while the agent was down); garbage collection calls it.
   */
  cleanupOrphans?(host: VolumeHost): Promise<void>;
}

/** A pod's volumes after a mount: those set up, and the error of each that could not be. */
export interface PodVolumes {
  mounted: ReadonlyMap<string, MountedVolume>;
  /** The last set-up error of each volume, cleared when it succeeds. */
  errors: ReadonlyMap<string, VolumeError>;
}

/**
 * The volume manager (upstream volumemanager.VolumeManager): the desired state (the volumes the
 * pod's containers mount) and the actual state (what is set up) of each pod.
 */
export interface VolumeManager {
  /**
   * upstream WaitForAttachAndMount, before the runtime's SyncPod: sets up each volume a
   * container of the pod mounts that is not set up yet, and again those whose plugin requires
   * remount. One volume's failure does not stop the others: it is in the result's errors, and
   * the containers that mount it fail to start with it (CreateContainerConfigError).
   */
  mountPodVolumes(pod: Pod): Promise<PodVolumes>;
  /** upstream GetMountedVolumesForPod: what the last mountPodVolumes of the pod left. */
  getMountedVolumesForPod(uid: string): PodVolumes;
  /**
   * The host path to hand the runtime for one subPath / subPathExpr volumeMount (upstream the
   * kubelet's makeMounts with util/subpath): a bind of the checked path (subpath/).
   */
  prepareSubPath(m: SubPathMount): Promise<string>;
  /**
   * Tears a pod's volumes down once its containers are gone (terminated pods, and orphans the
   * garbage collector finds): subPath binds, each volume through its plugin, then the pod's
   * volume directories. Throws when a mount will not go; the next garbage collection retries.
   */
  unmountPodVolumes(uid: string): Promise<void>;
  /**
   * upstream GetVolumesInUse: the unique names (kubernetes.io/csi/<driver>^<handle>) of the
   * attachable volumes the node's pods want or still have mounted, for node.status.volumesInUse
   * (the attach/detach controller does not detach a volume listed there).
   */
  getVolumesInUse(): string[];
  /**
   * upstream podVolumesExist (PodResourcesAreReclaimed): the pod still has volumes set up, in the
   * actual state or as a mount point left under its volumes directory (after a restart). While
   * true, the pod object is not removed from the API server.
   */
  podVolumesExist(uid: string): Promise<boolean>;
  /** Each plugin's cleanupOrphans (garbage collection, after the pods that are gone). */
  cleanupOrphanedVolumes?(): Promise<void>;
}

/** What the runtime manager needs of the volume manager (upstream: the kubelet's RuntimeHelper). */
export type RuntimeVolumes = Pick<
  VolumeManager,
  'getMountedVolumesForPod' | 'prepareSubPath' | 'unmountPodVolumes' | 'cleanupOrphanedVolumes'
>;
