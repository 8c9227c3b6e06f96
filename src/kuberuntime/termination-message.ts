/**
 * terminationMessagePolicy: FallbackToLogsOnError (upstream toKubeContainerStatus with
 * readLastStringFromContainerLogs): a container that exited non-zero gets the tail of its log
 * as its termination message — the last 80 lines, at most their last 2048
 * bytes. The message file (terminationMessagePath) is not mounted here, so the log is the only
 * source; a container that could not even run (ContainerCannotRun) has no log to read.
 */
import { open } from 'node:fs/promises';
import { readLogs } from '../logs/reader.js';
import { errorMessage } from '../errors.js';

/** upstream MaxContainerTerminationMessageLogLines and MaxContainerTerminationMessageLogLength. */
const MAX_LINES = 80;
const MAX_BYTES = 2048;

export interface ExitedContainer {
  exitCode: number;
  reason: string;
  logPath: string;
  terminationMessagePolicy: string;
}

export function needsLogFallback(c: ExitedContainer): boolean {
  return (
    c.terminationMessagePolicy === 'FallbackToLogsOnError' &&
    c.exitCode !== 0 &&
    c.reason !== 'ContainerCannotRun' &&
    c.logPath !== ''
  );
}

/** The last MAX_BYTES of the last MAX_LINES lines of the log (as upstream's circular buffer keeps). */
export async function lastLogString(path: string): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    await readLogs(
      path,
      { follow: false, tailLines: MAX_LINES, timestamps: false, previous: false },
      async (b) => void chunks.push(b),
      { signal: AbortSignal.timeout(5000), open: (p) => open(p, 'r'), isRunning: async () => false, pollMs: 100 },
    );
  } catch (err) {
    return `Error on reading termination message from logs: ${errorMessage(err)}`;
  }
  const all = Buffer.concat(chunks);
  return all.subarray(Math.max(0, all.length - MAX_BYTES)).toString('utf8');
}
