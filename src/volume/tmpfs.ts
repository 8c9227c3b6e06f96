/**
 * Memory-backed volume directories (upstream emptydir setupTmpfs and SizeMemoryBackedVolumes):
 * a memory emptyDir's tmpfs is the smallest of its sizeLimit, the pod's memory limit (when
 * every container has one) and the node's allocatable memory; the tmpfs under a secret,
 * projected or downwardAPI volume has the same size, at most ATOMIC_VOLUME_TMPFS_MAX_BYTES.
 * Mounted with `noswap` where the kernel has it (mount.ts), so the pages never reach swap.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import { podResourceConfig } from '../cm/index.js';
import { errorMessage, VolumeError } from '../errors.js';
import { log } from '../util/log.js';
import { parseQuantity } from '../util/quantity.js';
import { DATA_LINK } from './atomic-writer.js';
import type { Mounter, TmpfsOptions } from './mount.js';

/**
 * Bound of the tmpfs under a secret, projected or downwardAPI volume. Upstream sizes these
 * wrappers like any memory emptyDir (the pod's memory limit, else node allocatable); the pages
 * are charged to the agent that writes them, not to the pod, so they get a fixed ceiling as well:
 * a Secret or ConfigMap holds at most 1 MiB, and a swap briefly keeps two versions.
 */
export const ATOMIC_VOLUME_TMPFS_MAX_BYTES = 64 * 2 ** 20;

/** Parses a quantity that must be positive (sizeLimit); undefined when absent. */
export function positiveQuantity(v: string | number | undefined): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Math.ceil(parseQuantity(v));
  return n > 0 ? n : undefined;
}

/**
 * upstream calculateEmptyDirMemorySize: node allocatable memory, lowered to the pod's memory limit
 * and then to the volume's sizeLimit when those are smaller.
 */
export function emptyDirMemorySize(
  pod: Pod,
  sizeLimit: string | number | undefined,
  allocatableMemory: number,
): number {
  let size = allocatableMemory;
  const podLimit = podResourceConfig(pod).memory;
  if (podLimit !== undefined && podLimit > 0 && podLimit <= size) size = podLimit;
  let volumeLimit: number | undefined;
  try {
    volumeLimit = positiveQuantity(sizeLimit);
  } catch (err) {
    throw new VolumeError(`emptyDir sizeLimit: ${(err as Error).message}`);
  }
  if (volumeLimit !== undefined && volumeLimit <= size) size = volumeLimit;
  return size;
}

/** The tmpfs of a secret, projected or downwardAPI volume: upstream's size, at most the fixed bound. */
export function atomicVolumeTmpfsSize(pod: Pod, allocatableMemory: number): number {
  const size = emptyDirMemorySize(pod, undefined, allocatableMemory);
  return size > 0 && size < ATOMIC_VOLUME_TMPFS_MAX_BYTES ? size : ATOMIC_VOLUME_TMPFS_MAX_BYTES;
}

/** Volume directories already reported as written on disk by an earlier version (bounded). */
const legacyWarned = new Set<string>();

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * A tmpfs at dir (upstream setupTmpfs), idempotent: a tmpfs already there is kept, another
 * filesystem is an error. An atomic-writer volume that an earlier kubelet-ts wrote on disk is
 * left on disk: running containers have that directory bind-mounted, and a tmpfs over it would
 * hide every later update from them. It moves to a tmpfs when the pod is next created.
 */
export async function ensureTmpfs(mounter: Mounter, dir: string, name: string, opts: TmpfsOptions): Promise<void> {
  const fsType = await mounter.fsTypeAt(dir);
  if (fsType === 'tmpfs') return;
  if (fsType !== undefined) throw new VolumeError(`volume ${name}: ${dir} is already a ${fsType} mount, not tmpfs`);
  if (await exists(join(dir, DATA_LINK))) {
    if (!legacyWarned.has(dir)) {
      if (legacyWarned.size >= 1000) legacyWarned.clear();
      legacyWarned.add(dir);
      log('volume').warn(
        { dir },
        'volume was written on disk by an earlier version; it stays there until the pod is recreated',
      );
    }
    return;
  }
  try {
    await mounter.mountTmpfs(dir, opts);
  } catch (err) {
    throw new VolumeError(`volume ${name}: cannot mount tmpfs at ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  log('volume').debug({ dir, size: opts.sizeBytes }, 'mounted tmpfs');
}
