/**
 * Pod volume stats for the Summary API (stats/v1alpha1 VolumeStats): the volumes the kubelet
 * itself lays out under <rootDir>/pods/<uid>/volumes/<plugin>/<name> (emptyDir, configMap,
 * secret, downwardAPI, projected); usage from a walk of the directory, capacity from statfs of
 * the filesystem holding it (a Memory emptyDir or a secret has its own tmpfs).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { dirUsage, statfsStats } from './fs-stats.js';
import type { VolumeStats } from './types.js';
import { detachString, readMountInfoSync } from '../util/mountinfo.js';

/** The plugin directories measured, and whether upstream counts them as local ephemeral storage. */
export const VOLUME_PLUGINS: Readonly<Record<string, { ephemeral: boolean }>> = {
  'kubernetes.io~empty-dir': { ephemeral: true },
  'kubernetes.io~configmap': { ephemeral: true },
  'kubernetes.io~secret': { ephemeral: false }, // upstream keeps secrets in memory, never on disk
  'kubernetes.io~downward-api': { ephemeral: true },
  'kubernetes.io~projected': { ephemeral: false },
};

export interface MeasuredVolume extends VolumeStats {
  /** Counts toward the pod's ephemeral-storage (disk-backed, upstream IsLocalEphemeralVolume). */
  ephemeral: boolean;
}

/** Every volume directory of a pod, measured; [] when the pod has none. */
export function podVolumeStats(volumesDir: string, time: Date): MeasuredVolume[] {
  const out: MeasuredVolume[] = [];
  // One listing of the pod's volumes dir, not a failed readdir per absent plugin: most pods have
  // one or two kinds of volume, and a failed readdirSync costs a thrown error (~12 µs) each, per
  // pod, per pass (issue 30, 250 pods).
  let present: Set<string>;
  try {
    present = new Set(readdirSync(volumesDir));
  } catch {
    return out;
  }
  for (const [plugin, { ephemeral }] of Object.entries(VOLUME_PLUGINS)) {
    if (!present.has(plugin)) continue;
    let names: string[];
    try {
      names = readdirSync(join(volumesDir, plugin));
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const dir = join(volumesDir, plugin, name);
      const used = dirUsage(dir);
      if (!used) continue;
      const fs = statfsStats(dir, time);
      // A tmpfs of its own (Memory emptyDir, secret) is not the node's disk.
      const onTmpfs = fs !== undefined && isTmpfs(dir);
      out.push({
        time,
        name,
        usedBytes: used.bytes,
        inodesUsed: used.inodes,
        ...(fs
          ? {
              capacityBytes: fs.capacityBytes,
              availableBytes: fs.availableBytes,
              inodes: fs.inodes,
              inodesFree: fs.inodesFree,
            }
          : {}),
        ephemeral: ephemeral && !onTmpfs,
      });
    }
  }
  return out;
}

/** Whether dir is itself a tmpfs mount point (from /proc/self/mountinfo). */
function isTmpfs(dir: string): boolean {
  return tmpfsMounts().has(dir);
}

let mountsCache: { at: number; set: Set<string> } | undefined;
function tmpfsMounts(): Set<string> {
  if (mountsCache && Date.now() - mountsCache.at < 1000) return mountsCache.set;
  // No mountinfo: nothing is a tmpfs. Detached: the set outlives the text (src/util/mountinfo.ts).
  const tmpfs = readMountInfoSync().filter((m) => m.fsType === 'tmpfs');
  const set = new Set(tmpfs.map((m) => detachString(m.mountPoint)));
  mountsCache = { at: Date.now(), set };
  return set;
}
