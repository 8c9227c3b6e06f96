/**
 * Container mounts for the volume types the agent sets up itself (upstream pkg/volume/emptydir,
 * hostpath, downwardapi, configmap, secret, projected, with the directory layout of the volume
 * manager: <rootDir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>, every level above the
 * volume 0750 — pod-dirs.ts):
 *
 *  - emptyDir: a world-writable directory; `medium: Memory` mounts a tmpfs there whose size is the
 *    smallest of sizeLimit, the pod's memory limit (when every container has one) and the node's
 *    allocatable memory (upstream SizeMemoryBackedVolumes);
 *  - hostPath, with upstream's `type` checks (*OrCreate creates);
 *  - downwardAPI, configMap, secret, projected (api-volumes.ts): files written atomically (a
 *    timestamped directory behind a `..data` symlink, as upstream's AtomicWriter), refreshed on
 *    every sync, mounted read-only. Secret, projected and downwardAPI volumes are on a tmpfs of
 *    their own, as upstream's memory-backed emptyDir wrapper, bounded by
 *    ATOMIC_VOLUME_TMPFS_MAX_BYTES; configMap volumes are on disk, as upstream.
 *
 * Memory-backed volumes are mounted with `noswap` where the kernel has it (Linux ≥ 6.4), so
 * their pages never reach a swap device. This stands in for the volume manager; any other volume
 * type is a VolumeError, which the pod sees as CreateContainerConfigError rather than a container
 * started without its data. Once the pod is terminated (or GC finds it gone), removePodVolumes
 * unmounts and deletes all of it.
 */
import { constants } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, readFile, readlink, rename, rm, rmdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import { podResourceConfig } from '../cm/index.js';
import type { Mount } from '../cri/types.js';
import { errorMessage, VolumeError } from '../errors.js';
import { log } from '../util/log.js';
import { atomicVolume, CONFIGMAP_PLUGIN, DOWNWARD_API_PLUGIN, PROJECTED_PLUGIN, SECRET_PLUGIN } from './api-volumes.js';
import { positiveQuantity, type NodeAllocatable } from './downward-api.js';
import { EnvError, expand, mappingFor, type EnvContext } from './env.js';
import { hostMounter, type Mounter, type TmpfsOptions } from './mount.js';
import { makeVolumeDir, podDir, podVolumeDir, podVolumesDir } from './pod-dirs.js';
import { cleanSubPaths, prepareSubPath } from './subpath.js';
import type { BindSubPath } from './subpath-types.js';
import { fsGroupMode, payloadPathProblem, VOLUME_DIR_MODE, volumeOwnership, type PayloadFile } from './volume-payload.js';

export { VolumeError } from '../errors.js';
export { podDir } from './pod-dirs.js';
export { DOWNWARD_API_PLUGIN } from './api-volumes.js';

export const EMPTY_DIR_PLUGIN = 'kubernetes.io~empty-dir';

/**
 * Bound of the tmpfs under a secret, projected or downwardAPI volume. Upstream sizes these
 * wrappers like any memory emptyDir (the pod's memory limit, else node allocatable); the pages
 * are charged to the agent that writes them, not to the pod, so they get a fixed ceiling as well:
 * a Secret or ConfigMap holds at most 1 MiB, and a swap briefly keeps two versions.
 */
export const ATOMIC_VOLUME_TMPFS_MAX_BYTES = 64 * 2 ** 20;

export function emptyDirPath(rootDir: string, uid: string, volumeName: string): string {
  return podVolumeDir(rootDir, uid, EMPTY_DIR_PLUGIN, volumeName);
}

export function downwardAPIPath(rootDir: string, uid: string, volumeName: string): string {
  return podVolumeDir(rootDir, uid, DOWNWARD_API_PLUGIN, volumeName);
}

/** What setting up volumes needs besides the pod. */
export interface VolumeContext {
  rootDir: string;
  /** For downwardAPI fieldRefs and the API objects. */
  downward: EnvContext;
  /** For resourceFieldRefs and the default tmpfs size. */
  allocatable: NodeAllocatable;
  /** The host's mounts (tests: a fake). */
  mounter: Mounter;
  /** The subPath hot path (subpath.ts): the addon's or its twin. */
  bindSubPath: BindSubPath;
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

/** The tmpfs of a secret, projected or downwardAPI volume: upstream's size, at most the fixed bound. */
export function atomicVolumeTmpfsSize(pod: Pod, allocatableMemory: number): number {
  const size = emptyDirMemorySize(pod, undefined, allocatableMemory);
  return size > 0 && size < ATOMIC_VOLUME_TMPFS_MAX_BYTES ? size : ATOMIC_VOLUME_TMPFS_MAX_BYTES;
}

const DATA_LINK = '..data';
/** Volume directories already reported as written on disk by an earlier version (bounded). */
const legacyWarned = new Set<string>();

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(() => true, () => false);
}

/**
 * A tmpfs at dir (upstream setupTmpfs), idempotent: a tmpfs already there is kept, another
 * filesystem is an error. An atomic-writer volume that an earlier kubelet-ts wrote on disk is
 * left on disk: running containers have that directory bind-mounted, and a tmpfs over it would
 * hide every later update from them. It moves to a tmpfs when the pod is next created.
 */
async function ensureTmpfs(mounter: Mounter, dir: string, name: string, opts: TmpfsOptions): Promise<void> {
  const fsType = await mounter.fsTypeAt(dir);
  if (fsType === 'tmpfs') return;
  if (fsType !== undefined) throw new VolumeError(`volume ${name}: ${dir} is already a ${fsType} mount, not tmpfs`);
  if (await exists(join(dir, DATA_LINK))) {
    if (!legacyWarned.has(dir)) {
      if (legacyWarned.size >= 1000) legacyWarned.clear();
      legacyWarned.add(dir);
      log('kuberuntime').warn({ dir }, 'volume was written on disk by an earlier version; it stays there until the pod is recreated');
    }
    return;
  }
  try {
    await mounter.mountTmpfs(dir, opts);
  } catch (err) {
    throw new VolumeError(`volume ${name}: cannot mount tmpfs at ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  log('kuberuntime').debug({ dir, size: opts.sizeBytes }, 'mounted tmpfs');
}

/** The pod's fsGroup, an out-of-range one being the volume's error. */
function ownershipFor(pod: Pod, name: string) {
  try {
    return volumeOwnership(pod);
  } catch (err) {
    throw new VolumeError(`volume ${name}: ${errorMessage(err)}`, { cause: err });
  }
}

async function setUpEmptyDir(pod: Pod, name: string, medium: string | undefined, sizeLimit: string | number | undefined, ctx: VolumeContext): Promise<string> {
  if (medium && medium !== 'Memory') throw new VolumeError(`volume ${name}: emptyDir medium ${medium} is not supported`);
  const own = ownershipFor(pod, name);
  const dir = await makeVolumeDir(ctx.rootDir, pod.metadata?.uid ?? '', EMPTY_DIR_PLUGIN, name, 0o777);
  if (medium === 'Memory') {
    await ensureTmpfs(ctx.mounter, dir, name, { sizeBytes: emptyDirMemorySize(pod, sizeLimit, ctx.allocatable.memory) });
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
  return dir;
}

/** Mounts for the container's volumeMounts; sets up emptyDir, tmpfs, the atomic-writer volumes and *OrCreate hostPath targets. */
export async function makeMounts(pod: Pod, container: Container, env: ReadonlyMap<string, string>, ctx: VolumeContext): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const [index, vm] of (container.volumeMounts ?? []).entries()) {
    const volume = pod.spec?.volumes?.find((v) => v.name === vm.name);
    if (!volume) throw new VolumeError(`volumeMount ${vm.name}: no volume of that name in the pod`);
    let base: string;
    let readonly = vm.readOnly === true;
    if (volume.emptyDir) {
      base = await setUpEmptyDir(pod, vm.name, volume.emptyDir.medium, volume.emptyDir.sizeLimit as string | number | undefined, ctx);
    } else if (volume.hostPath) {
      base = volume.hostPath.path;
      await checkHostPath(vm.name, base, volume.hostPath.type ?? '');
    } else if (atomicVolume(pod, volume, ctx.downward, ctx.allocatable)) {
      base = await setUpAtomicVolume(pod, volume, ctx);
      // upstream mounts API data volumes read-only.
      readonly = true;
    } else {
      const type = Object.keys(volume).find((k) => k !== 'name' && (volume as unknown as Record<string, unknown>)[k] !== undefined) ?? 'unknown';
      throw new VolumeError(`volume ${vm.name}: type ${type} is not supported yet`);
    }
    const sub = vm.subPathExpr ? expand(vm.subPathExpr, mappingFor(env)) : vm.subPath ?? '';
    const hostPath = sub
      ? await prepareSubPath(ctx, { uid: pod.metadata?.uid ?? '', container: container.name, index, volumeName: vm.name, volumePath: base, subPath: sub })
      : base;
    mounts.push({ containerPath: vm.mountPath, hostPath, readonly });
  }
  return mounts;
}

type Volume = NonNullable<NonNullable<Pod['spec']>['volumes']>[number];

/**
 * A downwardAPI / configMap / secret / projected volume (api-volumes.ts): the contents first (a
 * missing object fails before anything is mounted), then the directory, its tmpfs when the
 * medium is memory, then the atomic write.
 */
async function setUpAtomicVolume(pod: Pod, volume: Volume, ctx: VolumeContext): Promise<string> {
  const v = atomicVolume(pod, volume, ctx.downward, ctx.allocatable)!;
  let contents: ReturnType<typeof v.contents>;
  try {
    contents = v.contents();
    checkPayloadPaths(contents.files);
  } catch (err) {
    if (err instanceof EnvError || err instanceof VolumeError) throw new VolumeError(`volume ${volume.name}: ${err.message}`, { cause: err });
    throw err;
  }
  const dir = await makeVolumeDir(ctx.rootDir, pod.metadata?.uid ?? '', v.plugin, volume.name, VOLUME_DIR_MODE);
  if (v.medium === 'Memory') {
    await ensureTmpfs(ctx.mounter, dir, volume.name, { sizeBytes: atomicVolumeTmpfsSize(pod, ctx.allocatable.memory), mode: VOLUME_DIR_MODE });
  }
  try {
    await writeAtomic(dir, contents.files, contents.dir);
  } catch (err) {
    throw new VolumeError(`volume ${volume.name}: cannot write ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  return dir;
}

/**
 * Rewrites the downwardAPI, configMap, secret and projected volumes of the pod that are already
 * set up, so that label, annotation and object changes reach the files (upstream's volume
 * manager remounts them periodically).
 */
export async function refreshDownwardAPIVolumes(pod: Pod, ctx: VolumeContext): Promise<void> {
  for (const v of pod.spec?.volumes ?? []) {
    const api = atomicVolume(pod, v, ctx.downward, ctx.allocatable);
    if (!api) continue;
    if (!(await exists(podVolumeDir(ctx.rootDir, pod.metadata?.uid ?? '', api.plugin, v.name)))) continue;
    await setUpAtomicVolume(pod, v, ctx).catch((err: unknown) => log('kuberuntime').warn({ volume: v.name, err: errorMessage(err) }, 'cannot refresh volume'));
  }
}

interface DirOwnership {
  mode: number;
  gid?: number;
}

/** The files under dir (relative paths), for comparing a payload with what is written. */
async function listFiles(dir: string, prefix = ''): Promise<Map<string, PayloadFile>> {
  const out = new Map<string, PayloadFile>();
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? join(prefix, e.name) : e.name;
    if (e.isDirectory()) {
      for (const [k, v] of await listFiles(dir, rel)) out.set(k, v);
    } else {
      const st = await stat(join(dir, rel));
      out.set(rel, { data: await readFile(join(dir, rel)), mode: st.mode & 0o777, uid: st.uid, gid: st.gid });
    }
  }
  return out;
}

/** Same contents and modes; owners only where the payload names them. */
function samePayload(current: Map<string, PayloadFile>, wanted: Map<string, PayloadFile>): boolean {
  if (current.size !== wanted.size) return false;
  for (const [k, w] of wanted) {
    const c = current.get(k);
    if (!c || !Buffer.from(w.data).equals(Buffer.from(c.data)) || c.mode !== w.mode) return false;
    if ((w.uid !== undefined && c.uid !== w.uid) || (w.gid !== undefined && c.gid !== w.gid)) return false;
  }
  return true;
}

/** upstream changeFilePermission order: the group first, then the mode (chown may clear setgid). */
async function own(path: string, mode: number, uid: number | undefined, gid: number | undefined): Promise<void> {
  if (uid !== undefined || gid !== undefined) await chown(path, uid ?? -1, gid ?? -1);
  await chmod(path, mode);
}

/** The directories leading to rel under base, each created with the directory mode and group. */
async function makeParents(base: string, rel: string, dirs: DirOwnership): Promise<void> {
  let p = base;
  for (const part of rel.split('/').slice(0, -1)) {
    p = join(p, part);
    const created = await mkdir(p).then(() => true, (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      return false;
    });
    if (created) await own(p, dirs.mode, undefined, dirs.gid);
  }
}

function checkPayloadPaths(payload: ReadonlyMap<string, PayloadFile>): void {
  for (const path of payload.keys()) {
    const problem = payloadPathProblem(path);
    if (problem) throw new VolumeError(`file name ${JSON.stringify(path)} ${problem}`);
  }
}

/**
 * upstream AtomicWriter: the payload goes to a new `..<timestamp>` directory, `..data` is swapped
 * to it by rename, and each top-level name is a symlink through `..data`; readers never see a
 * half-written set. Files get their payload mode and owners, directories (the volume's root
 * included) `dirs`. Nothing is written when the payload is unchanged. Paths that would leave
 * the directory or collide with the writer's own `..` entries are a VolumeError.
 */
export async function writeAtomic(dir: string, payload: Map<string, PayloadFile>, dirs: DirOwnership = { mode: VOLUME_DIR_MODE }): Promise<void> {
  checkPayloadPaths(payload);
  await mkdir(dir, { recursive: true, mode: dirs.mode });
  const old = await readlink(join(dir, DATA_LINK)).catch(() => undefined);
  if (old !== undefined) {
    const current = await listFiles(join(dir, old)).catch(() => undefined);
    if (current && samePayload(current, payload)) return;
  }
  const ts = new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').replace('Z', '');
  const versioned = `..${ts}${Math.random().toString(36).slice(2, 8)}`;
  await mkdir(join(dir, versioned));
  await own(join(dir, versioned), dirs.mode, undefined, dirs.gid);
  for (const [rel, f] of payload) {
    const p = join(dir, versioned, rel);
    await makeParents(join(dir, versioned), rel, dirs);
    await writeFile(p, f.data, { mode: f.mode });
    await own(p, f.mode, f.uid, f.gid);
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
  await own(dir, dirs.mode, undefined, dirs.gid);
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

const PLUGINS = [EMPTY_DIR_PLUGIN, DOWNWARD_API_PLUGIN, CONFIGMAP_PLUGIN, SECRET_PLUGIN, PROJECTED_PLUGIN];

/**
 * Removes a pod's volumes (upstream TearDown of each, then the directories): unmounts its subPath
 * binds (subpath.ts), then every mount below its volumes directory (the tmpfs of memory emptyDirs, secret, projected and
 * downwardAPI volumes), deepest first, then deletes the volume data and the directory levels
 * left empty. A mount that will not go stops the removal (nothing is deleted through it).
 * hostPath data is never touched.
 */
export async function removePodVolumes(rootDir: string, uid: string, mounter: Mounter = hostMounter): Promise<void> {
  const dir = podDir(rootDir, uid);
  const volumes = podVolumesDir(rootDir, uid);
  // The subPath binds first: they hold parts of the volumes below.
  await cleanSubPaths(rootDir, uid, mounter);
  for (const m of await mounter.mountsUnder(volumes)) {
    await mounter.unmount(m);
    log('kuberuntime').debug({ mountPoint: m }, 'unmounted pod volume');
  }
  if ((await mounter.mountsUnder(volumes)).length > 0) throw new VolumeError(`cannot remove the volumes of pod ${uid}: mounts remain under ${volumes} after unmounting; the next garbage collection tries again`);
  for (const plugin of PLUGINS) await rm(join(volumes, plugin), { recursive: true, force: true });
  // rmdir only removes empty directories: anything another subsystem keeps there survives.
  await rmdir(volumes).catch(() => undefined);
  await rmdir(dir).catch(() => undefined);
}
