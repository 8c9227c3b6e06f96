/**
 * Event-driven relist trigger (beyond upstream): watch each running container's
 * `cgroup.events` in the cgroup v2 / unified hierarchy. The kernel rewrites it (inotify
 * IN_MODIFY) when the cgroup's last process exits ("populated 0"), so the PLEG can relist that
 * moment instead of up to a relist period later. containerd 1.6 has no CRI container events;
 * this gives us the same speed. The periodic relist stays as the safety net: anything this
 * watcher misses (no unified tree, unknown cgroup layout) is still seen within a period.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateFsWatcher, FsWatcher } from '../fswatch/types.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { isPathComponent } from '../util/path-component.js';
import { cgroupNaming, qosCgroupNames, type CgroupNaming } from '../cm/cgroup-name.js';

/** Where the unified hierarchy is mounted: the root on pure v2 hosts, `unified/` on hybrid ones. */
export function findUnifiedRoot(base = '/sys/fs/cgroup'): string | undefined {
  if (existsSync(join(base, 'cgroup.controllers'))) return base;
  if (existsSync(join(base, 'unified', 'cgroup.procs'))) return join(base, 'unified');
  return undefined;
}

/**
 * Cgroup directories a container may live in, relative to the unified root: under the kubepods
 * QoS hierarchy in the driver's naming, or (cgroupfs, pod cgroups off) containerd's default
 * parent k8s.io.
 */
export function candidateCgroupDirs(
  podUid: string,
  containerId: string,
  cgroupRoot = '/',
  naming: CgroupNaming = cgroupNaming('cgroupfs'),
): string[] {
  const pods = [`pod${podUid}`, `pod${podUid.replace(/-/g, '_')}`];
  const qos = Object.values(qosCgroupNames(naming.parse(cgroupRoot)));
  const parents = [
    ...(naming.driver === 'cgroupfs' ? ['k8s.io'] : []),
    ...qos.flatMap((q) => pods.map((p) => naming.path([...q, p]))),
  ];
  return [...new Set(parents)].flatMap((p) => naming.containerLeaves(containerId).map((leaf) => join(p, leaf)));
}

interface Tracked {
  podUid: string;
  file: string;
}

export interface CgroupExitWatcherOptions {
  root: string;
  createFsWatcher: CreateFsWatcher;
  /** Called once per container whose cgroup became empty or vanished. */
  onExit: (podUid: string, containerId: string) => void;
  cgroupRoot?: string;
  /** How the cgroup driver names pod and container cgroups (default cgroupfs). */
  naming?: CgroupNaming;
}

export class CgroupExitWatcher {
  private readonly watcher: FsWatcher;
  private readonly byFile = new Map<string, string>();
  private readonly tracked = new Map<string, Tracked>();
  private closed = false;
  /** Index in candidateCgroupDirs of the last cgroup found. */
  private lastHit = 0;

  constructor(private readonly opts: CgroupExitWatcherOptions) {
    this.watcher = opts.createFsWatcher(
      (events) => {
        for (const e of events) {
          if (e.type === 'overflow') {
            for (const [cid, t] of this.tracked) void this.check(cid, t);
            continue;
          }
          const cid = this.byFile.get(e.watched);
          const t = cid ? this.tracked.get(cid) : undefined;
          if (cid && t) void this.check(cid, t, e.type === 'delete');
        }
      },
      (err) => log('pleg').warn({ err: errorMessage(err) }, 'cgroup.events watcher error'),
    );
  }

  /** Start watching a running container; resolves false when its cgroup cannot be found. */
  async track(podUid: string, containerId: string): Promise<boolean> {
    if (this.closed || this.tracked.has(containerId)) return this.tracked.has(containerId);
    // Both come from runtime labels and IDs: never walk a path they do not name exactly.
    if (!isPathComponent(podUid) || !isPathComponent(containerId)) return false;
    const candidates = candidateCgroupDirs(podUid, containerId, this.opts.cgroupRoot, this.opts.naming);
    // The place that held the last container is tried first: on a node most pods share a QoS
    // class, so a burst of starts finds each cgroup with one lookup instead of up to fourteen.
    const order = candidates.map((_, i) => i);
    if (this.lastHit > 0 && this.lastHit < candidates.length) order.unshift(...order.splice(this.lastHit, 1));
    for (const i of order) {
      const file = join(this.opts.root, candidates[i]!, 'cgroup.events');
      // A lookup on the in-memory cgroup filesystem: synchronous, no thread-pool hop, and a miss
      // builds no exception (the async access() it replaces threw one per miss).
      if (!existsSync(file)) continue;
      this.lastHit = i;
      if (this.closed || this.tracked.has(containerId)) return true;
      try {
        this.watcher.add(file);
      } catch {
        return false; // vanished between access and add: the container already exited
      }
      const t = { podUid, file };
      this.tracked.set(containerId, t);
      this.byFile.set(file, containerId);
      // It may have exited before the watch was in place.
      await this.check(containerId, t);
      return true;
    }
    return false;
  }

  untrack(containerId: string): void {
    const t = this.tracked.get(containerId);
    if (!t) return;
    this.tracked.delete(containerId);
    this.byFile.delete(t.file);
    try {
      this.watcher.remove(t.file);
    } catch {
      /* already gone with its cgroup */
    }
  }

  get size(): number {
    return this.tracked.size;
  }

  close(): void {
    this.closed = true;
    this.watcher.close();
    this.tracked.clear();
    this.byFile.clear();
  }

  private async check(containerId: string, t: Tracked, deleted = false): Promise<void> {
    let empty = deleted;
    if (!empty) {
      try {
        empty = /^populated 0$/m.test(await readFile(t.file, 'utf8'));
      } catch {
        empty = true; // the cgroup was removed: nothing runs in it any more
      }
    }
    if (!empty || !this.tracked.has(containerId)) return;
    this.untrack(containerId);
    this.opts.onExit(t.podUid, containerId);
  }
}
