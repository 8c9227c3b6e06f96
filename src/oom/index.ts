/** The OOM watcher factory; the kmsg reader is the chosen hot path implementation. */
import { hotPaths } from '../native/index.js';
import { KmsgOomWatcher } from './watcher.js';
import type { OomEvent, OomWatcher } from './types.js';

export type * from './types.js';
export { podOfMemcg } from './watcher.js';

export function createOomWatcher(opts: { onEvent(e: OomEvent): void; kmsgPath?: string }): OomWatcher {
  return new KmsgOomWatcher({ createKmsgWatcher: hotPaths().kmsg.createKmsgWatcher, ...opts });
}
