/**
 * The image pull manager (upstream pullmanager image_pull_manager.go, KEP-2535): records every
 * pull the kubelet makes (an intent before, a pulled record after, with the credentials that
 * worked) and answers MustAttemptImagePull for an image already on the node: whether this pod has
 * to pull it again to prove it may use it. A pod may use a recorded image when it was pulled with
 * node-wide credentials or none (nodePodsAccessible), or when one of the pod's pull secrets
 * matches a recorded one by coordinates (namespace, name, uid) or by credential hash. A record
 * that cannot be read makes the answer "pull" (fail safe), never an error.
 */
import { log } from '../../util/log.js';
import { repoToPull } from '../keyring.js';
import type { RequireVerification } from './policy.js';
import type { ImagePullCredentials, ImagePullSecret, ImagePulledRecord, PullRecordsStore } from './records.js';
import { KeyedLock } from '../../util/keyed-lock.js';

/** upstream writeRecordWhileMatchingLimit: no record growth while matching past this many secrets. */
const WRITE_WHILE_MATCHING_LIMIT = 100;

/** The images the runtime has, as the initial intents → records pass needs them. */
export interface ListedImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
}

/**
 * The pod's pull secrets for the image, or (upstream GetPodCredentials) a function that looks them
 * up: the keyring (and so any credential provider plugin) is asked only when a record must be
 * compared with them, not for every present image.
 */
export type PodSecrets = readonly ImagePullSecret[] | (() => Promise<readonly ImagePullSecret[]>);

/** upstream ImagePullManager. */
export interface ImagePullManager {
  /** Before a pull; a failure to write fails the pull. */
  recordPullIntent(image: string): Promise<void>;
  /** After a successful pull: `credentials` undefined = pulled under unknown circumstances. */
  recordImagePulled(image: string, imageRef: string, credentials?: ImagePullCredentials): Promise<void>;
  recordImagePullFailed(image: string): Promise<void>;
  /** Whether `image` (present as `imageRef`) must be pulled again with `podSecrets`. */
  mustAttemptImagePull(image: string, imageRef: string, podSecrets: PodSecrets): Promise<boolean>;
  /** Image GC: drops the records of images no longer on the node, last updated before `until`. */
  pruneUnknownRecords(imageRefs: readonly string[], until: Date): Promise<void>;
}

const sameCoordinates = (a: ImagePullSecret, b: ImagePullSecret): boolean =>
  a.uid === b.uid && a.namespace === b.namespace && a.name === b.name;

const secretOrder = (a: ImagePullSecret, b: ImagePullSecret): number =>
  a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.uid.localeCompare(b.uid);

/** upstream mergePullSecrets: unique by coordinates, the new hash wins; undefined when nothing changed. */
export function mergePullSecrets(
  orig: readonly ImagePullSecret[],
  added: readonly ImagePullSecret[],
): ImagePullSecret[] | undefined {
  const out = [...orig];
  let changed = false;
  for (const s of added) {
    const i = out.findIndex((o) => sameCoordinates(o, s));
    if (i >= 0 && out[i]!.credentialHash === s.credentialHash) continue;
    changed = true;
    if (i >= 0) out[i] = { ...s };
    else out.push({ ...s });
  }
  return changed ? out.sort(secretOrder) : undefined;
}

/**
 * upstream pulledRecordMergeNewCreds: `creds` merged into the record's entry for `imageName`;
 * undefined when the record does not change. Node-wide access replaces (and outlives) secrets.
 */
export function mergeNewCreds(
  orig: ImagePulledRecord,
  imageName: string,
  creds: ImagePullCredentials | undefined,
  now: Date,
): ImagePulledRecord | undefined {
  if (!creds || (!creds.nodePodsAccessible && !creds.kubernetesSecrets?.length)) return undefined;
  const current = orig.credentialMapping[imageName];
  let merged: ImagePullCredentials;
  if (!current) merged = creds;
  else if (current.nodePodsAccessible) return undefined;
  else if (creds.nodePodsAccessible) merged = { nodePodsAccessible: true };
  else {
    const secrets = mergePullSecrets(current.kubernetesSecrets ?? [], creds.kubernetesSecrets ?? []);
    if (!secrets) return undefined;
    merged = { ...current, kubernetesSecrets: secrets };
  }
  return {
    ...orig,
    lastUpdatedTime: now.toISOString(),
    credentialMapping: { ...orig.credentialMapping, [imageName]: merged },
  };
}

export interface PullManagerOptions {
  store: PullRecordsStore;
  requireVerification: RequireVerification;
  now?: () => Date;
}

export class PullManager implements ImagePullManager {
  private readonly intents = new Map<string, number>();
  private readonly intentLocks = new KeyedLock();
  private readonly pulledLocks = new KeyedLock();
  private readonly store: PullRecordsStore;
  private readonly requireVerification: RequireVerification;
  private readonly now: () => Date;

  constructor(opts: PullManagerOptions) {
    this.store = opts.store;
    this.requireVerification = opts.requireVerification;
    this.now = opts.now ?? (() => new Date());
  }

  recordPullIntent(image: string): Promise<void> {
    return this.intentLocks.run(image, async () => {
      await this.store.writeIntent(image);
      this.intents.set(image, (this.intents.get(image) ?? 0) + 1);
    });
  }

  async recordImagePulled(image: string, imageRef: string, credentials?: ImagePullCredentials): Promise<void> {
    try {
      await this.writePulledIfChanged(image, imageRef, credentials);
    } catch (err) {
      // The intent stays: the next start turns it into a record of the image (upstream's choice).
      log('images').error({ image, imageRef, err: String(err) }, 'failed to write image pulled record');
      return;
    }
    await this.dropIntent(image);
  }

  recordImagePullFailed(image: string): Promise<void> {
    return this.dropIntent(image);
  }

  async mustAttemptImagePull(image: string, imageRef: string, podSecrets: PodSecrets): Promise<boolean> {
    if (!imageRef) return true;
    let record: ImagePulledRecord | undefined;
    let pulledByKubelet: boolean;
    try {
      record = await this.store.getPulled(imageRef);
      pulledByKubelet = !!record || (this.intents.get(image) ?? 0) > 0 || (await this.store.intentExists(image));
    } catch (err) {
      log('images').error({ image, imageRef, err: String(err) }, 'unable to read image pull records');
      return true;
    }
    if (!this.requireVerification(image, pulledByKubelet)) return false;
    const cached = record?.credentialMapping[repoToPull(image)];
    if (!cached) return true;
    if (cached.nodePodsAccessible) return false;
    const recorded = cached.kubernetesSecrets ?? [];
    if (recorded.length === 0) return true;
    for (const pod of typeof podSecrets === 'function' ? await podSecrets() : podSecrets)
      for (const rec of recorded) {
        const hashMatch = rec.credentialHash.length > 0 && rec.credentialHash === pod.credentialHash;
        const coordMatch = sameCoordinates(rec, pod);
        if (!hashMatch && !coordMatch) continue;
        // Remember this secret (new coordinates, or a rotated hash) for the next check.
        if (!(hashMatch && coordMatch) && recorded.length < WRITE_WHILE_MATCHING_LIMIT)
          await this.writePulledIfChanged(image, imageRef, { kubernetesSecrets: [pod] }).catch((err: unknown) =>
            log('images').error({ image, imageRef, err: String(err) }, 'failed to write image pulled record'),
          );
        return false;
      }
    return true;
  }

  async pruneUnknownRecords(imageRefs: readonly string[], until: Date): Promise<void> {
    const present = new Set(imageRefs);
    const records = await this.store.listPulled().catch((err: unknown) => {
      log('images').error({ err: String(err) }, 'failed to list image pulled records');
      return [] as ImagePulledRecord[];
    });
    for (const rec of records) {
      // Updated since the GC began (a pull that just finished): kept, as upstream.
      if (present.has(rec.imageRef) || !(Date.parse(rec.lastUpdatedTime) < until.getTime())) continue;
      await this.pulledLocks
        .run(rec.imageRef, () => this.store.deletePulled(rec.imageRef))
        .catch((err: unknown) =>
          log('images').error({ imageRef: rec.imageRef, err: String(err) }, 'failed to remove an image pulled record'),
        );
    }
  }

  /**
   * upstream initialize: intents left by an earlier run whose image the runtime has are turned
   * into records without credentials (pulled by the kubelet, so verified on next use).
   */
  async initialize(listImages: () => Promise<ListedImage[]>): Promise<void> {
    const intents = new Set(await this.store.listIntents().catch(() => []));
    if (intents.size === 0) return;
    const images = await listImages().catch((err: unknown) => {
      log('images').error({ err: String(err) }, 'failed to list images');
      return [] as ListedImage[];
    });
    for (const img of images)
      for (const name of [...img.repoDigests, ...img.repoTags].filter((n) => intents.has(n))) {
        try {
          await this.writePulledIfChanged(name, img.id, undefined);
          await this.store.deleteIntent(name);
        } catch (err) {
          log('images').error({ image: name, err: String(err) }, 'failed to turn a pull intent into a record');
        }
      }
  }

  private dropIntent(image: string): Promise<void> {
    return this.intentLocks.run(image, async () => {
      const n = this.intents.get(image) ?? 0;
      if (n > 1) {
        this.intents.set(image, n - 1);
        return;
      }
      try {
        await this.store.deleteIntent(image);
        this.intents.delete(image);
      } catch (err) {
        log('images').error({ image, err: String(err) }, 'failed to remove image pull intent');
      }
    });
  }

  /** upstream writePulledRecordIfChanged: a new record, or `creds` merged into the existing one. */
  private writePulledIfChanged(image: string, imageRef: string, creds: ImagePullCredentials | undefined) {
    return this.pulledLocks.run(imageRef, async () => {
      const name = repoToPull(image);
      const existing = await this.store.getPulled(imageRef).catch(() => undefined);
      const base: ImagePulledRecord = existing ?? {
        lastUpdatedTime: this.now().toISOString(),
        imageRef,
        credentialMapping: {},
      };
      const next = mergeNewCreds(base, name, creds, this.now()) ?? (existing ? undefined : base);
      if (next) await this.store.writePulled(next);
    });
  }
}
