/**
 * The static pod file source (upstream pkg/kubelet/config/file.go): staticPodPath is a directory
 * of manifests (one Pod per file, YAML or JSON) or a single manifest file. Filesystem events,
 * seen through an injected watcher and debounced briefly, trigger a full list; a periodic list
 * every fileCheckFrequency is the safety net. Every list whose result differs from the last one
 * pushes a SET of the source's complete pod list (the first list always does, so the source
 * becomes "seen" even when empty).
 *
 * A manifest that does not decode is logged once per distinct content, with file and field,
 * and disturbs no other pod; a file that held a good pod keeps serving that pod until it is
 * fixed or deleted (upstream drops it at the next list; a typo in an edit should not stop a
 * running pod: docs/differences.md). A missing staticPodPath counts as empty and is checked again: its parent
 * directory is watched so that its creation is noticed at once.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Pod } from '../api/types.js';
import type { CreateFsWatcher, FsEvent, FsWatcher } from '../fswatch/types.js';
import { ManifestError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { decodeStaticPodManifest } from './manifest.js';
import type { PodSource, PodUpdate } from './types.js';
import { FileSource as FileSourceName } from './types.js';
import { klogRef } from '../api/pod.js';

export interface FileSourceOptions {
  /** staticPodPath: a directory of manifests or one manifest file. */
  path: string;
  nodeName: string;
  createFsWatcher: CreateFsWatcher;
  /** fileCheckFrequency: the period of the full list, in ms (default 20 000). */
  periodMs?: number;
  /** How long a burst of filesystem events is gathered before listing, in ms (default 10). */
  debounceMs?: number;
  /** How often to retry when neither the path nor its parent can be watched, in ms (default 1000). */
  watchRetryMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** The file source; `sync()` is one full list (public for tests and for a forced re-read). */
export interface StaticPodFileSource extends PodSource {
  /** Lists the path now and pushes a SET if the result changed; resolves when done. */
  sync(): Promise<void>;
}

export const DefaultFileCheckFrequencyMs = 20_000;

/** Names never read as manifests: dotfiles and editor swap or backup files. */
export function isIgnoredManifestName(name: string): boolean {
  return (
    name === '' ||
    name.startsWith('.') ||
    name.endsWith('~') ||
    /\.sw[a-p]$/.test(name) ||
    /\.swx$/.test(name) ||
    (name.startsWith('#') && name.endsWith('#'))
  );
}

interface Entry {
  /** sha256 of the file's content as last read. */
  contentKey: string;
  /** The pod of the last good content of this file, if any. */
  pod?: Pod;
  /** contentKey of the content `pod` was decoded from. */
  podKey?: string;
  /** The problem with the current content, when it does not decode. */
  error?: string;
}

interface WatchTarget {
  /** The path handed to the watcher. */
  watched: string;
  /** Entry name that matters inside `watched`; undefined means every entry (directory mode). */
  only?: string;
}

class FileSourceImpl implements StaticPodFileSource {
  private readonly path: string;
  private readonly nodeName: string;
  private readonly createFsWatcher: CreateFsWatcher;
  private readonly periodMs: number;
  private readonly debounceMs: number;
  private readonly watchRetryMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;

  private push: ((u: PodUpdate) => void) | undefined;
  private stopped = false;
  private started = false;

  private readonly entries = new Map<string, Entry>();
  private lastSignature: string | undefined;
  private loggedConflicts = new Set<string>();
  private loggedPathProblem: string | undefined;
  private loggedSubdirs = new Set<string>();

  private watcher: FsWatcher | undefined;
  private watchTarget: WatchTarget | undefined;

  private debounceTimer: { cancel(): void } | undefined;
  private periodTimer: { cancel(): void } | undefined;
  private retryTimer: { cancel(): void } | undefined;

  private running: Promise<void> | undefined;
  private rerun = false;

  constructor(opts: FileSourceOptions) {
    this.path = opts.path;
    this.nodeName = opts.nodeName;
    this.createFsWatcher = opts.createFsWatcher;
    this.periodMs = opts.periodMs && opts.periodMs > 0 ? opts.periodMs : DefaultFileCheckFrequencyMs;
    this.debounceMs = opts.debounceMs ?? 10;
    this.watchRetryMs = opts.watchRetryMs ?? 1000;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? log('podconfig').child({ source: FileSourceName });
  }

  start(push: (update: PodUpdate) => void): void {
    if (this.started) throw new TypeError('the file source was already started');
    this.started = true;
    this.push = push;
    this.logger.info({ path: this.path }, 'watching static pod path');
    this.schedulePeriodic();
    void this.sync();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of [this.debounceTimer, this.periodTimer, this.retryTimer]) t?.cancel();
    this.debounceTimer = this.periodTimer = this.retryTimer = undefined;
    this.dropWatch();
  }

  sync(): Promise<void> {
    this.rerun = true;
    if (!this.running) {
      this.running = this.loop().finally(() => {
        this.running = undefined;
      });
    }
    return this.running;
  }

  private async loop(): Promise<void> {
    while (this.rerun && !this.stopped) {
      this.rerun = false;
      try {
        await this.listOnce();
      } catch (err) {
        this.logger.error({ path: this.path, err: errorMessage(err) }, 'unable to read static pod path');
      }
    }
  }

  private schedulePeriodic(): void {
    if (this.stopped) return;
    this.periodTimer = this.clock.setTimeout(() => {
      this.periodTimer = undefined;
      void this.sync();
      this.schedulePeriodic();
    }, this.periodMs);
  }

  private scheduleSync(): void {
    if (this.stopped || this.debounceTimer) return;
    this.debounceTimer = this.clock.setTimeout(() => {
      this.debounceTimer = undefined;
      void this.sync();
    }, this.debounceMs);
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      void this.sync();
    }, this.watchRetryMs);
  }

  // ---- watching ------------------------------------------------------------------------------

  private dropWatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchTarget = undefined;
  }

  /**
   * Watches the directory itself when staticPodPath is a directory; otherwise (a single file, or
   * a path that does not exist yet) watches its parent for that one name.
   */
  private ensureWatch(st: Stats | undefined): void {
    if (this.stopped) return;
    const want: WatchTarget = st?.isDirectory()
      ? { watched: this.path }
      : { watched: dirname(this.path), only: basename(this.path) };
    if (this.watcher && this.watchTarget?.watched === want.watched && this.watchTarget.only === want.only) return;
    this.dropWatch();
    let w: FsWatcher | undefined;
    try {
      w = this.createFsWatcher(
        (events) => this.onEvents(w!, events),
        (err) => this.onWatchError(w!, err),
      );
      w.add(want.watched);
    } catch (err) {
      w?.close();
      this.logger.debug({ path: want.watched, err: errorMessage(err) }, 'cannot watch static pod path yet; will retry');
      this.scheduleRetry();
      return;
    }
    this.watcher = w;
    this.watchTarget = want;
    // Anything that changed before the watch was in place is picked up by one more list.
    this.rerun = true;
  }

  private onEvents(w: FsWatcher, events: FsEvent[]): void {
    if (this.stopped || w !== this.watcher || !this.watchTarget) return;
    const target = this.watchTarget;
    let relevant = false;
    for (const e of events) {
      if (e.type === 'overflow') relevant = true;
      else if (e.name === '') {
        // The watched path itself went away or was replaced: watch again after the next list.
        if (e.type === 'delete' || e.type === 'rename') this.dropWatch();
        relevant = true;
      } else if (target.only !== undefined) {
        if (e.name === target.only) relevant = true;
      } else if (!isIgnoredManifestName(e.name)) relevant = true;
    }
    if (relevant) this.scheduleSync();
  }

  private onWatchError(w: FsWatcher, err: Error): void {
    if (this.stopped || w !== this.watcher) return;
    this.logger.warn(
      { path: this.watchTarget?.watched, err: errorMessage(err) },
      'static pod path watcher failed; watching again',
    );
    this.dropWatch();
    this.scheduleSync();
  }

  // ---- listing -------------------------------------------------------------------------------

  private async listOnce(): Promise<void> {
    let st: Stats | undefined;
    try {
      st = await stat(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (this.stopped) return;
    this.ensureWatch(st);

    let files: string[];
    if (!st) {
      this.pathProblem('missing', 'static pod path does not exist; treating it as empty and checking again');
      files = [];
    } else if (st.isDirectory()) {
      this.pathProblem(undefined);
      files = await this.listDir();
    } else if (st.isFile()) {
      this.pathProblem(undefined);
      files = [this.path];
    } else {
      this.pathProblem('special', 'static pod path is neither a file nor a directory; treating it as empty');
      files = [];
    }

    const contents = await Promise.all(files.map((f) => this.read(f)));
    if (this.stopped) return;

    const present = new Set<string>();
    files.forEach((file, i) => {
      const text = contents[i];
      if (text === undefined) return; // vanished between listing and reading
      present.add(file);
      this.consider(file, text);
    });
    for (const file of [...this.entries.keys()]) if (!present.has(file)) this.entries.delete(file);

    this.publish();
  }

  private async listDir(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: string[] = [];
    const subdirs = new Set<string>();
    await Promise.all(
      names
        .filter((n) => !isIgnoredManifestName(n))
        .map(async (n) => {
          const full = join(this.path, n);
          try {
            const s = await stat(full);
            if (s.isFile()) out.push(full);
            else if (s.isDirectory()) subdirs.add(full);
          } catch {
            // Vanished or a dangling symlink: not a manifest.
          }
        }),
    );
    for (const d of subdirs)
      if (!this.loggedSubdirs.has(d))
        this.logger.info({ path: d }, 'not recursing into a directory in the static pod path');
    this.loggedSubdirs = subdirs;
    return out.sort();
  }

  private async read(file: string): Promise<string | undefined> {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') return undefined;
      // Unreadable (permissions, I/O): handled like a malformed manifest, keyed by the error.
      return `\0unreadable:${errorMessage(err)}`;
    }
  }

  /** Decodes a file whose content changed; keeps the last good pod when the new content is bad. */
  private consider(file: string, text: string): void {
    const contentKey = createHash('sha256').update(text).digest('hex');
    const prev = this.entries.get(file);
    if (prev && prev.contentKey === contentKey) return;

    if (text.startsWith('\0unreadable:')) {
      this.bad(
        file,
        contentKey,
        prev,
        new ManifestError(file, `cannot be read: ${text.slice('\0unreadable:'.length)}`),
      );
      return;
    }
    if (text.trim() === '') {
      // Often a file caught between create and write; not worth an error until it stays so.
      this.logger.debug({ file }, 'static pod manifest is empty');
      this.entries.set(file, { contentKey, pod: prev?.pod, podKey: prev?.podKey, error: 'empty' });
      return;
    }
    try {
      const pod = decodeStaticPodManifest(text, { file, nodeName: this.nodeName });
      if (prev?.error !== undefined && prev.pod) this.logger.info({ file }, 'static pod manifest is valid again');
      this.entries.set(file, { contentKey, pod, podKey: contentKey });
    } catch (err) {
      this.bad(file, contentKey, prev, err);
    }
  }

  private bad(file: string, contentKey: string, prev: Entry | undefined, err: unknown): void {
    const field = err instanceof ManifestError ? err.field : undefined;
    const kept = prev?.pod;
    this.logger.error(
      {
        file,
        field,
        err: errorMessage(err),
        keptPod: kept ? klogRef(kept.metadata) : undefined,
      },
      kept
        ? 'invalid static pod manifest; keeping the pod of its last valid version'
        : 'invalid static pod manifest; ignored',
    );
    this.entries.set(file, { contentKey, pod: kept, podKey: prev?.podKey, error: errorMessage(err) });
  }

  private pathProblem(kind: string | undefined, message?: string): void {
    if (kind === this.loggedPathProblem) return;
    this.loggedPathProblem = kind;
    if (kind && message) this.logger.warn({ path: this.path }, message);
    else this.logger.info({ path: this.path }, 'static pod path is readable');
  }

  /** Builds the pod list in file name order, first name wins, and pushes a SET if it changed. */
  private publish(): void {
    const pods: Pod[] = [];
    const parts: string[] = [];
    const byName = new Map<string, string>();
    const conflicts = new Set<string>();
    for (const file of [...this.entries.keys()].sort()) {
      const { pod, podKey } = this.entries.get(file)!;
      if (!pod) continue;
      const key = klogRef(pod.metadata);
      const first = byName.get(key);
      if (first !== undefined) {
        const id = `${file}\n${first}\n${key}`;
        conflicts.add(id);
        if (!this.loggedConflicts.has(id)) {
          this.logger.error(
            { file, pod: key, keptFile: first },
            'static pod manifest defines a pod name already defined by another file; ignored',
          );
        }
        continue;
      }
      byName.set(key, file);
      pods.push(pod);
      parts.push(`${file}\0${podKey}`);
    }
    this.loggedConflicts = conflicts;

    const signature = parts.join('\n');
    if (signature === this.lastSignature || this.stopped) return;
    this.lastSignature = signature;
    this.push?.({ op: 'SET', pods, source: FileSourceName });
  }
}

/** Creates the static pod file source; PodConfig starts it. */
export function newSourceFile(opts: FileSourceOptions): StaticPodFileSource {
  return new FileSourceImpl(opts);
}
