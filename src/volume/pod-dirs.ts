/**
 * The agent's directories (upstream setupDataDirs and makePodDataDirs): `<root-dir>`,
 * `<root-dir>/pods`, `pods/<uid>`, its `volumes` and `containers`, and the plugin directories
 * (`volumes/kubernetes.io~secret`, …) are 0750, so that on the host only root reaches pod data
 * (secrets, tokens, emptyDirs) whatever the modes further down. Directories that already exist
 * with wider modes (an older kubelet-ts made them 0755) are narrowed: all of them at start, and
 * each one again whenever it is used.
 *
 * `<root-dir>` itself is left alone, with a warning, when it is plainly shared (sticky, like
 * /tmp, or `/`): it must be a directory of its own, as upstream's /var/lib/kubelet.
 */
import type { Stats } from 'node:fs';
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError, errorMessage, VolumeError } from '../errors.js';
import { log } from '../util/log.js';
import { pathComponent } from '../util/path-component.js';
import { podDir } from '../util/pod-identity.js';

export const DATA_DIR_MODE = 0o750;
const STICKY = 0o1000;

export { podDir };

export function podVolumesDir(rootDir: string, uid: string): string {
  return join(podDir(rootDir, uid), 'volumes');
}

/** <rootDir>/pods/<uid>/volumes/<plugin>/<name> (upstream GetPodVolumeDir). */
export function podVolumeDir(rootDir: string, uid: string, plugin: string, name: string): string {
  return join(podVolumesDir(rootDir, uid), plugin, pathComponent(name, 'volume name'));
}

/** chmod to at most DATA_DIR_MODE when the directory allows more (keeps narrower bits). */
async function narrow(path: string, st: Stats): Promise<void> {
  if ((st.mode & 0o7777 & ~DATA_DIR_MODE) === 0) return;
  await chmod(path, st.mode & DATA_DIR_MODE);
  log('volume').info(
    { path, from: (st.mode & 0o7777).toString(8), to: (st.mode & DATA_DIR_MODE).toString(8) },
    'narrowed directory mode',
  );
}

/** One level (the parent exists): created 0750, or an existing directory narrowed to it. */
async function dataDir(path: string): Promise<void> {
  await mkdir(path, { mode: DATA_DIR_MODE }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const st = await stat(path);
  if (!st.isDirectory()) throw new VolumeError(`${path} exists and is not a directory; remove it`);
  await narrow(path, st);
}

/** <rootDir>/pods, made 0750 with any missing parent when setupDataDirs has not run (the runtime manager alone). */
async function podsDir(rootDir: string): Promise<void> {
  await mkdir(join(rootDir, 'pods'), { recursive: true, mode: DATA_DIR_MODE });
}

/** upstream makePodDataDirs: pods/<uid> and pods/<uid>/containers. */
export async function makePodDataDirs(rootDir: string, uid: string): Promise<void> {
  await podsDir(rootDir);
  await dataDir(podDir(rootDir, uid));
  await dataDir(join(podDir(rootDir, uid), 'containers'));
}

/** Which volume directory: the pod's, its plugin's (`kubernetes.io~secret`), the volume's name. */
export interface PodVolumeDirRef {
  uid: string;
  plugin: string;
  name: string;
}

/**
 * The directory of one volume: every level above it 0750 (pods/<uid>, volumes, the plugin
 * directory), the volume directory itself created with `mode` (the caller sets its final mode).
 */
export async function makeVolumeDir(
  rootDir: string,
  { uid, plugin, name }: PodVolumeDirRef,
  mode: number,
): Promise<string> {
  await podsDir(rootDir);
  await dataDir(podDir(rootDir, uid));
  await dataDir(podVolumesDir(rootDir, uid));
  await dataDir(join(podVolumesDir(rootDir, uid), plugin));
  const dir = podVolumeDir(rootDir, uid, plugin, name);
  await mkdir(dir, { mode }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return dir;
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
}

/** Pod directories left by an earlier run: pods/<uid>, its subdirectories, the plugin directories. */
async function narrowPodDirs(rootDir: string, uid: string): Promise<void> {
  const dir = podDir(rootDir, uid);
  for (const d of [dir, ...(await subdirs(dir)), ...(await subdirs(podVolumesDir(rootDir, uid)))]) {
    const st = await stat(d).catch(() => undefined);
    if (st?.isDirectory()) await narrow(d, st);
  }
}

async function setUpRootDir(rootDir: string): Promise<void> {
  await mkdir(rootDir, { recursive: true, mode: DATA_DIR_MODE });
  const st = await stat(rootDir);
  if (!st.isDirectory()) throw new ConfigError([`--root-dir ${rootDir} is not a directory`]);
  if (resolve(rootDir) === '/' || (st.mode & STICKY) !== 0) {
    log('volume').warn(
      { rootDir, mode: (st.mode & 0o7777).toString(8) },
      'root directory looks shared (sticky or /): its mode is left alone; pods/ below it is 0750',
    );
    return;
  }
  await narrow(rootDir, st);
}

/** upstream setupDataDirs, at start: <rootDir> and <rootDir>/pods 0750, and every existing pod's directories narrowed. */
export async function setupDataDirs(rootDir: string): Promise<void> {
  try {
    await setUpRootDir(rootDir);
    await dataDir(join(rootDir, 'pods'));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError([`--root-dir ${rootDir}: ${errorMessage(err)}`]);
  }
  for (const uid of await readdir(join(rootDir, 'pods')).catch(() => [] as string[])) {
    await narrowPodDirs(rootDir, uid).catch((err: unknown) =>
      log('volume').warn({ uid, err: errorMessage(err) }, 'cannot narrow pod directory modes'),
    );
  }
}
