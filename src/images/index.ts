/**
 * Images (upstream pkg/kubelet/images and the keyring of pkg/credentialprovider): the
 * ImageManager SyncPod asks for each container's image, and image garbage collection. The
 * composition root builds both and passes them in.
 */
export type { ImageManager, ImageGCManager, ImageGCResult, PullPolicy, PullSecret } from './types.js';
export { createImageManager, type ImageManagerOptions } from './image-manager.js';
export { DockerKeyring, parseImageRegistry } from './keyring.js';
export {
  createImageGCManager,
  ImageGCPeriodMs,
  ImageGCFailedReason,
  FreeDiskSpaceFailedReason,
  type FsCapacity,
  type ImageGCOptions,
  type ImageGCPolicy,
} from './image-gc.js';
