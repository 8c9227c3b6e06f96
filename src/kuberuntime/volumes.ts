/**
 * Container mounts for the volume types that need no volume plugin or apiserver (upstream
 * pkg/volume/emptydir, hostpath, downwardapi, with the directory layout of the volume manager:
 * <rootDir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>):
 *
 *  - emptyDir: a world-writable directory; `medium: Memory` mounts a tmpfs there whose size is the
 *    smallest of sizeLimit, the pod's memory limit (when every container has one) and the node's
 *    allocatable memory (upstream SizeMemoryBackedVolumes);
 *  - hostPath, with upstream's `type` checks (*OrCreate creates);
 *  - downwardAPI: files written atomically (a timestamped directory behind a `..data` symlink,
 *    as upstream's AtomicWriter) and refreshed on every sync; mounted read-only.
 *
 * This stands in for the volume manager; any other volume type is a VolumeError, which the pod
 * sees as CreateContainerConfigError rather than a container started without its data. When the
 * pod is gone, removePodVolumes unmounts and deletes all of it.
 */
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readFile, readlink, rename, rm, rmdir, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import { podDir } from '../util/pod-identity.js';
import { podResourceConfig } from '../cm/index.js';
import type { Mount } from '../cri/types.js';
import { kubeletErrorClass } from '../errors.js';
import { log } from '../util/log.js';
import { pathComponent } from '../util/path-component.js';
import { downwardAPIPayload, positiveQuantity, type DownwardAPIVolumeSource, type NodeAllocatable, type PayloadFile } from './downward-api.js';
import { EnvError, expand, mappingFor, type EnvContext } from './env.js';
import { mountAt, mountsUnder, mountTmpfs, unmount } from './mount.js';
import { apiVolumePayload, CONFIGMAP_PLUGIN, PROJECTED_PLUGIN, SECRET_PLUGIN } from './api-volumes.js';

export class VolumeError extends kubeletErrorClass('KTS_ERR_VOLUME') {}

const EMPTY_DIR_PLUGIN = 'kubernetes.io~empty-dir';
const DOWNWARD_API_PLUGIN = 'kubernetes.io~downward-api';

export { podDir };

/** upstream getPodVolumeDir + the volume's name: `<root-dir>/pods/<uid>/volumes/<plugin>/<name>`. */
export function volumeDir(rootDir: string, uid: string, plugin: string, volumeName: string): string {
  return join(podDir(rootDir, uid), 'volumes', plugin, pathComponent(volumeName, 'volume name'));
}

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return volumeDir(rootDir, uid, EMPTY_DIR_PLUGIN, volumeName);
}

export function downwardAPIPath(rootDir: string, uid: string, volumeName: string): string {
  return volumeDir(rootDir, uid, DOWNWARD_API_PLUGIN, volumeName);
}

/** What setting up volumes needs besides the pod. */
export interface VolumeContext {
  rootDir: string;
  /** For downwardAPI fieldRefs. */
  downward: EnvContext;
  /** For resourceFieldRefs and the default tmpfs size. */
  allocatable: NodeAllocatable;
}

/**
 * upstream calculateEmptyDirMemorySize: node allocatable memory, lowered to the pod's memory limit
 * and then to the volume's sizeLimit when those are smaller.
 */
export function emptyDirMemorySize(pod: Pod, sizeLimit: string | number | undefined, allocatableMemory: number): number {
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

async function setUpEmptyDir(pod: Pod, name: string, medium: string | undefined, sizeLimit: string | number | undefined, ctx: VolumeContext): Promise<string> {
  const dir = emptyDirPath(ctx.rootDir, pod.metadata?.uid ?? '', name);
  await mkdir(dir, { recursive: true });
  if (medium === 'Memory') {
    const mounted = await mountAt(dir);
    if (!mounted) {
      const size = emptyDirMemorySize(pod, sizeLimit, ctx.allocatable.memory);
      try {
        await mountTmpfs(dir, size);
      } catch (err) {
        throw new VolumeError(`volume ${name}: cannot mount tmpfs: ${(err as Error).message}`, { cause: err });
      }
      log('kuberuntime').debug({ dir, size }, 'mounted memory-backed emptyDir');
    } else if (mounted.fsType !== 'tmpfs') {
      throw new VolumeError(`volume ${name}: ${dir} is already a ${mounted.fsType} mount, not tmpfs`);
    }
  } else if (medium && medium !== '') {
    throw new VolumeError(`volume ${name}: emptyDir medium ${medium} is not supported`);
  }
  // upstream emptyDir is world-writable so any container user can write to it (tmpfs: 1777).
  if (medium !== 'Memory') await chmod(dir, 0o777);
  return dir;
}

/** Mounts for the container's volumeMounts; sets up emptyDir, tmpfs, downwardAPI and *OrCreate hostPath targets. */
export async function makeMounts(pod: Pod, container: Container, env: ReadonlyMap<string, string>, ctx: VolumeContext): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find((v) => v.name === vm.name);
    if (!volume) throw new VolumeError(`volumeMount ${vm.name}: no volume of that name in the pod`);
    let base: string;
    let readonly = vm.readOnly === true;
    if (volume.emptyDir) {
      base = await setUpEmptyDir(pod, vm.name, volume.emptyDir.medium, volume.emptyDir.sizeLimit as string | number | undefined, ctx);
    } else if (volume.hostPath) {
      base = volume.hostPath.path;
      await checkHostPath(vm.name, base, volume.hostPath.type ?? '');
    } else if (volume.downwardAPI) {
      base = await setUpDownwardAPI(pod, vm.name, volume.downwardAPI as DownwardAPIVolumeSource, ctx);
      // upstream mounts API data volumes read-only.
      readonly = true;
    } else if (apiVolumePayload(pod, volume, ctx.downward, ctx.allocatable)) {
      base = await setUpApiVolume(pod, volume, ctx);
      readonly = true;
    } else {
      const type = Object.keys(volume).find((k) => k !== 'name' && (volume as unknown as Record<string, unknown>)[k] !== undefined) ?? 'unknown';
      throw new VolumeError(`volume ${vm.name}: type ${type} is not supported yet`);
    }
    const sub = vm.subPathExpr ? expand(vm.subPathExpr, mappingFor(env)) : vm.subPath ?? '';
    const hostPath = sub ? await subPath(vm.name, base, sub) : base;
    mounts.push({ containerPath: vm.mountPath, hostPath, readonly });
  }
  return mounts;
}

async function setUpDownwardAPI(pod: Pod, name: string, source: DownwardAPIVolumeSource, ctx: VolumeContext): Promise<string> {
  const dir = downwardAPIPath(ctx.rootDir, pod.metadata?.uid ?? '', name);
  let payload: Map<string, PayloadFile>;
  try {
    payload = downwardAPIPayload(pod, source, ctx.downward, ctx.allocatable);
  } catch (err) {
    if (err instanceof EnvError) throw new VolumeError(`volume ${name}: ${err.message}`, { cause: err });
    throw err;
  }
  await writeAtomic(dir, payload);
  return dir;
}

/** configMap/secret/projected (api-volumes.ts): written atomically like downwardAPI. */
async function setUpApiVolume(pod: Pod, volume: NonNullable<NonNullable<Pod['spec']>['volumes']>[number], ctx: VolumeContext): Promise<string> {
  const v = apiVolumePayload(pod, volume, ctx.downward, ctx.allocatable)!;
  const dir = volumeDir(ctx.rootDir, pod.metadata?.uid ?? '', v.plugin, volume.name);
  let payload: Map<string, PayloadFile>;
  try {
    payload = v.payload();
  } catch (err) {
    if (err instanceof EnvError) throw new VolumeError(`volume ${volume.name}: ${err.message}`, { cause: err });
    throw err;
  }
  await writeAtomic(dir, payload);
  return dir;
}

/**
 * Rewrites the downwardAPI (and configMap, secret, projected) volumes of the pod that are already
 * set up, so that label, annotation and object changes reach the files (upstream's volume
 * manager remounts them periodically).
 */
export async function refreshDownwardAPIVolumes(pod: Pod, ctx: VolumeContext): Promise<void> {
  for (const v of pod.spec?.volumes ?? []) {
    const api = apiVolumePayload(pod, v, ctx.downward, ctx.allocatable);
    if (api) {
      if (!(await stat(volumeDir(ctx.rootDir, pod.metadata?.uid ?? '', api.plugin, v.name)).catch(() => undefined))) continue;
      await setUpApiVolume(pod, v, ctx).catch((err: unknown) => log('kuberuntime').warn({ volume: v.name, err: String(err) }, 'cannot refresh volume'));
      continue;
    }
    if (!v.downwardAPI) continue;
    const dir = downwardAPIPath(ctx.rootDir, pod.metadata?.uid ?? '', v.name);
    if (!(await stat(dir).catch(() => undefined))) continue;
    await setUpDownwardAPI(pod, v.name, v.downwardAPI as DownwardAPIVolumeSource, ctx).catch((err: unknown) =>
      log('kuberuntime').warn({ volume: v.name, err: String(err) }, 'cannot refresh downwardAPI volume'));
  }
}

const DATA_LINK = '..data';

/** The files under dir (relative paths), for comparing a payload with what is written. */
async function listFiles(dir: string, prefix = ''): Promise<Map<string, PayloadFile>> {
  const out = new Map<string, PayloadFile>();
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? join(prefix, e.name) : e.name;
    if (e.isDirectory()) {
      for (const [k, v] of await listFiles(dir, rel)) out.set(k, v);
    } else {
      const st = await stat(join(dir, rel));
      out.set(rel, { data: await readFile(join(dir, rel), 'utf8'), mode: st.mode & 0o777 });
    }
  }
  return out;
}

function samePayload(a: Map<string, PayloadFile>, b: Map<string, PayloadFile>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || w.data !== v.data || w.mode !== v.mode) return false;
  }
  return true;
}

/**
 * upstream AtomicWriter: the payload goes to a new `..<timestamp>` directory, `..data` is swapped
 * to it by rename, and each top-level name is a symlink through `..data`; readers never see a
 * half-written set. Nothing is written when the payload is unchanged.
 */
export async function writeAtomic(dir: string, payload: Map<string, PayloadFile>): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const old = await readlink(join(dir, DATA_LINK)).catch(() => undefined);
  if (old !== undefined) {
    const current = await listFiles(join(dir, old)).catch(() => undefined);
    if (current && samePayload(current, payload)) return;
  }
  const ts = new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').replace('Z', '');
  const versioned = `..${ts}${Math.random().toString(36).slice(2, 8)}`;
  await mkdir(join(dir, versioned), { mode: 0o755 });
  for (const [rel, f] of payload) {
    const p = join(dir, versioned, rel);
    await mkdir(dirname(p), { recursive: true, mode: 0o755 });
    await writeFile(p, f.data, { mode: f.mode });
    await chmod(p, f.mode);
  }
  const tmp = join(dir, '..data_tmp');
  await rm(tmp, { force: true });
  await symlink(versioned, tmp);
  await rename(tmp, join(dir, DATA_LINK));
  const top = new Set([...payload.keys()].map((k) => k.split('/')[0]!));
  for (const name of top) {
    const link = join(dir, name);
    const st = await lstat(link).catch(() => undefined);
    if (st?.isSymbolicLink()) continue;
    if (st) await rm(link, { recursive: true, force: true });
    await symlink(join(DATA_LINK, name), link);
  }
  for (const e of await readdir(dir)) {
    if (e.startsWith('..') || top.has(e)) continue;
    await rm(join(dir, e), { recursive: true, force: true });
  }
  if (old !== undefined && old !== versioned) await rm(join(dir, old), { recursive: true, force: true });
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

/**
 * Removes a deleted pod's volumes: unmounts every mount below its volumes directory (tmpfs
 * emptyDirs), deepest first, then deletes the emptyDir and downwardAPI data and the directory
 * levels left empty. A mount that will not go stops the removal (nothing is deleted through it).
 */
export async function removePodVolumes(rootDir: string, uid: string): Promise<void> {
  const dir = podDir(rootDir, uid);
  const volumes = join(dir, 'volumes');
  for (const m of await mountsUnder(volumes)) {
    await unmount(m);
    log('kuberuntime').debug({ mountPoint: m }, 'unmounted pod volume');
  }
  if ((await mountsUnder(volumes)).length > 0) throw new VolumeError(`cannot remove the volumes of pod ${uid}: mounts remain under ${volumes} after unmounting; the next garbage collection tries again`);
  await rm(join(volumes, EMPTY_DIR_PLUGIN), { recursive: true, force: true });
  await rm(join(volumes, DOWNWARD_API_PLUGIN), { recursive: true, force: true });
  for (const plugin of [CONFIGMAP_PLUGIN, SECRET_PLUGIN, PROJECTED_PLUGIN]) await rm(join(volumes, plugin), { recursive: true, force: true });
  // rmdir only removes empty directories: anything another subsystem keeps there survives.
  await rmdir(volumes).catch(() => undefined);
  await rmdir(dir).catch(() => undefined);
}
