/**
 * Termination messages (upstream kuberuntime_container.go makeMounts, getTerminationMessage,
 * readLastStringFromContainerLogs and convertToKubeContainerStatus):
 *
 *  - before each container is created, a fresh empty file `<pod dir>/containers/<name>/<8 hex>`,
 *    mode 0666 whatever the umask (a non-root container must be able to write it), is bound at
 *    the container's terminationMessagePath (default /dev/termination-log); each instance of a
 *    container gets its own file, so a restart never reads its predecessor's message;
 *  - once the container has exited, the file is found again through the CRI status's mounts (the
 *    mount whose container path is the annotated terminationMessagePath) and its last 4096 bytes
 *    (MaxContainerTerminationMessageLength) are the message, exit code 0 or not;
 *  - terminationMessagePolicy FallbackToLogsOnError: when that file is empty (or there is none)
 *    and the container failed (not ContainerCannotRun: it never ran, it has no log), the tail of
 *    its log is the message instead: the last 80 lines, at most their last 2048 bytes;
 *  - the file goes with its container (removeTerminationMessageFile, called by removeContainer).
 *    Upstream leaves it in the pod directory until the pod goes (kubernetes#121180): a container
 *    in CrashLoopBackOff would add a file per restart.
 *
 * The whole pod's messages are capped again by the status manager (status/normalize.ts).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { ContainerConfig, ContainerStatus as CriContainerStatus, Mount } from '../cri/types.js';
import { readLogs } from '../logs/reader.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { pathComponent } from '../util/path-component.js';

/** upstream kubecontainer.MaxContainerTerminationMessageLength: the most read from the file. */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH = 4096;
/** upstream MaxContainerTerminationMessageLogLines and MaxContainerTerminationMessageLogLength. */
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2048;
/** upstream's file mode (it chmods after creating, so the umask does not narrow it). */
const MESSAGE_FILE_MODE = 0o666;
/** upstream makeUID: 8 hex digits, unique enough beside the pod UID and container name. */
const MESSAGE_FILE_NAME = /^[0-9a-f]{8}$/;

/** upstream getPodContainerDir: `<pod dir>/containers/<container name>`. */
export function podContainerDir(podDir: string, containerName: string): string {
  return join(podDir, 'containers', pathComponent(containerName, 'container name'));
}

/**
 * upstream makeMounts' termination-log part: the mount of a new, empty message file at the
 * container's terminationMessagePath, or undefined without a path. As upstream, a file that
 * cannot be made does not fail the container: it runs without one, which the log says.
 */
export async function makeTerminationMessageMount(podDir: string, container: Container): Promise<Mount | undefined> {
  const containerPath = container.terminationMessagePath ?? '';
  if (containerPath === '') return undefined;
  let hostPath = '';
  try {
    hostPath = join(podContainerDir(podDir, container.name), randomBytes(4).toString('hex'));
    await mkdir(dirname(hostPath), { recursive: true, mode: 0o750 });
    await writeFile(hostPath, '', { flag: 'wx', mode: MESSAGE_FILE_MODE });
    await chmod(hostPath, MESSAGE_FILE_MODE);
  } catch (err) {
    log('kuberuntime').warn(
      { container: container.name, path: hostPath, err: errorMessage(err) },
      'error on creating termination-log file; the container runs without one',
    );
    return undefined;
  }
  return { containerPath, hostPath, readonly: false };
}

/** What the message of an exited container is read from. */
export interface ExitedContainer {
  exitCode: number;
  /** The runtime's reason (ContainerCannotRun: it never ran). */
  reason: string;
  logPath: string;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
  /** The CRI status's mounts (the message file among them). */
  mounts: readonly Mount[];
}

/** upstream's fallbackToLogs: the log is a candidate only for a failed container that ran. */
export function mayFallBackToLogs(c: ExitedContainer): boolean {
  return (
    c.terminationMessagePolicy === 'FallbackToLogsOnError' && c.exitCode !== 0 && c.reason !== 'ContainerCannotRun'
  );
}

/** Drops the UTF-8 continuation bytes a cut left at the start, so no half character is kept. */
function fromCharBoundary(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length && i < 3 && (b[i]! & 0xc0) === 0x80) i++;
  return b.subarray(i);
}

/**
 * upstream tail.ReadAtMost: the last `max` bytes of a regular file. Anything else (a FIFO or a
 * device a hostPath volume put there) reads as empty, and opening never blocks.
 */
export async function readAtMost(path: string, max: number): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size === 0) return Buffer.alloc(0);
    const n = Math.min(st.size, max);
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, st.size - n);
    const data = buf.subarray(0, bytesRead);
    return n < st.size ? fromCharBoundary(data) : data;
  } finally {
    await fh.close();
  }
}

/**
 * upstream getTerminationMessage: the message file's content, and whether the log is to be read
 * instead (fallback allowed and the file missing or empty). A file that cannot be read gives an
 * error message of its own, as upstream's.
 */
export async function getTerminationMessage(
  mounts: readonly Mount[],
  terminationMessagePath: string,
  fallbackToLogs: boolean,
): Promise<{ message: string; checkLogs: boolean }> {
  if (terminationMessagePath === '') return { message: '', checkLogs: fallbackToLogs };
  const mount = mounts.find((m) => m.containerPath === terminationMessagePath);
  if (!mount) return { message: '', checkLogs: fallbackToLogs };
  let data: Buffer;
  try {
    data = await readAtMost(mount.hostPath, MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { message: '', checkLogs: fallbackToLogs };
    return { message: `Error on reading termination log ${mount.hostPath}: ${errorMessage(err)}`, checkLogs: false };
  }
  return { message: data.toString('utf8'), checkLogs: fallbackToLogs && data.length === 0 };
}

/** upstream readLastStringFromContainerLogs: the last MAX_LOG_BYTES of the last MAX_LOG_LINES lines. */
export async function lastLogString(path: string): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    await readLogs(
      path,
      { follow: false, tailLines: MAX_LOG_LINES, timestamps: false, previous: false },
      async (b) => void chunks.push(b),
      { signal: AbortSignal.timeout(5000), open: (p) => open(p, 'r'), isRunning: async () => false, pollMs: 100 },
    );
  } catch (err) {
    return `Error on reading termination message from logs: ${errorMessage(err)}`;
  }
  const all = Buffer.concat(chunks);
  if (all.length <= MAX_LOG_BYTES) return all.toString('utf8');
  return fromCharBoundary(all.subarray(all.length - MAX_LOG_BYTES)).toString('utf8');
}

/**
 * The termination message of an exited container (upstream convertToKubeContainerStatus): the
 * file's, else the log tail when the policy allows it. No log path, no log to read.
 */
export async function terminationMessage(c: ExitedContainer): Promise<string> {
  const { message, checkLogs } = await getTerminationMessage(c.mounts, c.terminationMessagePath, mayFallBackToLogs(c));
  if (checkLogs && c.logPath !== '') return lastLogString(c.logPath);
  return message;
}

/**
 * The message file of a container that is being removed, when it is one this agent made: a file
 * named as makeTerminationMessageMount names them, in `pods/<pod uid>/containers/<container name>/`
 * of the container's own labels. A mount anywhere else (a hostPath volume bound at the same
 * path, a container someone else made) is never touched.
 */
export function ownMessageFile(
  st: Pick<CriContainerStatus, 'mounts'>,
  who: { podUid: string; containerName: string; terminationMessagePath: string },
): string | undefined {
  if (who.terminationMessagePath === '') return undefined;
  for (const m of st.mounts ?? []) {
    if (m.containerPath !== who.terminationMessagePath) continue;
    const dir = dirname(m.hostPath);
    if (
      MESSAGE_FILE_NAME.test(basename(m.hostPath)) &&
      basename(dir) === who.containerName &&
      basename(dirname(dir)) === 'containers' &&
      basename(dirname(dirname(dir))) === who.podUid &&
      basename(dirname(dirname(dirname(dir)))) === 'pods'
    )
      return m.hostPath;
  }
  return undefined;
}

/** Removes a message file ownMessageFile found (a regular file only; gone already is fine). */
export async function removeTerminationMessageFile(path: string): Promise<void> {
  const st = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (st?.isFile()) await rm(path, { force: true });
}

/** A container the runtime refused to create leaves no message file behind. */
export async function discardTerminationMessageFile(
  pod: Pod,
  container: Container,
  config: Pick<ContainerConfig, 'mounts'>,
): Promise<void> {
  const file = ownMessageFile(config, {
    podUid: pod.metadata?.uid ?? '',
    containerName: container.name,
    terminationMessagePath: container.terminationMessagePath ?? '',
  });
  if (file)
    await removeTerminationMessageFile(file).catch((err: unknown) =>
      log('kuberuntime').warn({ path: file, err: errorMessage(err) }, 'cannot remove termination-log file'),
    );
}
