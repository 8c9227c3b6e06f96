/**
 * The plugin watcher (upstream: pkg/kubelet/pluginmanager/pluginwatcher): watches
 * <root-dir>/plugins_registry (and its subdirectories) for the unix sockets that plugin
 * registrars (node-driver-registrar) create, and keeps the desired state of world: one entry per
 * socket, with a generation that changes when the socket is created again, so the reconciler
 * re-registers a replaced socket. Hidden entries (".name") are skipped, as upstream does.
 */
import { lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { CreateFsWatcher, FsEvent, FsWatcher } from '../fswatch/types.js';
import { log } from '../util/log.js';

/** One socket the watcher found: `generation` grows each time the path is (re)created. */
export interface DesiredPlugin {
  socketPath: string;
  generation: number;
}

/** Upstream's desiredStateOfWorld: the sockets present in the registry directory. */
export class DesiredStateOfWorld {
  private readonly plugins = new Map<string, DesiredPlugin & { ino: number }>();
  private nextGeneration = 1;

  /**
   * Records a socket; `fresh` (a create event) or a new inode (a rescan finding it replaced)
   * starts a new generation. A chmod (the registrar narrowing its socket) does not.
   */
  addOrUpdatePlugin(socketPath: string, st: Stats, fresh: boolean): void {
    const old = this.plugins.get(socketPath);
    if (old && !fresh && old.ino === st.ino) return;
    this.plugins.set(socketPath, { socketPath, generation: this.nextGeneration++, ino: st.ino });
  }

  /** Removes the socket at `path` and every socket under it (a removed subdirectory). */
  removePlugin(path: string): void {
    for (const key of [...this.plugins.keys()])
      if (key === path || key.startsWith(`${path}/`)) this.plugins.delete(key);
  }

  getPluginsToRegister(): DesiredPlugin[] {
    return [...this.plugins.values()].map(({ socketPath, generation }) => ({ socketPath, generation }));
  }

  generationOf(socketPath: string): number | undefined {
    return this.plugins.get(socketPath)?.generation;
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export interface PluginWatcherOptions {
  /** <root-dir>/plugins_registry; created (0750) if missing. */
  dir: string;
  createFsWatcher: CreateFsWatcher;
  dsw: DesiredStateOfWorld;
  /** Called after the desired state changed (the reconciler runs at once instead of at its next tick). */
  onChange: () => void;
}

export class PluginWatcher {
  private watcher: FsWatcher | undefined;
  private readonly watchedDirs = new Set<string>();

  constructor(private readonly opts: PluginWatcherOptions) {}

  /** Creates the directory, starts watching and records the sockets already there; throws if it cannot watch. */
  start(): void {
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o750 });
    this.watcher = this.opts.createFsWatcher(
      (events) => this.handleEvents(events),
      (err) => log('pluginwatcher').warn({ err: err.message }, 'Plugin registry watcher error; rescanning'),
    );
    // Throws (ENOSPC: out of inotify watches) rather than run blind to new sockets.
    this.watcher.add(this.opts.dir);
    this.traverse(this.opts.dir);
    this.opts.onChange();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedDirs.clear();
  }

  /** Watches `dir` and records every socket in it and below (upstream traversePluginDir). */
  private traverse(dir: string): void {
    if (!this.watcher) return;
    try {
      this.watcher.add(dir);
      this.watchedDirs.add(dir);
      for (const name of readdirSync(dir)) if (!name.startsWith('.')) this.handlePath(join(dir, name), false);
    } catch (err) {
      // A directory removed while we walk it: its delete event follows.
      log('pluginwatcher').info({ dir, err: (err as Error).message }, 'Cannot walk plugin registry directory');
    }
  }

  /** Looks at what is at `path` now: a socket (desired), a directory (watch it), or nothing. */
  private handlePath(path: string, fresh: boolean): void {
    const st = lstatOrUndefined(path);
    if (st?.isSocket()) this.opts.dsw.addOrUpdatePlugin(path, st, fresh);
    else if (st?.isDirectory()) {
      if (!this.watchedDirs.has(path)) this.traverse(path);
    } else this.forget(path);
  }

  private forget(path: string): void {
    this.opts.dsw.removePlugin(path);
    for (const d of [...this.watchedDirs]) {
      if (d !== path && !d.startsWith(`${path}/`)) continue;
      this.watchedDirs.delete(d);
      this.watcher?.remove(d);
    }
  }

  /** Events were lost: drop the sockets that are gone, then walk the whole tree again. */
  private rescan(): void {
    for (const p of this.opts.dsw.getPluginsToRegister()) {
      if (!lstatOrUndefined(p.socketPath)?.isSocket()) this.opts.dsw.removePlugin(p.socketPath);
    }
    this.traverse(this.opts.dir);
  }

  private handleEvents(events: FsEvent[]): void {
    for (const e of events) {
      if (e.type === 'overflow') {
        this.rescan();
        continue;
      }
      if (e.name === '' || e.name.startsWith('.')) continue;
      const path = join(e.watched, e.name);
      if (e.type === 'delete') this.forget(path);
      else this.handlePath(path, e.type === 'create' || e.type === 'rename');
    }
    this.opts.onChange();
  }
}
