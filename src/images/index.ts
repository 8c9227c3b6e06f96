/**
 * Images (upstream pkg/kubelet/images and pkg/credentialprovider): the ImageManager SyncPod asks
 * for each container's image, its keyring (pull secrets, the node's docker config, credential
 * provider plugins), the pull records of KEP-2535 (pullmanager/), and image garbage collection. The
 * composition root builds both and passes them in.
 */
export type { ImageManager, ImageUser, ImageGCManager, ImageGCResult, PullPolicy, PullSecret } from './types.js';
export { createImageManager, type ImageManagerOptions } from './image-manager.js';
export { BasicDockerKeyring, makeDockerKeyring, repoToPull, type DockerConfig, type DockerKeyring } from './keyring.js';
export {
  createPullManager,
  type ImagePullManager,
  type PullManagerConfig,
  type VerificationPolicy,
} from './pullmanager/index.js';
export { createNodeKeyring, type NodeKeyringOptions } from './node-keyring.js';
export {
  createImageGCManager,
  ImageGCPeriodMs,
  ImageGCFailedReason,
  FreeDiskSpaceFailedReason,
  type FsCapacity,
  type ImageGCOptions,
  type ImageGCPolicy,
} from './image-gc.js';
