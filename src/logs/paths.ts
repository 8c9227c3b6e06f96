/**
 * Where a container's log files are, confined to the pod's log directory
 * (<podLogsDir>/<namespace>_<pod>_<uid>/<container>/<instance>.log) whatever the request says:
 * names must be DNS names (no '/', no '..'), only `<n>.log` entries are chosen, and every open
 * walks the path one component at a time below podLogsDir without following a symlink at any
 * level (util/open-beneath.ts), so a symlinked directory or file, even one swapped in while a
 * log is followed, is refused rather than read. Files must be regular files.
 */
import { readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import { podNames } from '../api/pod.js';
import {
  containerLogFileName,
  isDns1123Label,
  isDns1123Subdomain,
  podLogsDirName,
  restartCountOfLogFileName,
} from '../util/pod-identity.js';
import { openBeneath, pathAt } from '../util/open-beneath.js';
import { KubeletError, PodIdentityError, UnsafePathError } from '../errors.js';

/** A log request that cannot be served; `status` is the HTTP status to answer with. */
export class ContainerLogsError extends KubeletError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('KTS_ERR_CONTAINER_LOGS', message);
  }
}

/** Rejects anything that is not a valid namespace / pod / container name (400). */
export function checkNames(namespace: string, pod: string, container: string): void {
  if (!isDns1123Label(namespace)) throw new ContainerLogsError(400, `invalid namespace ${JSON.stringify(namespace)}`);
  if (!isDns1123Subdomain(pod)) throw new ContainerLogsError(400, `invalid pod name ${JSON.stringify(pod)}`);
  if (!isDns1123Label(container))
    throw new ContainerLogsError(400, `invalid container name ${JSON.stringify(container)}`);
}

/** A container's log directory: the trusted root and the two components below it. */
export interface ContainerLogDir {
  root: string;
  components: readonly [podDir: string, container: string];
  container: string;
  podName: string;
}

/** The log directory of `container` in `pod` (nothing is opened yet). */
export function containerLogDir(podLogsDir: string, pod: Pod, container: string): ContainerLogDir {
  try {
    const names = podNames(pod);
    return { root: podLogsDir, components: [podLogsDirName(names), container], container, podName: names.name };
  } catch (err) {
    if (err instanceof UnsafePathError || err instanceof PodIdentityError)
      throw new ContainerLogsError(400, err.message);
    throw err;
  }
}

/** The kernel's refusal of a walk, as the answer to give. */
function walkError(err: unknown, dir: ContainerLogDir, what: string): ContainerLogsError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'ENOTDIR')
    return new ContainerLogsError(
      403,
      `${what} of container "${dir.container}" is a symbolic link or not where it should be: refused`,
    );
  if (code === 'ENOENT')
    return new ContainerLogsError(404, `no logs for container "${dir.container}" in pod "${dir.podName}"`);
  return new ContainerLogsError(404, `${what} of container "${dir.container}": ${code ?? (err as Error).message}`);
}

/** The file name (`<n>.log`) of the newest instance, or of the one before it (previous). */
export async function instanceLogFile(dir: ContainerLogDir, previous: boolean): Promise<string> {
  let fh: FileHandle;
  try {
    fh = await openBeneath(dir.root, dir.components);
  } catch (err) {
    throw walkError(err, dir, 'log directory');
  }
  let names: string[];
  try {
    names = await readdir(pathAt(fh));
  } finally {
    await fh.close();
  }
  const instances = names
    .map(restartCountOfLogFileName)
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => b - a);
  const n = instances[previous ? 1 : 0];
  if (n === undefined) {
    if (previous)
      throw new ContainerLogsError(
        400,
        `previous terminated container "${dir.container}" in pod "${dir.podName}" not found`,
      );
    throw new ContainerLogsError(404, `container "${dir.container}" in pod "${dir.podName}" has no log file`);
  }
  return containerLogFileName(n);
}

/** The path of a log file (for messages and rotation checks only; opening goes through openLogFile). */
export function logFilePath(dir: ContainerLogDir, name: string): string {
  return join(dir.root, ...dir.components, name);
}

/** Opens a log file of the directory without following a symlink anywhere; it must be a regular file. */
export async function openLogFile(dir: ContainerLogDir, name: string): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await openBeneath(dir.root, [...dir.components, name]);
  } catch (err) {
    throw walkError(err, dir, `log file ${name}`);
  }
  if (!(await fh.stat()).isFile()) {
    await fh.close();
    throw new ContainerLogsError(403, `log file ${name} of container "${dir.container}" is not a regular file`);
  }
  return fh;
}
