/**
 * Safe subPath and subPathExpr mounts (upstream kubelet_pods.go makeMounts with
 * pkg/volume/util/subpath, the fix of CVE-2017-1002101 and CVE-2021-25741). A pod controls what
 * its volume holds, symlinks included, and the runtime resolves symlinks in a mount's host path,
 * so `<volume>/<subPath>` is never handed to the runtime. Instead:
 *
 *  1. the subPath is refused when absolute or holding a ".." component (upstream
 *     ValidateSubPath, and its runtime check of an expanded subPathExpr);
 *  2. it is resolved on the host, symlinks and all, and refused unless the result is inside the
 *     volume; links that stay inside (a configMap key -> ..data/key) are fine, as upstream;
 *  3. the resolved path is opened one component at a time without following any symlink and
 *     what was opened is bind-mounted onto `<root-dir>/pods/<uid>/volume-subpaths/<volume>/
 *     <container>/<index of the volumeMount>` (the hot path, subpath-types.ts), which the runtime
 *     gets. A symlink swapped in after step 2 makes step 3 fail, never follow it.
 *
 * Missing directories are created with the volume root's mode (upstream SafeMakeDir). A bind left
 * by an earlier start of the container is replaced, so a restart checks today's tree again.
 * cleanSubPaths unmounts and removes all of a pod's binds when its volumes go.
 */
import { lstat, mkdir, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { SubPathError, VolumeError } from '../../errors.js';
import { log } from '../../util/log.js';
import { pathComponent } from '../../util/path-component.js';
import type { Mounter } from '../mount.js';
import { podDir } from '../pod-dirs.js';
import {
  isSubPathBindFailure,
  type BindSubPath,
  type SubPathBindFailure,
  type SubPathBindRequest,
} from './subpath-types.js';

export const VOLUME_SUBPATHS_DIR = 'volume-subpaths';
/** Mounts stacked on one target that prepareSubPath removes before giving up. */
const MAX_STACKED = 8;

export interface SubPathContext {
  rootDir: string;
  mounter: Mounter;
  bindSubPath: BindSubPath;
}

export interface SubPathMount {
  uid: string;
  container: string;
  /** Index of the volumeMount in the container's list. */
  index: number;
  volumeName: string;
  /** The volume's host directory (emptyDir, hostPath, ...). */
  volumePath: string;
  /** subPath, or subPathExpr after expansion. */
  subPath: string;
}

/** The subPath's components: relative, no "..", no NUL; "" and "." parts dropped (upstream ValidateSubPath). */
export function subPathComponents(mount: string, subPath: string): string[] {
  if (subPath.startsWith('/')) throw new SubPathError(mount, subPath, 'must be a relative path');
  if (subPath.includes('\u0000')) throw new SubPathError(mount, subPath, 'must not contain NUL');
  const parts = subPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new SubPathError(mount, subPath, "must not contain '..'");
  return parts;
}

/** <root-dir>/pods/<uid>/volume-subpaths/<volume>/<container>/<index> (upstream getSubpathBindTarget). */
export function subPathTarget(
  rootDir: string,
  m: Pick<SubPathMount, 'uid' | 'volumeName' | 'container' | 'index'>,
): string {
  return join(
    podDir(rootDir, m.uid),
    VOLUME_SUBPATHS_DIR,
    pathComponent(m.volumeName, 'volume name'),
    pathComponent(m.container, 'container name'),
    String(m.index),
  );
}

const within = (path: string, base: string) => path === base || path.startsWith(base === sep ? base : base + sep);

/**
 * Step 2: the components below `base` that `parts` resolves to. The longest prefix that exists
 * is realpath()ed and the rest (to be created) appended; outside base is an error.
 */
async function resolveInside(mount: string, subPath: string, base: string, parts: string[]): Promise<string[]> {
  for (let i = parts.length; i >= 0; i--) {
    const real = await realpath(join(base, ...parts.slice(0, i))).catch((err: NodeJS.ErrnoException) => {
      if (i > 0 && (err.code === 'ENOENT' || err.code === 'ENOTDIR')) return undefined;
      throw new SubPathError(mount, subPath, `cannot be resolved: ${err.message}`, { cause: err });
    });
    if (real === undefined) continue;
    const full = join(real, ...parts.slice(i));
    if (!within(full, base))
      throw new SubPathError(mount, subPath, `resolves to ${full}, outside the volume ${base}: refused`);
    return relative(base, full).split(sep).filter(Boolean);
  }
  return [];
}

const STEP_TEXT: Record<SubPathBindFailure['step'], string> = {
  open: 'cannot be opened without following a symlink',
  mkdir: 'cannot be created',
  stat: 'cannot be inspected',
  target: 'has no mount point',
  mount: 'cannot be bind-mounted',
  verify: 'changed while it was mounted',
};

/** The bind's failure in the volumeMount's terms, at the path component that failed. */
function bindError(
  m: Pick<SubPathMount, 'volumeName' | 'subPath'>,
  req: Pick<SubPathBindRequest, 'base' | 'components'>,
  err: SubPathBindFailure,
): SubPathError {
  const at = err.component >= 0 ? ` at ${join(req.base, ...req.components.slice(0, err.component + 1))}` : '';
  const why = err.code === 'ELOOP' ? ' (a symlink was put in its way after it was checked: refused, not followed)' : '';
  return new SubPathError(m.volumeName, m.subPath, `${STEP_TEXT[err.step]}${at}: ${err.code}${why}`, { cause: err });
}

/** Unmounts whatever is mounted on target (an earlier bind of this container's mount). */
async function clearTarget(mounter: Mounter, target: string): Promise<void> {
  for (let i = 0; i < MAX_STACKED; i++) {
    if (!(await mounter.mountsUnder(dirname(target))).includes(target)) return;
    await mounter.unmount(target);
  }
  throw new VolumeError(`cannot clear the subPath mount point ${target}: mounts remain after ${MAX_STACKED} unmounts`);
}

/** Steps 1–3: the host path to hand to the runtime for this volumeMount. */
export async function prepareSubPath(ctx: SubPathContext, m: SubPathMount): Promise<string> {
  const mount = m.volumeName;
  const parts = subPathComponents(mount, m.subPath);
  const planned = subPathTarget(ctx.rootDir, m);
  await mkdir(dirname(planned), { recursive: true, mode: 0o750 });
  // As the mount table names it (the root dir may be relative or reached through a symlink).
  const target = join(await realpath(dirname(planned)), String(m.index));
  // The bind of an earlier start goes first, so a refusal below leaves nothing mounted.
  await clearTarget(ctx.mounter, target);
  const base = await realpath(m.volumePath).catch((err: Error) => {
    throw new SubPathError(
      mount,
      m.subPath,
      `cannot be used: its volume ${m.volumePath} cannot be resolved: ${err.message}`,
      { cause: err },
    );
  });
  const components = await resolveInside(mount, m.subPath, base, parts);
  const dirMode = (await stat(base)).mode & 0o7777;
  const req: SubPathBindRequest = { base, components, target, dirMode };
  try {
    await ctx.bindSubPath(req);
  } catch (err) {
    if (isSubPathBindFailure(err)) throw bindError(m, req, err);
    throw err;
  }
  log('volume').debug({ volume: mount, subPath: m.subPath, target }, 'bound subPath');
  return target;
}

/**
 * Unmounts and removes a pod's subPath binds (upstream CleanSubPaths), before its volumes are
 * torn down. A bind that will not go stops the removal: nothing is deleted through it.
 */
export async function cleanSubPaths(rootDir: string, uid: string, mounter: Mounter): Promise<void> {
  const dir = join(podDir(rootDir, uid), VOLUME_SUBPATHS_DIR);
  // Nothing can be mounted below a directory that is not there (most pods use no subPath).
  // A stat that fails otherwise (a stale mount: ENOTCONN) goes on to the unmounts.
  const absent = await lstat(dir).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );
  if (absent) return;
  for (const m of await mounter.mountsUnder(dir)) await mounter.unmount(m);
  if ((await mounter.mountsUnder(dir)).length > 0)
    throw new VolumeError(
      `cannot remove the subPath mounts of pod ${uid}: mounts remain under ${dir} after unmounting; the next garbage collection tries again`,
    );
  await rm(dir, { recursive: true, force: true });
}
