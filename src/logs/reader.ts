/**
 * Reads one container log file with the PodLogOptions (upstream kuberuntime/logs ReadLogs): start
 * at the last tailLines lines, skip lines before sinceTime, stop at limitBytes, and when following
 * wait for new lines, reopen the file when rotation replaced it, and end once the container is no
 * longer running and nothing is left to read.
 */
import type { FileHandle } from 'node:fs/promises';
import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../util/log.js';
import { LineFormatter, parseCriLogLine } from './cri-format.js';
import type { LogOptions } from './types.js';

const BLOCK = 64 * 1024;

export interface ReadContext {
  signal: AbortSignal;
  /** Opens the log file (the caller confines it). */
  open(path: string): Promise<FileHandle>;
  isRunning(): Promise<boolean>;
  pollMs: number;
}

/** Offset of the first of the last `lines` lines (upstream tail.FindTailLineStartIndex). */
export async function tailStart(fh: FileHandle, lines: number): Promise<number> {
  const size = (await fh.stat()).size;
  if (lines <= 0) return size;
  const buf = Buffer.alloc(BLOCK);
  let end = size;
  let count = 0;
  let first = true;
  while (end > 0) {
    const start = Math.max(0, end - BLOCK);
    const { bytesRead } = await fh.read(buf, 0, end - start, start);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) {
        first = false;
        continue;
      }
      // The newline ending the file ends the last line; it does not start one.
      if (first && start + i === size - 1) {
        first = false;
        continue;
      }
      if (++count === lines) return start + i + 1;
    }
    end = start;
  }
  return 0;
}

/** Writes the selected lines through `write`; resolves at the end (or when aborted). */
export async function readLogs(
  path: string,
  opts: LogOptions,
  write: (b: Buffer) => Promise<void>,
  ctx: ReadContext,
): Promise<void> {
  let fh = await ctx.open(path);
  const fmt = new LineFormatter(opts.timestamps);
  const since = opts.sinceTime?.getTime();
  let left = opts.limitBytes ?? Infinity;
  let pending: Buffer = Buffer.alloc(0);
  const buf = Buffer.alloc(BLOCK);
  let pos = opts.tailLines !== undefined ? await tailStart(fh, opts.tailLines) : 0;

  /** Emits one raw line; false once limitBytes is reached. */
  const emit = async (raw: Buffer): Promise<boolean> => {
    if (raw.length === 0) return true;
    let line;
    try {
      line = parseCriLogLine(raw);
    } catch (err) {
      log('logs').warn({ path, err: (err as Error).message }, 'skipping malformed log line');
      return true;
    }
    if (since !== undefined && line.timeMs < since) return true;
    const out = fmt.format(line);
    if (out.length >= left) {
      await write(out.subarray(0, left));
      left = 0;
      return false;
    }
    left -= out.length;
    await write(out);
    return true;
  };

  /** Reads to the current end of the file; false when the output is complete. */
  const drain = async (): Promise<boolean> => {
    for (;;) {
      if (ctx.signal.aborted) return false;
      const { bytesRead } = await fh.read(buf, 0, BLOCK, pos);
      if (bytesRead === 0) return true;
      pos += bytesRead;
      let chunk = Buffer.concat([pending, buf.subarray(0, bytesRead)]);
      let nl: number;
      while ((nl = chunk.indexOf(0x0a)) >= 0) {
        if (!(await emit(chunk.subarray(0, nl)))) return false;
        chunk = chunk.subarray(nl + 1);
      }
      pending = Buffer.from(chunk);
    }
  };

  try {
    for (;;) {
      if (!(await drain())) return;
      if (!opts.follow) {
        await emit(pending);
        return;
      }
      const running = await ctx.isRunning();
      if (await rotated(fh, path)) {
        // Rotation renamed the file and the runtime reopened a new one: finish the old, go on with the new.
        if (!(await drain())) return;
        await fh.close();
        fh = await ctx.open(path);
        pos = 0;
        continue;
      }
      if (!running) {
        if (await drain()) await emit(pending);
        return;
      }
      try {
        await sleep(ctx.pollMs, undefined, { signal: ctx.signal });
      } catch {
        return;
      }
    }
  } finally {
    await fh.close().catch(() => undefined);
  }
}

async function rotated(fh: FileHandle, path: string): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([fh.stat(), stat(path)]);
    return a.ino !== b.ino || a.dev !== b.dev;
  } catch {
    return false; // between the rename and the reopen: look again next time
  }
}
