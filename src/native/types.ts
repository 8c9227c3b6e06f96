/**
 * Hot paths with two implementations behind one signature: the C++ addon ("native") and a pure
 * TypeScript twin ("ts"). src/native/index.ts chooses per path.
 */

export type Implementation = 'native' | 'ts';

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
