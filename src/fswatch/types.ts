/**
 * The filesystem watcher hot path: one interface, two implementations (fs-watcher-native.ts over
 * the addon's inotify thread, fs-watcher-ts.ts over fs.watch). The composition root picks one
 * (src/cmd/hot-paths.ts); the static pod source and the cgroup exit watcher take it as a parameter.
 */

/** One filesystem change seen by a watcher. */
export interface FsEvent {
  /** The path that was passed to FsWatcher.add(). */
  watched: string;
  /** Entry name inside a watched directory; '' when the event concerns the watched path itself. */
  name: string;
  type: 'create' | 'modify' | 'delete' | 'rename' | 'overflow';
}

/** A set of watched paths (directories or files) delivering events in batches. */
export interface FsWatcher {
  /** Start watching a directory (its entries) or a single file. Throws if the path is absent. */
  add(path: string): void;
  remove(path: string): void;
  /** Stops delivering events and releases the watcher's resources. Idempotent. */
  close(): void;
}

export type CreateFsWatcher = (onEvents: (events: FsEvent[]) => void, onError?: (err: Error) => void) => FsWatcher;

/*
 * FsWatcher semantics shared by both implementations (test/fswatch/fs-watcher.contract.test.ts):
 * - Events come in batches, never synchronously from add()/remove()/close().
 * - In a watched directory: a new entry is 'create', a write or attribute change 'modify', an
 *   unlink 'delete'; both sides of a move are 'rename' (old name and new name). A watched file
 *   (or the directory itself) reports with name '': 'modify', 'delete' (then it is no longer
 *   watched; add() it again if it comes back), 'rename' when it is moved.
 * - 'overflow' (watched '' and name ''): events were lost; rescan everything. Only the native
 *   implementation can tell (IN_Q_OVERFLOW, or a stalled event loop).
 * - add() of a watched path is a no-op; add() of a missing path throws a Node-style error
 *   (code 'ENOENT', syscall 'watch', path). add() after close() throws code 'EBADF'.
 * - After remove(p) no event for p is delivered; after close() none at all.
 * - A watcher never keeps the process alive; close() releases its fd and thread.
 * The 'ts' twin (fs.watch) cannot see a watched file being moved away: it reports 'delete'.
 */
