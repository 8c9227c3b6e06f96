/**
 * Where a container's log files are, confined to the pod's log directory
 * (<podLogsDir>/<namespace>_<pod>_<uid>/<container>/<instance>.log) whatever the request says:
 * names must be DNS names (no '/', no '..'), the directory's real path must be exactly the one
 * built from them (no symlinked directories), only `<n>.log` entries are chosen, and files are
 * opened with O_NOFOLLOW and must be regular files.
 */
import { constants } from 'node:fs';
import { open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import { isDns1123Label, isDns1123Subdomain, podLogsDirName } from '../util/pod-identity.js';
import { KubeletError, UnsafePathError } from '../errors.js';

/** A log request that cannot be served; `status` is the HTTP status to answer with. */
export class ContainerLogsError extends KubeletError {
  constructor(readonly status: number, message: string) {
    super('KTS_ERR_CONTAINER_LOGS', message);
  }
}

const INSTANCE_LOG = /^(\d+)\.log$/;

/** Rejects anything that is not a valid namespace / pod / container name (400). */
export function checkNames(namespace: string, pod: string, container: string): void {
  if (!isDns1123Label(namespace)) throw new ContainerLogsError(400, `invalid namespace ${JSON.stringify(namespace)}`);
  if (!isDns1123Subdomain(pod)) throw new ContainerLogsError(400, `invalid pod name ${JSON.stringify(pod)}`);
  if (!isDns1123Label(container)) throw new ContainerLogsError(400, `invalid container name ${JSON.stringify(container)}`);
}

/** The container's log directory, checked to be a real directory where it should be. */
export async function containerLogDir(podLogsDir: string, pod: Pod, container: string): Promise<string> {
  let podDir: string;
  try {
    podDir = podLogsDirName(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', pod.metadata?.uid ?? '');
  } catch (err) {
    if (err instanceof UnsafePathError) throw new ContainerLogsError(400, err.message);
    throw err;
  }
  const dir = join(podLogsDir, podDir, container);
  let real: string;
  let root: string;
  try {
    root = await realpath(podLogsDir);
    real = await realpath(dir);
  } catch {
    throw new ContainerLogsError(404, `no logs for container "${container}" in pod "${pod.metadata?.name ?? ''}"`);
  }
  if (real !== join(root, podDir, container)) throw new ContainerLogsError(403, `log directory of container "${container}" is not inside the pod log directory`);
  return real;
}

/** The log file of the newest instance, or of the one before it (previous). */
export async function instanceLogFile(dir: string, container: string, podName: string, previous: boolean): Promise<string> {
  const instances = (await readdir(dir))
    .map((f) => INSTANCE_LOG.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => b - a);
  const n = instances[previous ? 1 : 0];
  if (n === undefined) {
    if (previous) throw new ContainerLogsError(400, `previous terminated container "${container}" in pod "${podName}" not found`);
    throw new ContainerLogsError(404, `container "${container}" in pod "${podName}" has no log file`);
  }
  return join(dir, `${n}.log`);
}

/** Opens a log file without following a symlink; it must be a regular file. */
export async function openLogFile(path: string): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ContainerLogsError(403, `log file ${path} is a symbolic link`);
    throw new ContainerLogsError(404, `log file ${path}: ${code ?? (err as Error).message}`);
  }
  if (!(await fh.stat()).isFile()) {
    await fh.close();
    throw new ContainerLogsError(403, `log file ${path} is not a regular file`);
  }
  return fh;
}
