/**
 * TypeScript twin of the native /dev/kmsg reader. Node has neither lseek nor a pollable fd for
 * a character device, so this one skips the history by reading it once at open (non-blocking
 * reads until EAGAIN), then polls with non-blocking reads every POLL_MS on a timer. Each read of
 * /dev/kmsg returns one record; EPIPE (records overwritten) is counted and reading goes on.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { OomLineParser, parseKmsgText } from './kmsg-parser.js';
import type { CreateKmsgWatcher, KmsgWatcher, OomKillRecord } from './types.js';

const POLL_MS = 5;

export const createTsKmsgWatcher: CreateKmsgWatcher = (path, onKills): KmsgWatcher => {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(16384);
  const parser = new OomLineParser();
  let lost = 0;
  let closed = false;
  /** Reads what is there; kills are parsed unless skipping the history. */
  const drain = (parse: boolean): OomKillRecord[] => {
    const kills: OomKillRecord[] = [];
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          lost++;
          continue;
        }
        if (code === 'EINTR') continue;
        return kills; // EAGAIN: nothing more for now
      }
      if (n === 0) return kills; // a FIFO with no writer (tests)
      if (parse) parseKmsgText(buf.toString('latin1', 0, n), parser, kills);
    }
  };
  drain(false);
  const timer = setInterval(() => {
    if (closed) return;
    const kills = drain(true);
    if (kills.length > 0) onKills(kills);
  }, POLL_MS);
  timer.unref();
  return {
    lost: () => lost,
    close(): void {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      closeSync(fd);
    },
  };
};
