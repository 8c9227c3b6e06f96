/**
 * EnsureImageExists (upstream pkg/kubelet/images/image_manager.go): decide from the pull policy
 * whether to pull, pull with a per-(pod, image) back-off, and turn every failure into the waiting
 * reason the pod status shows: ErrImageNeverPull, ErrImagePull, ImagePullBackOff,
 * ImageInspectError, InvalidImageName. Pulls go through the pull limiter: one at a time by
 * default (upstream's serializeImagePulls), or up to maxParallelImagePulls. With the pull
 * manager (KubeletEnsureSecretPulledImages), every pull is recorded with the credentials that
 * worked, and a present image is used only by pods whose credentials the records accept.
 */
import type { Container, Pod } from '../api/types.js';
import { runtimeMessage } from '../cri/errors.js';
import type { ImageService, PodSandboxConfig } from '../cri/types.js';
import { ContainerStartError } from '../errors.js';
import { containerEventRef } from '../events/refs.js';
import type { EventFields, EventRecorder } from '../events/types.js';
import { recordImagePull } from '../metrics/pod-startup-latency.js';
import { Backoff, backOffSettings, type BackOffSettings } from '../util/backoff.js';
import { realClock, type Clock } from '../util/clock.js';
import { log } from '../util/log.js';
import { lookupTracked, repoToPull, type DockerKeyring, type PullSecret, type TrackedAuth } from './keyring.js';
import { PullLimiter } from './pull-limiter.js';
import type { ImagePullManager } from './pullmanager/pull-manager.js';
import type { ImagePullCredentials, ImagePullSecret } from './pullmanager/records.js';
import type { ImageManager, ImageUser, PullPolicy } from './types.js';

export interface ImageManagerOptions {
  images: ImageService;
  /** Pulling / Pulled / BackOff events of the container (upstream image manager's); default: none. */
  recorder?: EventRecorder;
  /** upstream serializeImagePulls (default true): one pull at a time. */
  serializeImagePulls?: boolean;
  /** upstream maxParallelImagePulls: with serializeImagePulls false, most pulls at once; 0 or absent = no limit. */
  maxParallelImagePulls?: number;
  /** ImagePullBackOff: first delay and cap (default 10 s and 5 min). */
  pullBackOff?: Partial<BackOffSettings>;
  clock?: Clock;
  /**
   * The node's keyring, after the pod's pull secrets (upstream's union): the docker config file
   * and the credential provider plugins (see createNodeKeyring). Default: none.
   */
  keyring?: DockerKeyring;
  /**
   * KubeletEnsureSecretPulledImages: the pull records; an image already present is used by a pod
   * only when the manager says its credentials may (else it is pulled again). Absent: the gate is
   * off and a present image is used by every pod, as before KEP-2535.
   */
  pullManager?: ImagePullManager;
}

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

/** What every signal-bound view of one manager shares: one limiter, one back-off. */
interface PullState {
  images: ImageService;
  limiter: PullLimiter;
  backOff: Backoff;
  recorder: EventRecorder | undefined;
  keyring: DockerKeyring | undefined;
  pullManager: ImagePullManager | undefined;
}

class RealImageManager implements ImageManager {
  constructor(
    private readonly state: PullState,
    private readonly signal?: AbortSignal,
  ) {}

  withSignal(signal: AbortSignal): ImageManager {
    return new RealImageManager(this.state, signal);
  }

  async imageUser(imageRef: string): Promise<ImageUser> {
    const { signal } = this;
    const images = (signal && this.state.images.withSignal?.(signal)) || this.state.images;
    const image = await images.imageStatus(imageRef);
    if (image?.uid !== undefined) return { uid: image.uid };
    if (image?.username) return { username: image.username };
    return { uid: 0n };
  }

  async ensureImageExists(
    pod: Pod,
    container: Container,
    pullSecrets: readonly PullSecret[],
    sandboxConfig: PodSandboxConfig,
  ): Promise<string> {
    const { signal } = this;
    const images = (signal && this.state.images.withSignal?.(signal)) || this.state.images;
    const image = container.image ?? '';
    if (!image)
      throw new ContainerStartError(
        'KTS_ERR_IMAGE_PULL',
        'InvalidImageName',
        `container ${container.name} has no image`,
      );
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
    const req: PullRequest = { pod, container, image, pullSecrets, sandboxConfig };
    if (present && policy !== 'Always') {
      const usable = await this.mayUsePresent(req, present);
      if (usable) {
        this.event(pod, container, { type: 'Normal', reason: 'Pulled', message: usable });
        return present;
      }
      // Present, but this pod's credentials are not among those it was pulled with (KEP-2535).
      if (policy === 'Never')
        throw startError(
          'ErrImageNeverPull',
          `Container image "${image}" is present with pull policy of "Never" but does not have the proper credentials to access the image`,
        );
    }
    return this.pull(images, req);
  }

  /** The Pulled event's message when the pod may use the present image; undefined: pull it again. */
  private async mayUsePresent(req: PullRequest, imageRef: string): Promise<string | undefined> {
    const { pullManager, keyring } = this.state;
    if (!pullManager) return `Container image "${req.image}" already present on machine`;
    const podSecrets = async () => {
      const creds = await lookupTracked(req.pullSecrets, keyring, repoToPull(req.image));
      return creds.flatMap((c) => (c.source ? [pullSecretOf(c)] : []));
    };
    const must = await pullManager.mustAttemptImagePull(req.image, imageRef, podSecrets);
    return must
      ? undefined
      : `Container image "${req.image}" already present on machine and can be accessed by the pod`;
  }

  private event(pod: Pod, container: Container, { type, reason, message }: EventFields): void {
    this.state.recorder?.event(containerEventRef(pod, container.name), type, reason, message);
  }

  private async pull(images: ImageService, req: PullRequest): Promise<string> {
    const { pod, container, image } = req;
    const { backOff, limiter } = this.state;
    const key = `${pod.metadata?.uid ?? ''}_${image}`;
    if (backOff.isInBackOffSinceUpdate(key)) {
      this.event(pod, container, { type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"` });
      throw startError('ImagePullBackOff', `Back-off pulling image "${image}"`);
    }
    await this.recordIntent(image);
    try {
      this.event(pod, container, { type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` });
      const started = Date.now();
      const { ref, used } = await limiter.run(() => pullWithCredentials(images, req, this.state.keyring), this.signal);
      const finished = Date.now();
      await this.state.pullManager?.recordImagePulled(image, ref, pulledWith(used));
      recordImagePull(pod.metadata?.uid ?? '', started, finished);
      this.event(pod, container, {
        type: 'Normal',
        reason: 'Pulled',
        message: `Successfully pulled image "${image}" in ${finished - started}ms`,
      });
      // A success ends the back-off (upstream lets it expire; a later failure then starts at 10 s).
      backOff.reset(key);
      log('images').info({ pod: pod.metadata?.name, image, ref }, 'pulled image');
      return ref;
    } catch (err) {
      await this.state.pullManager?.recordImagePullFailed(image);
      // A pull cancelled by a kill is not the image's failure: no back-off, no event.
      if (this.signal?.aborted) throw err;
      // Entries only grow on failures: dropping the expired ones here keeps the map bounded.
      backOff.gc();
      backOff.next(key, backOff.now());
      log('images').warn({ pod: pod.metadata?.name, image, err: runtimeMessage(err) }, 'failed to pull image');
      throw startError('ErrImagePull', `Failed to pull image "${image}": ${runtimeMessage(err)}`, err);
    }
  }

  /** upstream RecordPullIntent before every pull: a pull the kubelet cannot record is not made. */
  private async recordIntent(image: string): Promise<void> {
    try {
      await this.state.pullManager?.recordPullIntent(image);
    } catch (err) {
      const msg = `Failed to record image pull intent for container image "${image}": ${runtimeMessage(err)}`;
      throw startError('ErrImagePull', msg, err);
    }
  }
}

/** A pod secret's credential as the pull records keep it. */
function pullSecretOf({ source, hash }: TrackedAuth): ImagePullSecret {
  return { uid: source!.uid, namespace: source!.namespace, name: source!.name, credentialHash: hash };
}

/** upstream trackedToImagePullCreds: a pod secret's credential, or node-wide (node keyring, anonymous). */
function pulledWith(used: TrackedAuth | undefined): ImagePullCredentials {
  return used?.source ? { kubernetesSecrets: [pullSecretOf(used)] } : { nodePodsAccessible: true };
}

interface PullRequest {
  pod: Pod;
  container: Container;
  image: string;
  pullSecrets: readonly PullSecret[];
  sandboxConfig: PodSandboxConfig;
}

/**
 * Upstream pullImage with a keyring (the pod's secrets, then the node's): no credential applies →
 * an anonymous pull; otherwise each credential in turn until one works, the last error reported.
 */
async function pullWithCredentials(
  images: ImageService,
  { image, pullSecrets, sandboxConfig }: PullRequest,
  node: DockerKeyring | undefined,
): Promise<{ ref: string; used?: TrackedAuth }> {
  const creds = await lookupTracked(pullSecrets, node, repoToPull(image));
  if (creds.length === 0) return { ref: await images.pullImage(image, undefined, sandboxConfig) };
  let last: unknown;
  for (const used of creds) {
    try {
      return { ref: await images.pullImage(image, used.auth, sandboxConfig), used };
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

export function createImageManager(opts: ImageManagerOptions): ImageManager {
  const { initialMs, maxMs } = backOffSettings(opts.pullBackOff);
  const limit = opts.serializeImagePulls !== false ? 1 : opts.maxParallelImagePulls || Infinity;
  return new RealImageManager({
    images: opts.images,
    limiter: new PullLimiter(limit),
    backOff: new Backoff(opts.clock ?? realClock, initialMs, maxMs),
    recorder: opts.recorder,
    keyring: opts.keyring,
    pullManager: opts.pullManager,
  });
}
