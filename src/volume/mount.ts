/**
 * Mounting for memory-backed volumes (emptyDir `medium: Memory`, and the tmpfs under secret,
 * projected and downwardAPI volumes): tmpfs through mount(8) / umount(8) (Node has no mount
 * syscall), the mount table from /proc/self/mountinfo, and upstream's cheap mount-point test
 * (IsLikelyNotMountPoint: a device different from the parent's) plus statfs for the type.
 *
 * Volumes reach it through the Mounter interface (upstream mount.Interface), so unit tests can
 * run the volume code without mounting anything.
 */
import { execFile } from 'node:child_process';
import { readFile, stat, statfs } from 'node:fs/promises';
import { release } from 'node:os';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { KubeletError } from '../errors.js';
import { log } from '../util/log.js';
import { MOUNTINFO, mountPointsUnder, parseMountInfo, type MountInfo } from '../util/mountinfo.js';

export { parseMountInfo, type MountInfo };

const execFileAsync = promisify(execFile);
const TIMEOUT_MS = 30_000;
/** statfs f_type of tmpfs (linux/magic.h TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;

export interface TmpfsOptions {
  /** Bytes; 0: the kernel's default (half of RAM). */
  sizeBytes: number;
  /** Mode of the tmpfs root; default the kernel's (1777). */
  mode?: number;
}

/** What the volume code needs from the host's mounts (upstream mount.Interface). */
export interface Mounter {
  /** The filesystem type mounted exactly at path; undefined when path is not a mount point (or absent). */
  fsTypeAt(path: string): Promise<string | undefined>;
  mountTmpfs(path: string, opts: TmpfsOptions): Promise<void>;
  /** mount -t hugetlbfs -o pagesize=<size> nodev <path> (upstream emptyDir setupHugepages). */
  mountHugetlbfs(path: string, pageSize: string): Promise<void>;
  unmount(path: string): Promise<void>;
  /** Mount points strictly below dir, deepest first. */
  mountsUnder(dir: string): Promise<string[]>;
}

/** The mount table's text; empty when it cannot be read. */
function readMountText(): Promise<string> {
  return readFile(MOUNTINFO, 'utf8').catch(() => '');
}

async function readMounts(): Promise<MountInfo[]> {
  return parseMountInfo(await readMountText());
}

/** The mount whose mount point is exactly path (the last one mounted there), if any. */
export async function mountAt(path: string): Promise<MountInfo | undefined> {
  const p = resolve(path);
  return (await readMounts()).filter((m) => m.mountPoint === p).pop();
}

/** Mount points strictly below dir, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  return mountPointsUnder(await readMountText(), resolve(dir) + '/');
}

/**
 * upstream IsLikelyNotMountPoint + GetMountMedium: two stats and a statfs on every sync of a
 * volume instead of reading the whole mount table. A bind mount of the parent's own filesystem
 * looks like no mount point, which is all the volume code needs to know.
 */
export async function fsTypeAt(path: string): Promise<string | undefined> {
  const p = resolve(path);
  const [self, parent] = await Promise.all([stat(p).catch(() => undefined), stat(dirname(p)).catch(() => undefined)]);
  if (!self || !parent || self.dev === parent.dev) return undefined;
  if ((await statfs(p)).type === TMPFS_MAGIC) return 'tmpfs';
  return (await mountAt(p))?.fsType ?? 'unknown';
}

async function run(cmd: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(cmd, args, { timeout: TIMEOUT_MS });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new KubeletError('KTS_ERR_VOLUME', `${cmd} ${args.join(' ')}: ${(e.stderr ?? '').trim() || e.message}`, {
      cause: err,
    });
  }
}

/** upstream TmpfsNoswapSupportKernelVersion: tmpfs takes `noswap` from Linux 6.4. */
export function kernelSupportsNoswap(kernelRelease: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(kernelRelease);
  return !!m && (Number(m[1]) > 6 || (Number(m[1]) === 6 && Number(m[2]) >= 4));
}

let noswap = kernelSupportsNoswap(release());

/**
 * The options of a tmpfs mount (upstream generateTmpfsMountOptions): size, the root's mode,
 * and `noswap` where the kernel has it, so that secret pages never reach a swap device.
 */
export function tmpfsOptions(opts: TmpfsOptions, withNoswap: boolean): string[] {
  const o: string[] = [];
  if (opts.sizeBytes > 0) o.push(`size=${opts.sizeBytes}`);
  if (opts.mode !== undefined) o.push(`mode=${opts.mode.toString(8).padStart(4, '0')}`);
  if (withNoswap) o.push('noswap');
  return o;
}

/** mount -t tmpfs -o <options> tmpfs <path>; a kernel that refuses noswap is asked again without it, once. */
export async function mountTmpfs(path: string, opts: TmpfsOptions): Promise<void> {
  const args = (withNoswap: boolean) => {
    const o = tmpfsOptions(opts, withNoswap);
    return ['-t', 'tmpfs', ...(o.length > 0 ? ['-o', o.join(',')] : []), 'tmpfs', path];
  };
  if (!noswap) return run('mount', args(false));
  try {
    await run('mount', args(true));
  } catch (err) {
    await run('mount', args(false));
    noswap = false;
    log('volume').warn({ err: String(err) }, 'tmpfs refused the noswap option; memory-backed volumes may be swapped');
  }
}

/**
 * mount --bind <source> <target> without canonicalizing either: a `/proc/<pid>/fd/<fd>` source
 * must reach the kernel as is, which resolves it to the open file (upstream doBindSubPath).
 */
export async function bindMount(source: string, target: string): Promise<void> {
  await run('mount', ['--no-canonicalize', '--bind', source, target]);
}

export async function mountHugetlbfs(path: string, pageSize: string): Promise<void> {
  await run('mount', ['-t', 'hugetlbfs', '-o', `pagesize=${pageSize}`, 'nodev', path]);
}

export async function unmount(path: string): Promise<void> {
  await run('umount', [path]);
}

/** The host's mounts. */
export const hostMounter: Mounter = { fsTypeAt, mountTmpfs, mountHugetlbfs, unmount, mountsUnder };
