/**
 * Pod volumes (upstream pkg/kubelet/volumemanager, pkg/volume and pkg/volume/util/subpath): the
 * VolumeManager factory, the plugins, and the pod directory layout
 * <rootDir>/pods/<uid>/volumes/<plugin>/<name> (pod-dirs.ts).
 */
import { totalmem, cpus } from 'node:os';
import type { EventRecorder } from '../events/index.js';
import type { NodeAllocatable } from '../fieldpath/index.js';
import { hostMounter, type Mounter } from './mount.js';
import { DEFAULT_VOLUME_PLUGINS } from './plugins/index.js';
import { bindSubPathTs } from './subpath/subpath-bind-ts.js';
import type { BindSubPath } from './subpath/subpath-types.js';
import type { CsiDrivers } from './csi/csi-types.js';
import type { PodObjectSource, StorageObjectSource, VolumeManager, VolumePlugin } from './types.js';
import { LocalVolumeManager } from './volume-manager.js';

export type {
  MountedVolume,
  PodObjectSource,
  PodVolumes,
  RuntimeVolumes,
  Volume,
  VolumeHost,
  VolumeManager,
  VolumePlugin,
} from './types.js';
export type { Mounter, TmpfsOptions } from './mount.js';
export type { SubPathMount } from './subpath/subpath.js';
export type { BindSubPath } from './subpath/subpath-types.js';
export { makePodDataDirs, setupDataDirs, DATA_DIR_MODE } from './pod-dirs.js';
export { DEFAULT_VOLUME_PLUGINS, csiPlugin } from './plugins/index.js';
export { createCsiPluginManager, type CsiPluginManager, type PluginManager } from './csi/index.js';
export { createCsiPlugin, type CsiVolumePlugin, type CsiPluginOptions } from './csi/csi-plugin.js';
export type { CsiDrivers } from './csi/csi-types.js';
export { volumesNotReady, VolumesNotReadyError, FAILED_MOUNT, FAILED_ATTACH_VOLUME } from './volume-wait.js';

export interface VolumeManagerOptions {
  /** upstream --root-dir (default /var/lib/kubelet): volumes live under <rootDir>/pods/<uid>/volumes. */
  rootDir: string;
  /** For spec.nodeName in downwardAPI payloads. */
  nodeName?: string;
  hostIP?: string;
  /** What a missing limit means to resourceFieldRef, and the default tmpfs size; default: the host's CPUs and memory. */
  allocatable?: NodeAllocatable;
  /** ConfigMaps, Secrets and service account tokens (API server mode). */
  objects?: PodObjectSource;
  /** PVCs, PVs, CSIDrivers, VolumeAttachments (API server mode); absent: CSI-served volumes wait with an error. */
  storage?: StorageObjectSource;
  /** The CSI drivers registered through plugins_registry. */
  csiDrivers?: CsiDrivers;
  /** The host's mounts (default: mount(8) / umount(8); tests: a fake). */
  mounter?: Mounter;
  /** The subPath hot path (src/cmd/hot-paths.ts picks it; default: the TypeScript twin). */
  bindSubPath?: BindSubPath;
  /** The plugins, in probe order (default: DEFAULT_VOLUME_PLUGINS). */
  plugins?: readonly VolumePlugin[];
  /** Where the volume manager's pod events go (FileSystemResizeSuccessful, FileSystemResizeFailed). */
  recorder?: EventRecorder;
}

export function createVolumeManager(opts: VolumeManagerOptions): VolumeManager {
  const host = {
    rootDir: opts.rootDir,
    mounter: opts.mounter ?? hostMounter,
    allocatable: opts.allocatable ?? {
      cpu: Math.max(1, cpus().length) * 1000,
      memory: totalmem(),
      ephemeralStorage: 0,
    },
    objects: opts.objects,
    storage: opts.storage,
    csiDrivers: opts.csiDrivers,
    nodeName: opts.nodeName ?? '',
    hostIP: opts.hostIP ?? '',
  };
  return new LocalVolumeManager(
    host,
    opts.plugins ?? DEFAULT_VOLUME_PLUGINS,
    opts.bindSubPath ?? bindSubPathTs,
    opts.recorder,
  );
}
