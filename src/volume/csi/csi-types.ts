/**
 * The CSI volume plugin's own types and on-disk layout (upstream pkg/volume/csi): what a pod's
 * volume resolves to (a PVC through its PV, an inline `csi` volume, a generic ephemeral volume's
 * claim), the CSIDriver object's policy, the vol_data.json each mount leaves beside it (read
 * back to tear down and to reconstruct after a restart), and the paths upstream uses, so that a
 * node moved between the two agents finds its mounts where it left them.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { CsiDriver } from './csi-registration.js';
import type { AccessMode } from './node-client.js';

/** upstream CSIPluginName, and its escaped form: the directory under pods/<uid>/volumes. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
export const CSI_POD_PLUGIN_DIR = 'kubernetes.io~csi';
export const VOL_DATA_FILE = 'vol_data.json';

/** storage.k8s.io/v1 CSIDriver spec as the node acts on it (defaults when the object is absent). */
export interface CsiDriverPolicy {
  /** Absent object: true (upstream: attachment is assumed required). */
  attachRequired: boolean;
  podInfoOnMount: boolean;
  fsGroupPolicy: 'ReadWriteOnceWithFSType' | 'File' | 'None';
  requiresRepublish: boolean;
  /** Absent object or field: ['Persistent']. */
  volumeLifecycleModes: ReadonlyArray<'Persistent' | 'Ephemeral'>;
}

export const DEFAULT_DRIVER_POLICY: CsiDriverPolicy = {
  attachRequired: true,
  podInfoOnMount: false,
  fsGroupPolicy: 'ReadWriteOnceWithFSType',
  requiresRepublish: false,
  volumeLifecycleModes: ['Persistent'],
};

/** A pod volume resolved to what the driver is called with (upstream: the volume.Spec plus lookups). */
export interface CsiVolumeSpec {
  /** The directory under kubernetes.io~csi: the PV's name, or the pod's volume name when inline. */
  specName: string;
  driver: string;
  volumeHandle: string;
  lifecycle: 'Persistent' | 'Ephemeral';
  readOnly: boolean;
  fsType?: string;
  mountOptions: string[];
  /** PV spec.csi.volumeAttributes, or the inline volume's. */
  volumeAttributes: Record<string, string>;
  /** Secret data (base64-decoded) from nodeStage/nodePublish/nodeExpandSecretRef. */
  stageSecrets?: Record<string, string>;
  publishSecrets?: Record<string, string>;
  expandSecrets?: Record<string, string>;
  accessMode: AccessMode;
  policy: CsiDriverPolicy;
  /** VolumeAttachment status.attachmentMetadata when attachRequired. */
  publishContext?: Record<string, string>;
  /** The claim and volume a PVC (or generic ephemeral) volume came through. */
  claim?: { namespace: string; name: string };
  pvName?: string;
}

/** What stats, expansion and teardown need of one mounted CSI volume (MountedVolume.csi). */
export interface CsiMountedInfo {
  driver: string;
  volumeHandle: string;
  /** The publish target: pods/<uid>/volumes/kubernetes.io~csi/<specName>/mount. */
  targetPath: string;
  /** The global mount when the driver stages (STAGE_UNSTAGE_VOLUME), else undefined. */
  stagingPath?: string;
  claim?: { namespace: string; name: string };
  pvName?: string;
}

/** pods/<uid>/volumes/kubernetes.io~csi/<specName>/vol_data.json (upstream's keys). */
export interface VolData {
  specVolID: string;
  volumeHandle: string;
  driverName: string;
  nodeName: string;
  attachmentID?: string;
  volumeLifecycleMode: 'Persistent' | 'Ephemeral';
}

/** The drivers registered on this node (CsiRegistrationHandler): name → endpoint and version. */
export interface CsiDrivers {
  get(name: string): CsiDriver | undefined;
}

/** upstream GetUniqueVolumeName for CSI: what node.status.volumesAttached/volumesInUse list. */
export function csiUniqueVolumeName(driver: string, volumeHandle: string): string {
  return `${CSI_PLUGIN_NAME}/${driver}^${volumeHandle}`;
}

/** upstream getAttachmentName: csi-<sha256(handle + driver + node)>, the VolumeAttachment's name. */
export function csiAttachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

/**
 * upstream makeDeviceMountPath: <root>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount,
 * with the stage's vol_data.json beside globalmount.
 */
export function csiStagingDir(rootDir: string, driver: string, volumeHandle: string): string {
  const sha = createHash('sha256').update(volumeHandle).digest('hex');
  return join(rootDir, 'plugins', CSI_PLUGIN_NAME, driver, sha);
}

export function csiStagingPath(rootDir: string, driver: string, volumeHandle: string): string {
  return join(csiStagingDir(rootDir, driver, volumeHandle), 'globalmount');
}
