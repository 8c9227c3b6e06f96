/**
 * Container mounts for the two volume types that need no volume plugin: emptyDir (a directory
 * under <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, as upstream lays it out)
 * and hostPath (with upstream's type checks). This stands in for the volume manager until it
 * exists; any other volume type is a VolumeError, which the pod sees as
 * CreateContainerConfigError rather than a container started without its data.
 */
import { constants } from 'node:fs';
import { chmod, mkdir, open, rm, rmdir, stat } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { Mount } from '../cri/types.js';
import { expand, mappingFor } from './env.js';

export class VolumeError extends Error {}

export function podDir(rootDir: string, uid: string): string {
  return join(rootDir, 'pods', uid);
}

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return join(podDir(rootDir, uid), 'volumes', 'kubernetes.io~empty-dir', volumeName);
}

/** Mounts for the container's volumeMounts; creates emptyDir and *OrCreate hostPath targets. */
export async function makeMounts(pod: Pod, container: Container, rootDir: string, env: ReadonlyMap<string, string>): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find((v) => v.name === vm.name);
    if (!volume) throw new VolumeError(`volumeMount ${vm.name}: no volume of that name in the pod`);
    let base: string;
    if (volume.emptyDir) {
      if (volume.emptyDir.medium === 'Memory') throw new VolumeError(`volume ${vm.name}: emptyDir medium Memory is not supported yet`);
      base = emptyDirPath(rootDir, pod.metadata?.uid ?? '', vm.name);
      await mkdir(base, { recursive: true });
      // upstream emptyDir is world-writable so any container user can write to it.
      await chmod(base, 0o777);
    } else if (volume.hostPath) {
      base = volume.hostPath.path;
      await checkHostPath(vm.name, base, volume.hostPath.type ?? '');
    } else {
      const type = Object.keys(volume).find((k) => k !== 'name' && (volume as unknown as Record<string, unknown>)[k] !== undefined) ?? 'unknown';
      throw new VolumeError(`volume ${vm.name}: type ${type} is not supported yet`);
    }
    const sub = vm.subPathExpr ? expand(vm.subPathExpr, mappingFor(env)) : vm.subPath ?? '';
    const hostPath = sub ? await subPath(vm.name, base, sub) : base;
    mounts.push({ containerPath: vm.mountPath, hostPath, readonly: vm.readOnly === true });
  }
  return mounts;
}

async function subPath(name: string, base: string, sub: string): Promise<string> {
  const n = normalize(sub);
  if (isAbsolute(n) || n === '..' || n.startsWith('../')) throw new VolumeError(`volumeMount ${name}: subPath ${JSON.stringify(sub)} must be a relative path inside the volume`);
  const p = join(base, n);
  await mkdir(p, { recursive: true, mode: 0o750 }).catch(() => undefined);
  return p;
}

/** upstream hostPath type checks (pkg/volume/hostpath): *OrCreate creates, the others must match. */
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

/** Removes a deleted pod's emptyDir volumes, then the pod directory levels left empty. */
export async function removePodEmptyDirs(rootDir: string, uid: string): Promise<void> {
  const dir = podDir(rootDir, uid);
  await rm(join(dir, 'volumes', 'kubernetes.io~empty-dir'), { recursive: true, force: true });
  // rmdir only removes empty directories: anything another subsystem keeps there survives.
  await rmdir(join(dir, 'volumes')).catch(() => undefined);
  await rmdir(dir).catch(() => undefined);
}
