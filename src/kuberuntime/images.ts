/**
 * EnsureImageExists (upstream pkg/kubelet/images/image_manager.go): decide from the pull policy
 * whether to pull, pull with a per-(pod, image) back-off, and turn every failure into the waiting
 * reason the pod status shows: ErrImageNeverPull, ErrImagePull, ImagePullBackOff,
 * ImageInspectError. Pulls are serial (upstream's serializeImagePulls default) because SyncPod
 * starts containers one after the other.
 */
import type { Container, Pod } from '../api/types.js';
import type { ImageService, PodSandboxConfig } from '../cri/types.js';
import { ContainerStartError } from '../errors.js';
import { log } from '../util/log.js';
import type { Backoff } from '../util/backoff.js';
import { DockerKeyring, type PullSecretsFor } from './keyring.js';
import { PullLimiter } from './pull-limiter.js';
import { runtimeMessage } from '../cri/errors.js';
import { recordImagePull } from '../metrics/pod-startup-latency.js';

type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** The apiserver's default: Always for ":latest" or no tag (and no digest), else IfNotPresent. */
function defaultPullPolicy(image: string): PullPolicy {
  if (image.includes('@')) return 'IfNotPresent';
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return lastPart.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function pullPolicyOf(container: Container): PullPolicy {
  const p = container.imagePullPolicy;
  return p === 'Always' || p === 'IfNotPresent' || p === 'Never' ? p : defaultPullPolicy(container.image ?? '');
}

function startError(reason: string, message: string, cause?: unknown): ContainerStartError {
  const code = reason === 'ErrImageNeverPull' ? 'KTS_ERR_IMAGE_NEVER_PULL' : 'KTS_ERR_IMAGE_PULL';
  return new ContainerStartError(code, reason, message, { cause });
}

/** serializeImagePulls / maxParallelImagePulls, and where a pod's pull secrets come from. */
export interface ImagePullOptions {
  serialize?: boolean;
  /** With serialize false: most pulls at once; 0 or absent = no limit. */
  maxParallel?: number;
  pullSecretsFor?: PullSecretsFor;
}

export class ImagePuller {
  private readonly limiter: PullLimiter;

  constructor(
    private readonly images: ImageService,
    private readonly backOff: Backoff,
    private readonly pullOpts: ImagePullOptions = {},
    /** Pulling / Pulled / Failed / BackOff events of the container (upstream image manager's). */
    private readonly onEvent?: (pod: Pod, container: Container, type: 'Normal' | 'Warning', reason: string, message: string) => void,
  ) {
    this.limiter = new PullLimiter(pullOpts.serialize !== false ? 1 : pullOpts.maxParallel || Infinity);
  }

  /** The image reference (ID) to create the container from, or a ContainerStartError. */
  async ensureImageExists(pod: Pod, container: Container, sandboxConfig: PodSandboxConfig, signal?: AbortSignal): Promise<string> {
    const images = (signal && this.images.withSignal?.(signal)) || this.images;
    const image = container.image ?? '';
    if (!image) throw new ContainerStartError('KTS_ERR_IMAGE_PULL', 'InvalidImageName', `container ${container.name} has no image`);
    const policy = pullPolicyOf(container);
    let present: string | undefined;
    try {
      present = (await images.imageStatus(image))?.id;
    } catch (err) {
      if (signal?.aborted) throw err;
      throw startError('ImageInspectError', `Failed to inspect image "${image}": ${runtimeMessage(err)}`, err);
    }
    if (policy === 'Never' && !present) {
      throw startError('ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`);
    }
    if (present && policy !== 'Always') {
      this.onEvent?.(pod, container, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      return present;
    }
    return this.pull(images, pod, container, image, sandboxConfig, signal);
  }

  private async pull(images: ImageService, pod: Pod, container: Container, image: string, sandboxConfig: PodSandboxConfig, signal: AbortSignal | undefined): Promise<string> {
    const key = `${pod.metadata?.uid ?? ''}_${image}`;
    if (this.backOff.isInBackOffSinceUpdate(key)) {
      this.onEvent?.(pod, container, 'Normal', 'BackOff', `Back-off pulling image "${image}"`);
      throw startError('ImagePullBackOff', `Back-off pulling image "${image}"`);
    }
    try {
      this.onEvent?.(pod, container, 'Normal', 'Pulling', `Pulling image "${image}"`);
      const started = Date.now();
      const ref = await this.limiter.run(() => this.pullWithCredentials(images, pod, image, sandboxConfig), signal);
      const finished = Date.now();
      recordImagePull(pod.metadata?.uid ?? '', started, finished);
      this.onEvent?.(pod, container, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${finished - started}ms`);
      // A success ends the back-off (upstream lets it expire; a later failure then starts at 10 s).
      this.backOff.reset(key);
      log('kuberuntime').info({ pod: pod.metadata?.name, image, ref }, 'pulled image');
      return ref;
    } catch (err) {
      // A pull cancelled by a kill is not the image's failure: no back-off, no event.
      if (signal?.aborted) throw err;
      this.backOff.next(key, this.backOff.now());
      log('kuberuntime').warn({ pod: pod.metadata?.name, image, err: runtimeMessage(err) }, 'failed to pull image');
      throw startError('ErrImagePull', `Failed to pull image "${image}": ${runtimeMessage(err)}`, err);
    }
  }

  /**
   * Upstream pullImage with a keyring: no credential applies → an anonymous pull; otherwise each
   * credential in turn until one works, the last error reported.
   */
  private async pullWithCredentials(images: ImageService, pod: Pod, image: string, sandboxConfig: PodSandboxConfig): Promise<string> {
    const secrets = this.pullOpts.pullSecretsFor && (pod.spec?.imagePullSecrets?.length ?? 0) > 0 ? await this.pullOpts.pullSecretsFor(pod) : [];
    const creds = new DockerKeyring(secrets).lookup(image);
    if (creds.length === 0) return images.pullImage(image, undefined, sandboxConfig);
    let last: unknown;
    for (const auth of creds) {
      try {
        return await images.pullImage(image, auth, sandboxConfig);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }
}
