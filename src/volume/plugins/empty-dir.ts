/**
 * emptyDir (upstream pkg/volume/emptydir): a world-writable directory under the pod, or with
 * `medium: Memory` a tmpfs sized as tmpfs.ts says; with an fsGroup, group-owned and setgid.
 */
import { chmod, chown, stat } from 'node:fs/promises';
import { podUID } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import { makeVolumeDir, podVolumeDir } from '../pod-dirs.js';
import { emptyDirMemorySize, ensureTmpfs } from '../tmpfs.js';
import type { MountedVolume, Volume, VolumeHost, VolumePlugin } from '../types.js';
import { fsGroupMode, volumeOwnershipFor } from '../volume-payload.js';
import { tearDownLocalVolume } from './local-teardown.js';

export const EMPTY_DIR_PLUGIN = 'kubernetes.io~empty-dir';

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return podVolumeDir(rootDir, uid, EMPTY_DIR_PLUGIN, volumeName);
}

async function setUp(pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume> {
  const { name } = volume;
  const medium = volume.emptyDir?.medium;
  if (medium && medium !== 'Memory')
    throw new VolumeError(`volume ${name}: emptyDir medium ${medium} is not supported`);
  const own = volumeOwnershipFor(pod, name);
  const dir = await makeVolumeDir(host.rootDir, { uid: podUID(pod), plugin: EMPTY_DIR_PLUGIN, name }, 0o777);
  if (medium === 'Memory') {
    const sizeLimit = volume.emptyDir?.sizeLimit as string | number | undefined;
    await ensureTmpfs(host.mounter, dir, name, {
      sizeBytes: emptyDirMemorySize(pod, sizeLimit, host.allocatable.memory),
    });
  } else {
    // upstream emptyDir is world-writable so any container user can write to it (tmpfs: 1777).
    await chmod(dir, 0o777);
  }
  if (own.fsGroup !== undefined) {
    // upstream SetVolumeOwnership on a read-write volume: group-owned, g+rwx and setgid, so
    // what the containers create there belongs to the fsGroup too.
    await chown(dir, -1, own.fsGroup);
    await chmod(dir, fsGroupMode((await stat(dir)).mode & 0o7777, true, false));
  }
  return { hostPath: dir, readOnly: false };
}

export const emptyDirPlugin: VolumePlugin = {
  name: EMPTY_DIR_PLUGIN,
  requiresRemount: false,
  canSupport: (volume) => volume.emptyDir !== undefined && volume.emptyDir !== null,
  setUp,
  tearDown: tearDownLocalVolume,
};
