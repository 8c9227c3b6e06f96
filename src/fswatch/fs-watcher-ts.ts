/**
 * The TypeScript twin of the native inotify watcher: one fs.watch per path.
 *
 * fs.watch reports only 'change' (modify) and 'rename' (anything else), so for directories we keep
 * the set of entry names (with their inode) and read each 'rename' as the entry appearing or
 * disappearing, checked with lstat; an entry that disappears and one that appears with the same
 * inode in the same batch are a move, reported as 'rename' on both sides like inotify's
 * IN_MOVED_FROM/IN_MOVED_TO. Batches are flushed with setImmediate, after libuv has dispatched
 * everything it read from inotify in one go.
 */
import { type FSWatcher, lstatSync, readdirSync, statSync, watch } from 'node:fs';
import { basename, join } from 'node:path';
import { checkPath, watchError } from './fs-watcher-common.js';
import type { CreateFsWatcher, FsEvent, FsWatcher } from './types.js';

interface Watched {
  path: string;
  watcher: FSWatcher;
  /** Directory entries believed present → "dev:ino" ('' when it vanished before we could look). */
  entries: Map<string, string> | undefined;
  /** "dev:ino" of the watched path when added. */
  self: string;
  /** remove() was called: its pending events are not delivered. */
  removed: boolean;
}

/** "dev:ino" of a directory entry (lstat), or of the watched path itself (stat, like inotify). */
function identity(path: string, follow = false): string | undefined {
  const st = follow ? statSync(path, { throwIfNoEntry: false }) : lstatSync(path, { throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}` : undefined;
}

class TsFsWatcher implements FsWatcher {
  readonly #onEvents: (events: FsEvent[]) => void;
  readonly #onError: ((err: Error) => void) | undefined;
  readonly #watched = new Map<string, Watched>();
  #batch: Array<{ from: Watched; event: FsEvent }> = [];
  /** Moves pending in this batch, by inode: the event of the entry that vanished or appeared. */
  #vanished = new Map<string, FsEvent>();
  #appeared = new Map<string, FsEvent>();
  /** Each path's last event in this batch. */
  #last = new Map<Watched, FsEvent>();
  #scheduled = false;
  #closed = false;

  constructor(onEvents: (events: FsEvent[]) => void, onError?: (err: Error) => void) {
    this.#onEvents = onEvents;
    this.#onError = onError;
  }

  add(path: string): void {
    checkPath(path);
    if (this.#closed) throw watchError(9, path);
    if (this.#watched.has(path)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(path, { persistent: false });
    } catch (err) {
      const errno = (err as NodeJS.ErrnoException).errno;
      throw typeof errno === 'number' ? watchError(errno, path) : err;
    }
    const w: Watched = { path, watcher, entries: undefined, self: '', removed: false };
    try {
      const st = statSync(path);
      w.self = `${st.dev}:${st.ino}`;
      if (st.isDirectory()) {
        w.entries = new Map();
        for (const name of readdirSync(path)) w.entries.set(name, identity(join(path, name)) ?? '');
      }
    } catch (err) {
      watcher.close();
      const errno = (err as NodeJS.ErrnoException).errno;
      throw typeof errno === 'number' ? watchError(errno, path) : err;
    }
    watcher.on('change', (kind, filename) => this.#onRaw(w, kind, filename == null ? null : String(filename)));
    watcher.on('error', (err) => this.#fail(w, err));
    this.#watched.set(path, w);
  }

  remove(path: string): void {
    const w = this.#watched.get(path);
    if (!w) return;
    this.#watched.delete(path);
    w.removed = true;
    w.watcher.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#watched.values()) w.watcher.close();
    this.#watched.clear();
    this.#batch = [];
    this.#last.clear();
  }

  #onRaw(w: Watched, kind: string, filename: string | null): void {
    if (w.removed || this.#closed) return;
    const entries = w.entries;
    // libuv names an event on the watched path itself by the path's basename.
    const self =
      !entries ||
      (filename === basename(w.path) && !entries.has(filename) && identity(join(w.path, filename)) === undefined);
    if (self) {
      if (kind === 'change') {
        this.#push(w, '', 'modify');
      } else if (identity(w.path, true) === w.self) {
        this.#push(w, '', 'rename');
      } else {
        // Gone from its path: deleted, replaced (rename over it) or moved away. inotify tells
        // the last apart (IN_MOVE_SELF); fs.watch does not, and the watch is dead either way.
        this.#push(w, '', 'delete');
        this.#drop(w);
      }
      return;
    }
    if (filename === null) return;
    if (kind === 'change') {
      this.#push(w, filename, 'modify');
      return;
    }
    const now = identity(join(w.path, filename));
    if (!entries.has(filename)) {
      entries.set(filename, now ?? '');
      const ev = this.#push(w, filename, 'create');
      if (now) this.#pair(now, ev, this.#appeared, this.#vanished);
    } else if (now !== undefined && now !== entries.get(filename) && this.#vanished.has(now)) {
      // Moved over an existing entry.
      entries.set(filename, now);
      this.#pair(now, this.#push(w, filename, 'rename'), this.#appeared, this.#vanished);
    } else {
      const was = entries.get(filename)!;
      entries.delete(filename);
      const ev = this.#push(w, filename, 'delete');
      if (was) this.#pair(was, ev, this.#vanished, this.#appeared);
    }
  }

  /** Records `ev` under `id` in `mine`, or turns it and its counterpart into a 'rename'. */
  #pair(id: string, ev: FsEvent, mine: Map<string, FsEvent>, theirs: Map<string, FsEvent>): void {
    const other = theirs.get(id);
    if (other) {
      theirs.delete(id);
      other.type = 'rename';
      ev.type = 'rename';
    } else {
      mine.set(id, ev);
    }
  }

  #push(w: Watched, name: string, type: FsEvent['type']): FsEvent {
    // Like the native side: a path's repeat within a batch, with nothing else in between, is merged.
    const last = this.#last.get(w);
    if (last && last.name === name && last.type === type) return last;
    const event: FsEvent = { watched: w.path, name, type };
    this.#batch.push({ from: w, event });
    this.#last.set(w, event);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
    return event;
  }

  /** The watch is gone (its path was deleted): forget it, like inotify's IN_IGNORED. */
  #drop(w: Watched): void {
    if (this.#watched.get(w.path) === w) this.#watched.delete(w.path);
    w.watcher.close();
  }

  #fail(w: Watched, err: Error): void {
    this.#drop(w);
    if (this.#closed) return;
    if (!this.#onError) throw err;
    this.#onError(err);
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#batch;
    this.#batch = [];
    this.#vanished.clear();
    this.#appeared.clear();
    this.#last.clear();
    if (this.#closed) return;
    // Drop events of paths removed since (a path that went away by itself keeps its last events).
    const events: FsEvent[] = [];
    for (const { from, event } of batch) if (!from.removed) events.push(event);
    if (events.length > 0) this.#onEvents(events);
  }
}

export const createTsFsWatcher: CreateFsWatcher = (onEvents, onError) => new TsFsWatcher(onEvents, onError);
