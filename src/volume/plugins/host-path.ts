/**
 * hostPath (upstream pkg/volume/hostpath): the host's own path, with upstream's `type` checks
 * (*OrCreate creates). Checked again on every sync, so a container (re)started later does not
 * bind a path that has gone or changed type. Nothing of it is ever deleted.
 */
import { constants } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import type { Pod } from '../../api/types.js';
import { VolumeError } from '../../errors.js';
import type { MountedVolume, Volume, VolumePlugin } from '../types.js';

export const HOST_PATH_PLUGIN = 'kubernetes.io~host-path';

/** upstream hostPath type checks: *OrCreate creates, the others must match. */
async function checkHostPath(name: string, path: string, type: string): Promise<void> {
  if (type === 'DirectoryOrCreate') {
    await mkdir(path, { recursive: true, mode: 0o755 });
    return;
  }
  if (type === 'FileOrCreate') {
    const fh = await open(path, constants.O_CREAT | constants.O_RDONLY, 0o644);
    await fh.close();
    return;
  }
  if (type === '') return;
  const st = await stat(path).catch(() => undefined);
  const ok: Record<string, (s: NonNullable<typeof st>) => boolean> = {
    Directory: (s) => s.isDirectory(),
    File: (s) => s.isFile(),
    Socket: (s) => s.isSocket(),
    CharDevice: (s) => s.isCharacterDevice(),
    BlockDevice: (s) => s.isBlockDevice(),
  };
  const check = ok[type];
  if (!check) throw new VolumeError(`volume ${name}: unknown hostPath type ${type}`);
  if (!st || !check(st)) throw new VolumeError(`volume ${name}: hostPath ${path} is not a ${type}`);
}

async function setUp(_pod: Pod, volume: Volume): Promise<MountedVolume> {
  const path = volume.hostPath!.path;
  await checkHostPath(volume.name, path, volume.hostPath!.type ?? '');
  return { hostPath: path, readOnly: false };
}

export const hostPathPlugin: VolumePlugin = {
  name: HOST_PATH_PLUGIN,
  requiresRemount: true,
  canSupport: (volume) => volume.hostPath !== undefined && volume.hostPath !== null,
  setUp,
  // The data is the host's: there is no directory under the pod to remove.
  tearDown: async () => undefined,
};
