/** The OOM watcher factory; the kmsg reader (native or twin) is chosen by the caller. */
import { KmsgOomWatcher } from './watcher.js';
import type { CreateKmsgWatcher, OomEvent, OomWatcher } from './types.js';

export type * from './types.js';
export { podOfMemcg } from './watcher.js';
export { createOomPodEvents, type OomPodEvents, type OomPodView } from './pod-events.js';

export function createOomWatcher(opts: {
  onEvent(e: OomEvent): void;
  kmsgPath?: string;
  createKmsgWatcher: CreateKmsgWatcher;
}): OomWatcher {
  return new KmsgOomWatcher(opts);
}
