/**
 * The image subsystem's interfaces (upstream pkg/kubelet/images/types.go): the ImageManager
 * SyncPod asks for a container's image, and the image garbage collector the GC loop runs.
 */
import type { Container, Pod } from '../api/types.js';
import type { Image, PodSandboxConfig } from '../cri/types.js';
import type { PullSecret } from './keyring.js';

export type { PullSecret } from './keyring.js';

/** The container's imagePullPolicy, defaulted from the image's tag as the apiserver does. */
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/**
 * Upstream ImageManager. A failure is a ContainerStartError whose `reason` is the waiting reason
 * the pod status shows: ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName or
 * ImageInspectError.
 */
export interface ImageManager {
  /**
   * The image reference (ID) to create `container` from, pulled first when the pull policy asks
   * for it. `pullSecrets`: the pod's resolved spec.imagePullSecrets (upstream
   * getPullSecretsForPod; SyncDeps.pullSecretsFor), tried before the node's keyring.
   */
  ensureImageExists(
    pod: Pod,
    container: Container,
    pullSecrets: readonly PullSecret[],
    podSandboxConfig: PodSandboxConfig,
  ): Promise<string>;
  /**
   * The same manager (limiter, back-off) with its CRI calls and its wait for a pull slot bound to
   * `signal`, as the pod worker cancels a sync (upstream passes the sync's context). A pull
   * cancelled this way is not the image's failure: no back-off, no event.
   */
  withSignal(signal: AbortSignal): ImageManager;
  /**
   * upstream kuberuntime getImageUser: the user the image runs as, from its status: the uid when
   * numeric, else the name; an image that names none runs as root (uid 0). Rejects when the runtime
   * cannot say (the caller's CreateContainerConfigError).
   */
  imageUser(imageRef: string): Promise<ImageUser>;
}

/** An image's default user: a numeric uid, or else a name. */
export interface ImageUser {
  uid?: bigint;
  username?: string;
}

/** Upstream ImageGCManager, the part the GC loop (src/kubelet/gc-loops.ts) drives. */
export interface ImageGCManager {
  /** Whether the periodic loop runs: the threshold rule (high < 100) or the max-age rule is on. */
  readonly enabled: boolean;
  /** Updates the last-used records; returns the current images and the ids in use. */
  detectImages(now: number): Promise<{ images: Image[]; inUse: Set<string> }>;
  /** One pass: max-age removals, then free down to the low threshold when at or above the high one. */
  garbageCollect(): Promise<ImageGCResult>;
}

export interface ImageGCResult {
  /** Usage percent measured before the pass. */
  usagePercent: number;
  /** Bytes the pass had to free (0 below the high threshold). */
  bytesToFree: number;
  freedBytes: number;
  removed: string[];
}
