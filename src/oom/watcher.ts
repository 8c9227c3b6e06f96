/**
 * The OOM watcher: kills from /dev/kmsg (first signal, immediate) and from the cgroup oom_kill
 * counters read in every stats pass (second signal: catches what the log missed, e.g. records
 * overwritten or no /dev/kmsg at all). Each kill becomes one event: a counter increase already
 * reported by kmsg is not reported again, and a kmsg record for a kill the counters reported
 * first is dropped.
 */
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { cgroupNaming, containerIdOfLeaf } from '../cm/cgroup-name.js';
import type { CreateKmsgWatcher, KmsgWatcher, OomCounterSample, OomEvent, OomKillRecord, OomWatcher } from './types.js';

export interface OomWatcherDeps {
  createKmsgWatcher: CreateKmsgWatcher;
  /** Default /dev/kmsg. */
  kmsgPath?: string;
  onEvent(e: OomEvent): void;
}

/** How many OOM-killed container ids are remembered for wasOomKilled(). */
const REMEMBER = 4096;

/**
 * Pod UID and container id from a memcg path, in either driver's naming:
 * /kubepods/burstable/pod<uid>/<id> or
 * /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid, - as _>.slice/cri-containerd-<id>.scope.
 */
export function podOfMemcg(memcg: string): { podUid?: string; containerId?: string } {
  const parts = memcg.split('/').filter(Boolean);
  const kube = parts.findIndex((p) => p === 'kubepods' || p === 'kubepods.slice');
  if (kube < 0) return {};
  for (let i = kube + 1; i < parts.length; i++) {
    const naming = cgroupNaming(parts[i]!.endsWith('.slice') ? 'systemd' : 'cgroupfs');
    const podUid = naming.podUidOfLeaf(parts[i]!);
    if (!podUid) continue;
    const containerId = parts[i + 1] !== undefined ? containerIdOfLeaf(parts[i + 1]!) : undefined;
    return { podUid, ...(containerId ? { containerId } : {}) };
  }
  return {};
}

export class KmsgOomWatcher implements OomWatcher {
  private kmsg: KmsgWatcher | undefined;
  private readonly counters = new Map<string, bigint>();
  /** Kills per container seen by one source and not yet matched by the other. */
  private readonly kmsgAhead = new Map<string, number>();
  private readonly counterAhead = new Map<string, number>();
  private readonly killed = new Set<string>();

  constructor(private readonly deps: OomWatcherDeps) {}

  get kmsgActive(): boolean {
    return this.kmsg !== undefined;
  }

  start(): void {
    const path = this.deps.kmsgPath ?? '/dev/kmsg';
    try {
      this.kmsg = this.deps.createKmsgWatcher(path, (kills) => this.onKills(kills));
      log('oom').info({ path }, 'OOM watcher reading the kernel log');
    } catch (err) {
      log('oom').warn(
        { path, err: errorMessage(err) },
        'Cannot read the kernel log: OOM kills are seen from cgroup oom_kill counters only',
      );
    }
  }

  stop(): void {
    this.kmsg?.close();
    this.kmsg = undefined;
  }

  wasOomKilled(containerId: string): boolean {
    return this.killed.has(containerId);
  }

  private onKills(kills: OomKillRecord[]): void {
    for (const k of kills) {
      const memcg = k.taskMemcg || k.oomMemcg;
      const where = podOfMemcg(memcg);
      if (where.containerId && take(this.counterAhead, where.containerId)) continue;
      if (where.containerId) bump(this.kmsgAhead, where.containerId, 1);
      this.emit({ time: new Date(), source: 'kmsg', pid: k.pid, comm: k.comm, memcg, ...where, kernelTsUs: k.tsUs });
    }
  }

  observeCounters(samples: readonly OomCounterSample[]): void {
    const seen = new Set<string>();
    for (const s of samples) {
      seen.add(s.containerId);
      const prev = this.counters.get(s.containerId);
      this.counters.set(s.containerId, s.oomKills);
      // A container first seen with kills had them before we watched: not ours to report.
      if (prev === undefined || s.oomKills <= prev) continue;
      let extra = Number(s.oomKills - prev);
      while (extra > 0 && take(this.kmsgAhead, s.containerId)) extra--;
      bump(this.counterAhead, s.containerId, extra);
      for (let i = 0; i < extra; i++) {
        this.emit({
          time: new Date(),
          source: 'memory.events',
          memcg: s.memcg,
          podUid: s.podUid,
          containerId: s.containerId,
        });
      }
    }
    for (const id of this.counters.keys()) {
      if (seen.has(id)) continue;
      this.counters.delete(id);
      this.counterAhead.delete(id);
    }
  }

  private emit(e: OomEvent): void {
    if (e.containerId) {
      this.killed.add(e.containerId);
      if (this.killed.size > REMEMBER) this.killed.delete(this.killed.values().next().value!);
    }
    try {
      this.deps.onEvent(e);
    } catch (err) {
      log('oom').warn({ err: errorMessage(err) }, 'OOM event handler failed');
    }
  }
}

function bump(m: Map<string, number>, k: string, n: number): void {
  if (n > 0) m.set(k, (m.get(k) ?? 0) + n);
}

/** Decrements m[k] if positive; true when it did. */
function take(m: Map<string, number>, k: string): boolean {
  const n = m.get(k) ?? 0;
  if (n <= 0) return false;
  if (n === 1) m.delete(k);
  else m.set(k, n - 1);
  return true;
}
