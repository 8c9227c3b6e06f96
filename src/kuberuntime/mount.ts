/**
 * Mounting for memory-backed emptyDir volumes: tmpfs through mount(8) / umount(8) (Node has no
 * mount syscall), and the mount table from /proc/self/mountinfo.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { KubeletError } from '../errors.js';

const execFileAsync = promisify(execFile);
const TIMEOUT_MS = 30_000;

export interface MountInfo {
  mountPoint: string;
  fsType: string;
  source: string;
  superOptions: string;
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

function parseMountInfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const right = line.slice(sep + 3).split(' ');
    out.push({ mountPoint: unescapeMount(left[4] ?? ''), fsType: right[0] ?? '', source: unescapeMount(right[1] ?? ''), superOptions: right[2] ?? '' });
  }
  return out;
}

async function readMounts(): Promise<MountInfo[]> {
  return parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8').catch(() => ''));
}

/** The mount whose mount point is exactly path (the last one mounted there), if any. */
export async function mountAt(path: string): Promise<MountInfo | undefined> {
  const p = resolve(path);
  return (await readMounts()).filter((m) => m.mountPoint === p).pop();
}

/** Mount points strictly below dir, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const prefix = resolve(dir) + '/';
  const points = (await readMounts()).map((m) => m.mountPoint).filter((p) => p.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function run(cmd: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(cmd, args, { timeout: TIMEOUT_MS });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new KubeletError('KTS_ERR_VOLUME', `${cmd} ${args.join(' ')}: ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
  }
}

/** mount -t tmpfs -o size=<bytes> tmpfs <path> (size 0: the kernel's default, half of RAM). */
export async function mountTmpfs(path: string, sizeBytes: number): Promise<void> {
  const opts = sizeBytes > 0 ? ['-o', `size=${sizeBytes}`] : [];
  await run('mount', ['-t', 'tmpfs', ...opts, 'tmpfs', path]);
}

export async function unmount(path: string): Promise<void> {
  await run('umount', [path]);
}
