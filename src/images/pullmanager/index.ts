/**
 * KEP-2535 (KubeletEnsureSecretPulledImages): the file-backed pull records and the credential
 * verification policy that decide whether a pod may use an image already on the node.
 */
import { PullManager, type ListedImage } from './pull-manager.js';
import { verificationPolicy, type VerificationPolicy } from './policy.js';
import { FsPullRecords } from './records.js';

export type { ImagePullManager, ListedImage } from './pull-manager.js';
export { PullManager, mergeNewCreds, mergePullSecrets } from './pull-manager.js';
export { verificationPolicy, VERIFICATION_POLICIES, type VerificationPolicy } from './policy.js';
export { FsPullRecords, cacheFilename, type ImagePullCredentials, type ImagePullSecret } from './records.js';

export interface PullManagerConfig {
  /** --root-dir: the records live under <rootDir>/image_manager. */
  rootDir: string;
  /** imagePullCredentialsVerificationPolicy, validated at config load. */
  policy: VerificationPolicy;
  /** preloadedImagesVerificationAllowlist. */
  allowlist: readonly string[];
  /** The runtime's images, for turning a previous run's pull intents into records. */
  listImages: () => Promise<ListedImage[]>;
}

/** upstream NewImagePullManager over NewFSPullRecordsAccessor, initialized from the last run's intents. */
export async function createPullManager(cfg: PullManagerConfig): Promise<PullManager> {
  const manager = new PullManager({
    store: new FsPullRecords(cfg.rootDir),
    requireVerification: verificationPolicy(cfg.policy, cfg.allowlist),
  });
  await manager.initialize(cfg.listImages);
  return manager;
}
