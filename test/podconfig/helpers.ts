/** Shared helpers for the podconfig tests: pods, bounded waits, watchers (the capturing logger is test/support/logs.ts). */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import type { Pod } from '../../src/api/types.js';
import type { CreateFsWatcher, FsEvent } from '../../src/fswatch/types.js';
import type { Clock } from '../../src/util/clock.js';

export { captureLogger, type LogLine } from '../support/logs.js';

export interface PodOpts {
  namespace?: string;
  image?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  phase?: string;
  deletionTimestamp?: Date;
}

/**
 * A UUID made from a readable test label ('uid-a' → the same UUID every time), since PodConfig
 * refuses UIDs that are not UUIDs or static pod hashes.
 */
export function testUID(label: string): string {
  const h = createHash('md5').update(label).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A minimal API pod (as the apiserver source would deliver it); `uid` is a label for testUID. */
export function mkPod(name: string, uid: string, o: PodOpts = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: testUID(uid),
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { containers: [{ name: 'c', image: o.image ?? 'busybox:1.36' }] },
    status: { phase: o.phase ?? 'Pending' },
  };
}

/** Polls `pred` until true; fails after `timeoutMs` so no test can hang. */
export async function waitFor(pred: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Reads the next item of an async iterator, or fails after `timeoutMs`. */
export async function nextWithin<T>(it: AsyncIterator<T>, timeoutMs = 2000): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no item within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([it.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Clock whose now() is set by the test; timers are real. */
export function manualNowClock(start = Date.parse('2024-05-01T10:00:00Z')): Clock & { set(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    set: (ms: number) => {
      now = ms;
    },
    setTimeout(fn, ms) {
      const t = setTimeout(fn, ms);
      return { cancel: () => clearTimeout(t) };
    },
  };
}

/**
 * A tiny CreateFsWatcher over fs.watch (inotify on Linux), so these tests do not depend on the
 * native module's timing.
 */
export const fsWatchWatcher: CreateFsWatcher = (onEvents, onError) => {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  return {
    add(path: string) {
      if (closed) throw new Error('watcher is closed');
      if (watchers.has(path)) return;
      const w = watch(path, (type, name) => {
        if (closed) return;
        const ev: FsEvent = {
          watched: path,
          name: name ? String(name) : '',
          type: type === 'change' ? 'modify' : 'rename',
        };
        onEvents([ev]);
      });
      w.on('error', (err) => {
        if (!closed) onError?.(err);
      });
      watchers.set(path, w);
    },
    remove(path: string) {
      watchers.get(path)?.close();
      watchers.delete(path);
    },
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
};

/** A watcher that accepts paths and never reports anything (to exercise the periodic list). */
export const deafWatcher: CreateFsWatcher = () => ({ add() {}, remove() {}, close() {} });
