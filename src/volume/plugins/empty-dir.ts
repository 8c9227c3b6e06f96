/**
 * emptyDir (upstream pkg/volume/emptydir): a world-writable directory under the pod, or with
 * `medium: Memory` a tmpfs sized as tmpfs.ts says, or with `medium: HugePages[-<size>]` a hugetlbfs
 * of that page size (the pod's hugepages-* size for plain HugePages); with an fsGroup,
 * group-owned and setgid.
 */
import { chmod, chown, stat } from 'node:fs/promises';
import { podUID } from '../../api/pod.js';
import type { Pod } from '../../api/types.js';

import { makeVolumeDir, podVolumeDir } from '../pod-dirs.js';
import { emptyDirMemorySize, ensureTmpfs } from '../tmpfs.js';
import type { MountedVolume, Volume, VolumeHost, VolumePlugin } from '../types.js';
import { fsGroupMode, volumeOwnershipFor } from '../volume-payload.js';
import { tearDownLocalVolume } from './local-teardown.js';
import { binaryQuantity, containerHugePages, hugePageSizeFromResourceName } from '../../node/hugepages.js';
import { errorMessage, VolumeError } from '../../errors.js';

export const EMPTY_DIR_PLUGIN = 'kubernetes.io~empty-dir';

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return podVolumeDir(rootDir, uid, EMPTY_DIR_PLUGIN, volumeName);
}

async function setUp(pod: Pod, volume: Volume, host: VolumeHost): Promise<MountedVolume> {
  const { name } = volume;
  const medium = volume.emptyDir?.medium;
  const hugePageSize = medium && medium !== 'Memory' ? hugePagesMountSize(pod, name, medium) : undefined;
  const own = volumeOwnershipFor(pod, name);
  const dir = await makeVolumeDir(host.rootDir, { uid: podUID(pod), plugin: EMPTY_DIR_PLUGIN, name }, 0o777);
  if (medium === 'Memory') {
    const sizeLimit = volume.emptyDir?.sizeLimit as string | number | undefined;
    await ensureTmpfs(host.mounter, dir, name, {
      sizeBytes: emptyDirMemorySize(pod, sizeLimit, host.allocatable.memory),
    });
  } else if (hugePageSize !== undefined) {
    await ensureHugetlbfs(host, dir, name, hugePageSize);
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

/**
 * upstream getPageSizeMountOption: HugePages-<size> names its size; plain HugePages takes the one
 * page size the pod's containers ask for (none, or several, is an error).
 */
export function hugePagesMountSize(pod: Pod, name: string, medium: string): string {
  if (medium !== 'HugePages') {
    const size = medium.startsWith('HugePages-')
      ? hugePageSizeFromResourceName(`hugepages-${medium.slice(10)}`)
      : undefined;
    if (size === undefined) throw new VolumeError(`volume ${name}: emptyDir medium ${medium} is not supported`);
    return binaryQuantity(size);
  }
  const sizes = new Set<number>();
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])])
    for (const k of Object.keys(containerHugePages(c))) {
      const size = hugePageSizeFromResourceName(k);
      if (size !== undefined) sizes.add(size);
    }
  if (sizes.size === 0)
    throw new VolumeError(`volume ${name}: medium HugePages needs a container asking for hugepages-<size>`);
  if (sizes.size > 1)
    throw new VolumeError(
      `volume ${name}: medium HugePages cannot be used when containers ask for several page sizes; use HugePages-<size>`,
    );
  return binaryQuantity([...sizes][0]!);
}

async function ensureHugetlbfs(host: VolumeHost, dir: string, name: string, pageSize: string): Promise<void> {
  const fsType = await host.mounter.fsTypeAt(dir);
  if (fsType === 'hugetlbfs') return;
  if (fsType !== undefined) throw new VolumeError(`volume ${name}: ${dir} is already a ${fsType} mount, not hugetlbfs`);
  try {
    await host.mounter.mountHugetlbfs(dir, pageSize);
  } catch (err) {
    throw new VolumeError(
      `volume ${name}: cannot mount hugetlbfs (pagesize=${pageSize}) at ${dir}: ${errorMessage(err)}`,
      {
        cause: err,
      },
    );
  }
}

export const emptyDirPlugin: VolumePlugin = {
  name: EMPTY_DIR_PLUGIN,
  requiresRemount: false,
  canSupport: (volume) => volume.emptyDir !== undefined && volume.emptyDir !== null,
  setUp,
  tearDown: tearDownLocalVolume,
};
