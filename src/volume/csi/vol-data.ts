/**
 * The records a CSI mount leaves on disk (upstream saveVolumeData / loadVolumeData): the pod's
 * pods/<uid>/volumes/kubernetes.io~csi/<specName>/vol_data.json beside `mount`, and the stage's
 * plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/vol_data.json beside `globalmount`. They
 * are written before the driver is called, so that an agent that crashes mid-call (or restarts
 * with volumes mounted) still knows which driver and handle to tear down; and they are the only
 * state a restarted agent has: every "who still uses this staging" question scans them.
 */
import { readdir, readFile, rename, rmdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { VolumeError } from '../../errors.js';
import type { Mounter } from '../mount.js';
import { podVolumesDir } from '../pod-dirs.js';
import { CSI_PLUGIN_NAME, CSI_POD_PLUGIN_DIR, VOL_DATA_FILE, type VolData } from './csi-types.js';

/** The stage's record (upstream's MountDevice data file): what NodeUnstageVolume needs. */
export interface StageVolData {
  driverName: string;
  volumeHandle: string;
}

/** pods/<uid>/volumes/kubernetes.io~csi/<specName>: the pod's volume dir, `mount` and vol_data.json inside. */
export function csiPodVolumeDir(rootDir: string, uid: string, specName: string): string {
  return join(podVolumesDir(rootDir, uid), CSI_POD_PLUGIN_DIR, specName);
}

/** Written through a temporary file and a rename: a crash never leaves a half record. */
export async function writeJson(file: string, data: object): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, JSON.stringify(data), { mode: 0o640 });
  await rename(tmp, file);
}

/** A record: undefined when absent; a VolumeError naming the file when it is not ours to read. */
async function readJson<T>(file: string, required: readonly string[]): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VolumeError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new VolumeError(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const rec = data as Record<string, unknown>;
  const missing = required.filter((k) => typeof rec?.[k] !== 'string' || rec[k] === '');
  if (missing.length > 0) throw new VolumeError(`${file} lacks ${missing.join(', ')}`);
  return data as T;
}

export function readVolData(volDir: string): Promise<VolData | undefined> {
  return readJson<VolData>(join(volDir, VOL_DATA_FILE), ['driverName', 'volumeHandle']);
}

export function readStageVolData(stagingDir: string): Promise<StageVolData | undefined> {
  return readJson<StageVolData>(join(stagingDir, VOL_DATA_FILE), ['driverName', 'volumeHandle']);
}

/** Removes a file or an EMPTY directory; absent is fine. Never recursive: a live mount's data stays. */
export async function removeIfPresent(path: string, dir = false): Promise<void> {
  try {
    await (dir ? rmdir(path) : unlink(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new VolumeError(`cannot remove ${path}: ${(err as Error).message}`, { cause: err });
    }
  }
}

/**
 * Whether path is a mount point, from the mount table (a bind mount of the same filesystem has
 * the parent's device, so upstream's cheap device test would miss the test driver's mounts).
 */
export async function isMountPoint(mounter: Mounter, path: string): Promise<boolean> {
  return (await mounter.mountsUnder(dirname(resolve(path)))).includes(resolve(path));
}

/** The pods' CSI volume dirs whose vol_data.json names this driver and handle (the publishers). */
export async function findPublishers(rootDir: string, driver: string, handle: string): Promise<string[]> {
  const out: string[] = [];
  const pods = join(rootDir, 'pods');
  for (const uid of await readdir(pods).catch(() => [] as string[])) {
    const csiDir = join(podVolumesDir(rootDir, uid), CSI_POD_PLUGIN_DIR);
    for (const name of await readdir(csiDir).catch(() => [] as string[])) {
      const data = await readVolData(join(csiDir, name)).catch(() => undefined);
      if (data?.driverName === driver && data.volumeHandle === handle) out.push(join(csiDir, name));
    }
  }
  return out;
}

/** Every staging dir (plugins/kubernetes.io/csi/<driver>/<sha>) that holds a stage record. */
export async function listStagingDirs(rootDir: string): Promise<string[]> {
  const base = join(rootDir, 'plugins', CSI_PLUGIN_NAME);
  const out: string[] = [];
  for (const driver of await readdir(base).catch(() => [] as string[])) {
    for (const sha of await readdir(join(base, driver)).catch(() => [] as string[])) {
      out.push(join(base, driver, sha));
    }
  }
  return out;
}
