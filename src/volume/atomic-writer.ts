/**
 * upstream AtomicWriter (pkg/volume/util/atomic_writer.go), which fills configMap, secret,
 * downwardAPI and projected volumes: the payload goes to a timestamped directory behind a
 * `..data` symlink that is swapped by rename, so readers never see a half-written set.
 */
import {
  chmod,
  chown,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { VolumeError } from '../errors.js';
import { payloadPathProblem, VOLUME_DIR_MODE, type PayloadFile } from './volume-payload.js';

export const DATA_LINK = '..data';

/** Mode and group of a volume's root and the writer's directories. */
export interface DirOwnership {
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
    const created = await mkdir(p).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
        return false;
      },
    );
    if (created) await own(p, dirs.mode, undefined, dirs.gid);
  }
}

export function checkPayloadPaths(payload: ReadonlyMap<string, PayloadFile>): void {
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
export async function writeAtomic(
  dir: string,
  payload: Map<string, PayloadFile>,
  dirs: DirOwnership = { mode: VOLUME_DIR_MODE },
): Promise<void> {
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
