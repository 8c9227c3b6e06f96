/** Filesystem numbers for the Summary API: statfs of a mount, and the bytes/inodes under a dir. */
import { lstatSync, readdirSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import type { FsStats } from './types.js';

/** statfs of the filesystem holding path (capacity, available, used, inodes); undefined if absent. */
export function statfsStats(path: string, time: Date): FsStats | undefined {
  try {
    const s = statfsSync(path, { bigint: true });
    const capacityBytes = s.blocks * s.bsize;
    const availableBytes = s.bavail * s.bsize;
    return {
      time,
      availableBytes,
      capacityBytes,
      usedBytes: (s.blocks - s.bfree) * s.bsize,
      inodesFree: s.ffree,
      inodes: s.files,
      inodesUsed: s.files - s.ffree,
    };
  } catch {
    return undefined;
  }
}

/**
 * Bytes (allocated blocks) and inodes used under dir, not following symlinks or other mounts.
 * The walk uses number stats, not bigint ones: a pass walks every pod's log and volume dirs, and
 * a bigint Stats is ~15 heap objects; block counts stay exact in a double up to 2^53 bytes.
 */
export function dirUsage(dir: string, limit = 10_000): { bytes: bigint; inodes: bigint } | undefined {
  let blocks = 0;
  let inodes = 0;
  let dev: number | undefined;
  const stack = [dir];
  while (stack.length > 0 && inodes < limit) {
    const p = stack.pop()!;
    let st;
    try {
      st = lstatSync(p);
    } catch {
      if (p === dir) return undefined;
      continue;
    }
    dev ??= st.dev;
    if (st.dev !== dev) continue;
    blocks += st.blocks;
    inodes++;
    if (st.isDirectory()) {
      try {
        for (const e of readdirSync(p)) stack.push(join(p, e));
      } catch {
        // unreadable: counted as itself only
      }
    }
  }
  return { bytes: BigInt(blocks) * 512n, inodes: BigInt(inodes) };
}
