/**
 * The TypeScript twin of the addon's bindSubPath (native/src/subpath.cc), step for step. Node has
 * no openat and no mount(2), so it walks with opens of `/proc/self/fd/<dir>/<name>` (the kernel
 * resolves `/proc/self/fd/<dir>` to the directory that descriptor holds, then looks `<name>` up
 * in it with O_NOFOLLOW: openat's semantics, util/open-beneath.ts) and binds with mount(8) given
 * `/proc/<pid>/fd/<fd>` uncanonicalized, as upstream's kubelet does. Equally safe; slower (a
 * process per bind), which only matters at container start.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { pathAt } from '../../util/open-beneath.js';
import { bindMount, unmount } from '../mount.js';
import {
  subPathBindFailure,
  type BindSubPath,
  type SubPathBindRequest,
  type SubPathBindResult,
  type SubPathStep,
} from './subpath-types.js';

/** Linux O_PATH (asm-generic, x86-64 and arm64): open for the name only; Node does not export it. */
const O_PATH = 0o10000000;
const PATH_FLAGS = O_PATH | constants.O_NOFOLLOW;

const codeOf = (err: unknown) => String((err as NodeJS.ErrnoException).code ?? 'EIO');

/** A failure at `step` from an OS error (its code kept). */
const failAt =
  (step: SubPathStep, component = -1) =>
  (err: unknown): never => {
    throw subPathBindFailure(step, codeOf(err), component, err);
  };

/** open, or for a missing name mkdir then open: Node's ENOENT decides, as errno does in the addon. */
async function openOrCreate(dir: FileHandle, name: string, mode: number, index: number): Promise<FileHandle> {
  try {
    return await open(pathAt(dir, name), PATH_FLAGS);
  } catch (err) {
    if (codeOf(err) !== 'ENOENT') failAt('open', index)(err);
  }
  await mkdir(pathAt(dir, name), mode).catch((err: unknown) => {
    if (codeOf(err) !== 'EEXIST') failAt('mkdir', index)(err);
  });
  return open(pathAt(dir, name), PATH_FLAGS).catch(failAt('open', index));
}

/**
 * Component `index` of the request, below `dir`: a symlink is refused with ELOOP; all but the
 * last must be directories. Missing ones are made with the request's dirMode.
 */
async function openComponent(dir: FileHandle, req: SubPathBindRequest, index: number): Promise<FileHandle> {
  const fh = await openOrCreate(dir, req.components[index]!, req.dirMode, index);
  try {
    const st = await fh.stat().catch(failAt('stat', index));
    if (st.isSymbolicLink()) throw subPathBindFailure('open', 'ELOOP', index);
    if (index < req.components.length - 1 && !st.isDirectory()) throw subPathBindFailure('open', 'ENOTDIR', index);
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** The mount point, of the source's kind; one of the other kind (left by an earlier bind) is replaced. */
async function makeTarget(target: string, isDir: boolean): Promise<void> {
  const st = await lstat(target).catch((err: unknown) => {
    if (codeOf(err) !== 'ENOENT') throw err;
    return undefined;
  });
  if (st) {
    if (st.isDirectory() === isDir && (isDir || st.isFile())) return;
    await (st.isDirectory() ? rmdir(target) : unlink(target));
  }
  if (isDir) await mkdir(target, 0o750);
  else
    await writeFile(target, '', {
      flag: constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW,
      mode: 0o640,
    });
}

async function bindOpened(fh: FileHandle, target: string): Promise<SubPathBindResult> {
  const source = await fh.stat({ bigint: true }).catch(failAt('stat'));
  const isDir = source.isDirectory();
  await makeTarget(target, isDir).catch(failAt('target'));
  await bindMount(`/proc/${process.pid}/fd/${fh.fd}`, target).catch((err: unknown) => {
    throw subPathBindFailure('mount', 'EPERM', -1, err);
  });
  const bound = await stat(target, { bigint: true }).catch(() => undefined);
  if (!bound || bound.dev !== source.dev || bound.ino !== source.ino) {
    await unmount(target).catch(() => undefined);
    throw subPathBindFailure('verify', 'ESTALE');
  }
  return { isDir };
}

export const bindSubPathTs: BindSubPath = async (req: SubPathBindRequest) => {
  let current = await open(req.base, O_PATH | constants.O_DIRECTORY).catch(failAt('open'));
  try {
    for (let i = 0; i < req.components.length; i++) {
      const next = await openComponent(current, req, i);
      await current.close();
      current = next;
    }
    return await bindOpened(current, req.target);
  } finally {
    await current.close().catch(() => undefined);
  }
};
