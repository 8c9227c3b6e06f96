/**
 * upstream TearDown of a volume whose data lives in its own directory under the pod
 * (emptyDir, and the atomic-writer volumes): every mount there (a tmpfs) unmounted, deepest
 * first, then the directory deleted. A mount that will not go stops it: nothing is deleted
 * through a live mount.
 */
import { rm } from 'node:fs/promises';
import { VolumeError } from '../../errors.js';
import { log } from '../../util/log.js';
import type { VolumeHost } from '../types.js';

async function mountsAtOrUnder(host: VolumeHost, dir: string): Promise<string[]> {
  const below = await host.mounter.mountsUnder(dir);
  return (await host.mounter.fsTypeAt(dir)) === undefined ? below : [...below, dir];
}

export async function tearDownLocalVolume(dir: string, host: VolumeHost): Promise<void> {
  for (const m of await mountsAtOrUnder(host, dir)) {
    await host.mounter.unmount(m);
    log('volume').debug({ mountPoint: m }, 'unmounted pod volume');
  }
  if ((await mountsAtOrUnder(host, dir)).length > 0)
    throw new VolumeError(
      `cannot tear down volume ${dir}: mounts remain after unmounting; the next garbage collection tries again`,
    );
  await rm(dir, { recursive: true, force: true });
}
