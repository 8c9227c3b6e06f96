/**
 * Image garbage collection (upstream pkg/kubelet/images/image_gc_manager.go): when the image
 * filesystem's usage reaches imageGCHighThresholdPercent, remove unused images, least recently
 * used first, until usage is back at imageGCLowThresholdPercent. Never an image a container (in
 * any state) uses, a pinned image (CRI `pinned`: the runtime pins its sandbox image; 1.35 has no
 * --pod-infra-container-image), or an image first seen less than imageMinimumGCAge ago. A high
 * threshold of 100 disables it. With imageMaximumGCAge (upstream ImageMaximumGCAge, KEP-4210) every
 * pass first removes the unused images not used for longer than that, disk pressure or not; as
 * upstream it waits until the manager itself is that old, so a restart does not take every image
 * for an old one. As upstream, a pass that cannot free enough records
 * FreeDiskSpaceFailed on the Node. The periodic loop (every 5 minutes, ImageGCFailed on repeated
 * failures) is upstream's StartGarbageCollection: src/kubelet/gc-loops.ts.
 *
 * "Last used" is what upstream's imageRecords keep: each detection pass stamps the images the
 * containers use with the time of the pass; an image never seen in use keeps its first-detected
 * time. Usage and capacity come from CRI ImageFsInfo (the mountpoint) and statfs of it.
 */
import { statfs } from 'node:fs/promises';
import type { Container, Image, ImageService } from '../cri/types.js';
import type { EventRecorder, ObjectReference } from '../events/types.js';
import { KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import type { ImageGCManager, ImageGCResult } from './types.js';

export interface ImageGCPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
  /** Remove unused images not used for this long, without disk pressure; 0 (default) = off. */
  maxAgeMs?: number;
}

export interface FsCapacity {
  capacityBytes: number;
  availableBytes: number;
}

export interface ImageGCOptions {
  images: Pick<ImageService, 'listImages' | 'removeImage' | 'imageFsInfo'>;
  /** Every container the runtime knows (any state): their images are in use. */
  listContainers: () => Promise<Container[]>;
  policy: ImageGCPolicy;
  /** Image names or ids never removed (the sandbox image). */
  pinnedImages?: readonly string[];
  recorder?: EventRecorder;
  node?: ObjectReference;
  /** Capacity and free space of the filesystem at `mountpoint` (default: statfs). */
  fsCapacity?: (mountpoint: string) => Promise<FsCapacity>;
  clock?: Clock;
  /**
   * KEP-2535 pull records: after each look at the images, the records of images gone from the
   * node (and not updated since the look began) are dropped (upstream PruneUnknownRecords).
   */
  pruneRecords?: (imageRefs: readonly string[], until: Date) => Promise<void>;
}

/** Upstream's GC period (ImageGCPeriod), used by the loop in src/kubelet/gc-loops.ts. */
export const ImageGCPeriodMs = 5 * 60 * 1000;
export const ImageGCFailedReason = 'ImageGCFailed';
export const FreeDiskSpaceFailedReason = 'FreeDiskSpaceFailed';

interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
}

async function statfsCapacity(mountpoint: string): Promise<FsCapacity> {
  const s = await statfs(mountpoint);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
}

function uses(c: Container, img: Image): boolean {
  for (const ref of [c.imageRef, c.image, c.imageId]) {
    if (ref && (ref === img.id || img.repoTags.includes(ref) || img.repoDigests.includes(ref))) return true;
  }
  return false;
}

/** When an image was last used; one never seen in use counts from when it was first detected. */
function lastUse(rec: ImageRecord): number {
  return rec.lastUsed || rec.firstDetected;
}

class RealImageGCManager implements ImageGCManager {
  private readonly records = new Map<string, ImageRecord>();
  private readonly clock: Clock;
  /** When this manager started: the max-age rule waits until it is older than maxAgeMs. */
  private readonly startedAt: number;

  constructor(private readonly opts: ImageGCOptions) {
    this.clock = opts.clock ?? realClock;
    this.startedAt = this.clock.now();
  }

  get enabled(): boolean {
    return this.thresholdEnabled || (this.opts.policy.maxAgeMs ?? 0) > 0;
  }

  private get thresholdEnabled(): boolean {
    return this.opts.policy.highThresholdPercent < 100;
  }

  async detectImages(now: number): Promise<{ images: Image[]; inUse: Set<string> }> {
    const began = new Date();
    const [images, containers] = await Promise.all([this.opts.images.listImages(), this.opts.listContainers()]);
    await this.opts.pruneRecords?.(
      images.map((i) => i.id),
      began,
    );
    const pinned = new Set(this.opts.pinnedImages ?? []);
    const inUse = new Set<string>();
    for (const img of images) {
      if (img.pinned || pinned.has(img.id) || img.repoTags.some((t) => pinned.has(t))) inUse.add(img.id);
      else if (containers.some((c) => uses(c, img))) inUse.add(img.id);
      const rec = this.records.get(img.id) ?? { firstDetected: now, lastUsed: 0, size: 0 };
      rec.size = Number(img.size);
      if (inUse.has(img.id)) rec.lastUsed = now;
      this.records.set(img.id, rec);
    }
    const present = new Set(images.map((i) => i.id));
    for (const id of [...this.records.keys()]) if (!present.has(id)) this.records.delete(id);
    return { images, inUse };
  }

  async garbageCollect(): Promise<ImageGCResult> {
    return this.collect();
  }

  private event(reason: string, message: string): void {
    if (this.opts.node) this.opts.recorder?.event(this.opts.node, 'Warning', reason, message);
  }

  private async collect(): Promise<ImageGCResult> {
    const { highThresholdPercent: high, lowThresholdPercent: low } = this.opts.policy;
    const fs = (await this.opts.images.imageFsInfo())[0];
    if (!fs) throw new KubeletError('KTS_ERR_IMAGE_GC', 'the runtime reported no image filesystem (ImageFsInfo)');
    const { capacityBytes, availableBytes } = await (this.opts.fsCapacity ?? statfsCapacity)(fs.mountpoint);
    if (capacityBytes <= 0)
      throw new KubeletError(
        'KTS_ERR_IMAGE_GC',
        `invalid capacity ${capacityBytes} on image filesystem ${fs.mountpoint}`,
      );
    const usagePercent = 100 - Math.floor((availableBytes * 100) / capacityBytes);
    const result: ImageGCResult = { usagePercent, bytesToFree: 0, freedBytes: 0, removed: [] };
    await this.freeOldImages(this.clock.now(), result);
    if (!this.thresholdEnabled || usagePercent < high) return result;
    result.bytesToFree = Math.floor((capacityBytes * (100 - low)) / 100) - availableBytes;
    log('imagegc').info(
      { usagePercent, highThresholdPercent: high, bytesToFree: result.bytesToFree, mountpoint: fs.mountpoint },
      'Image filesystem usage over the high threshold: freeing space',
    );
    await this.freeSpace(result.bytesToFree, this.clock.now(), result);
    if (result.freedBytes < result.bytesToFree) {
      const err = new KubeletError(
        'KTS_ERR_IMAGE_GC',
        `Failed to garbage collect required amount of images. Attempted to free ${result.bytesToFree} bytes, but only found ${result.freedBytes} bytes eligible to free.`,
      );
      this.event(FreeDiskSpaceFailedReason, err.message);
      throw err;
    }
    return result;
  }

  /**
   * Removes the unused images last used more than maxAgeMs ago (never used: first detected). Freed
   * bytes count towards a threshold pass that may follow, as upstream.
   */
  private async freeOldImages(now: number, result: ImageGCResult): Promise<void> {
    const maxAge = this.opts.policy.maxAgeMs ?? 0;
    if (maxAge <= 0) return;
    // Detect on every pass so last-use times are known by the time the rule applies.
    const { images, inUse } = await this.detectImages(now);
    if (now - this.startedAt <= maxAge) return;
    const old = images.filter((i) => !inUse.has(i.id) && now - lastUse(this.records.get(i.id)!) > maxAge);
    await this.removeAll(old, result, 'Removed image unused for longer than imageMaximumGCAge');
  }

  /** Removes each image; failures are collected into one KTS_ERR_IMAGE_GC after trying them all. */
  private async removeAll(
    images: readonly Image[],
    result: ImageGCResult,
    why: string,
    enough = () => false,
  ): Promise<void> {
    const errors: string[] = [];
    for (const image of images) {
      if (enough()) break;
      const rec = this.records.get(image.id)!;
      try {
        await this.opts.images.removeImage(image.id);
      } catch (err) {
        errors.push(`${image.id}: ${errorMessage(err)}`);
        continue;
      }
      log('imagegc').info({ image: image.id, tags: image.repoTags, size: rec.size }, why);
      this.records.delete(image.id);
      result.removed.push(image.id);
      result.freedBytes += rec.size;
    }
    if (errors.length > 0) throw new KubeletError('KTS_ERR_IMAGE_GC', `failed to remove images: ${errors.join('; ')}`);
  }

  /** Removes unused images, least recently used first, until `bytesToFree` are freed. */
  private async freeSpace(bytesToFree: number, now: number, result: ImageGCResult): Promise<void> {
    const { images, inUse } = await this.detectImages(now);
    const candidates = images
      .filter((i) => !inUse.has(i.id))
      .map((i) => ({ image: i, rec: this.records.get(i.id)! }))
      .sort((a, b) => a.rec.lastUsed - b.rec.lastUsed || a.rec.firstDetected - b.rec.firstDetected);
    const eligible = candidates
      .filter(({ rec }) => now - rec.firstDetected >= this.opts.policy.minAgeMs)
      .map(({ image }) => image);
    await this.removeAll(eligible, result, 'Removed unused image', () => result.freedBytes >= bytesToFree);
  }
}

export function createImageGCManager(opts: ImageGCOptions): ImageGCManager {
  return new RealImageGCManager(opts);
}
