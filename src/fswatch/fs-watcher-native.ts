/**
 * FsWatcher on the addon's InotifyWatcher (native/src/inotify.cc): one inotify fd and one reader
 * thread per watcher; batches arrive as one flat Buffer per wake-up, decoded here.
 */
import { KubeletError } from '../errors.js';
import { checkPath, watchError } from './fs-watcher-common.js';
import type { CreateFsWatcher, FsEvent, FsWatcher } from './types.js';

/** The addon's class (native/src/addon.cc). Record layout: native/src/inotify.h. */
export interface NativeInotifyWatcher {
  /** Returns 0 or an errno. */
  add(path: string, id: number): number;
  remove(id: number): void;
  close(): void;
}
export type NativeInotifyCtor = new (onBatch: (records: Buffer) => void) => NativeInotifyWatcher;

const HEADER = 9;
const OVERFLOW = 5;
const IGNORED = 6;
const ERROR = 7;
const TYPES: ReadonlyArray<FsEvent['type'] | undefined> = [undefined, 'create', 'modify', 'delete', 'rename'];
const EBADF = 9;

class NativeFsWatcher implements FsWatcher {
  readonly #native: NativeInotifyWatcher;
  readonly #onEvents: (events: FsEvent[]) => void;
  readonly #onError: ((err: Error) => void) | undefined;
  readonly #idByPath = new Map<string, number>();
  readonly #pathById = new Map<number, string>();
  #nextId = 1;
  #closed = false;

  constructor(Ctor: NativeInotifyCtor, onEvents: (events: FsEvent[]) => void, onError?: (err: Error) => void) {
    this.#onEvents = onEvents;
    this.#onError = onError;
    try {
      this.#native = new Ctor((records) => this.#deliver(records));
    } catch (err) {
      const errno = (err as { errno?: unknown }).errno;
      throw typeof errno === 'number'
        ? Object.assign(watchError(errno, '<new watcher>'), { syscall: 'inotify_init1' })
        : err;
    }
  }

  add(path: string): void {
    checkPath(path);
    if (this.#closed) throw watchError(EBADF, path);
    if (this.#idByPath.has(path)) return;
    const id = this.#nextId;
    this.#nextId = id >= 0xffff_ffff ? 1 : id + 1;
    const errno = this.#native.add(path, id);
    if (errno !== 0) throw watchError(errno, path);
    this.#idByPath.set(path, id);
    this.#pathById.set(id, path);
  }

  remove(path: string): void {
    const id = this.#idByPath.get(path);
    if (id === undefined) return;
    this.#idByPath.delete(path);
    this.#pathById.delete(id);
    this.#native.remove(id);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#native.close();
    this.#idByPath.clear();
    this.#pathById.clear();
  }

  #deliver(buf: Buffer): void {
    if (this.#closed) return;
    const events: FsEvent[] = [];
    const errors: Error[] = [];
    for (let off = 0; off + HEADER <= buf.length;) {
      const code = buf[off]!;
      const id = buf.readUInt32LE(off + 1);
      const len = buf.readUInt32LE(off + 5);
      const name = len === 0 ? '' : buf.toString('utf8', off + HEADER, off + HEADER + len);
      off += HEADER + len;
      if (code === OVERFLOW) {
        events.push({ watched: '', name: '', type: 'overflow' });
      } else if (code === ERROR) {
        errors.push(new KubeletError('KTS_ERR_NATIVE', `inotify watcher stopped: ${name}`));
      } else if (code === IGNORED) {
        // The kernel dropped the watch (deleted, unmounted): forget it so add() can watch anew.
        const path = this.#pathById.get(id);
        if (path !== undefined) {
          this.#pathById.delete(id);
          if (this.#idByPath.get(path) === id) this.#idByPath.delete(path);
        }
      } else {
        const watched = this.#pathById.get(id);
        const type = TYPES[code];
        if (watched !== undefined && type !== undefined) events.push({ watched, name, type });
      }
    }
    if (events.length > 0) this.#onEvents(events);
    for (const err of errors) {
      if (!this.#onError) throw err;
      this.#onError(err);
    }
  }
}

export function nativeFsWatcherFactory(Ctor: NativeInotifyCtor): CreateFsWatcher {
  return (onEvents, onError) => new NativeFsWatcher(Ctor, onEvents, onError);
}
