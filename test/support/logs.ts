/** Reading back what the agent logs: a real pino logger whose JSON records are kept in an array. */
import { Writable } from 'node:stream';
import { pino, type Level, type Logger } from 'pino';
import { setLogger } from '../../src/util/log.js';

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** pino's numeric levels. */
export const LEVEL = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** A real pino logger whose JSON lines are kept in `lines`. */
export function captureLogger(level: Level = 'debug'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

/** Runs `fn` with the process logger (src/util/log.ts) capturing every line; the previous one is back afterwards. */
export async function captureLogs(fn: () => Promise<unknown>): Promise<LogLine[]> {
  const { logger, lines } = captureLogger('trace');
  const previous = setLogger(logger);
  try {
    await fn();
  } finally {
    setLogger(previous);
  }
  return lines;
}
