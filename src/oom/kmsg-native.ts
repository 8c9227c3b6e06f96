/** Adapter for the addon's KmsgWatcher and parseKmsg (native/src/kmsg.{h,cc}). */
import { constants } from 'node:os';
import type { CreateKmsgWatcher, KmsgWatcher, OomKillRecord } from './types.js';

export interface NativeKmsgWatcher {
  lost(): number;
  close(): void;
}
export type NativeKmsgWatcherCtor = new (path: string, onKills: (kills: OomKillRecord[]) => void) => NativeKmsgWatcher;

export function nativeKmsgWatcherFactory(Ctor: NativeKmsgWatcherCtor): CreateKmsgWatcher {
  return (path, onKills): KmsgWatcher => {
    try {
      return new Ctor(path, onKills);
    } catch (err) {
      // Node-style error from the errno the addon reports (ENOENT, EACCES, EPERM, ...).
      const e = err as Error & { errno?: number; code?: string; path?: string };
      if (typeof e.errno === 'number') {
        const code = Object.entries(osErrnos()).find(([, n]) => n === e.errno)?.[0];
        if (code) e.code = code;
        e.path = path;
      }
      throw e;
    }
  };
}

const osErrnos = (): Record<string, number> => constants.errno as unknown as Record<string, number>;
