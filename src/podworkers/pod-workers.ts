/**
 * The pod worker driver. Each UID has one PodSyncStatus and at most one loop running for it;
 * updates that arrive while it works are coalesced into `pending` (a kill is never replaced by
 * a sync). All state transitions happen in `transition()`, all side effects in `runOnce()`.
 */
import type { Pod } from '../api/types.js';
import type { PodStatusCache } from '../pleg/types.js';
import type { RunningPod } from '../kuberuntime/types.js';
import { ConfigSourceAnnotationKey } from '../api/types.js';
import { metrics } from '../metrics/index.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { WorkQueue } from './work-queue.js';
import type { PodSyncer, PodWorkerState, PodWorkers, UpdatePodOptions, UpdateType } from './types.js';

/** Upstream's backOffPeriod after a failed sync. */
export const WORKER_BACKOFF_MS = 10_000;
const DEFAULT_GRACE_SECONDS = 30;

interface PodSyncStatus {
  uid: string;
  fullname: string;
  pod: Pod | undefined;
  runningPod: RunningPod | undefined;
  state: PodWorkerState;
  /** Terminated and cleaned up: takes no more work. */
  finished: boolean;
  working: boolean;
  pending: UpdatePodOptions | undefined;
  gracePeriodSeconds: number | undefined;
  /** A create arrived while terminating: honour it once terminated (upstream restartRequested). */
  restartRequested: boolean;
  /** Time the last sync started: the next one needs a newer runtime status. */
  lastSyncTime: number;
  started: boolean;
  /** Aborts a sync's wait for a fresh status when a kill arrives meanwhile. */
  waitAbort: AbortController | undefined;
}

export interface PodWorkersOptions {
  syncer: PodSyncer;
  cache: PodStatusCache;
  resyncIntervalMs: number;
  clock?: Clock;
}

function fullName(pod: Pod | undefined, running: RunningPod | undefined): string {
  const name = pod?.metadata?.name ?? running?.name ?? '?';
  const ns = pod?.metadata?.namespace ?? running?.namespace ?? '?';
  return `${name}_${ns}`;
}

function podGrace(pod: Pod | undefined): number {
  return pod?.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
}

function isStatic(pod: Pod | undefined): boolean {
  const src = pod?.metadata?.annotations?.[ConfigSourceAnnotationKey];
  return src !== undefined && src !== 'api';
}

class PodWorkersImpl implements PodWorkers {
  private readonly statuses = new Map<string, PodSyncStatus>();
  private readonly queue: WorkQueue;
  private readonly clock: Clock;
  private readonly loops = new Set<Promise<void>>();
  /** Static pods waiting for an older instance with the same full name to finish. */
  private finishWaiters: (() => void)[] = [];

  constructor(private readonly opts: PodWorkersOptions) {
    this.clock = opts.clock ?? realClock;
    this.queue = new WorkQueue(this.clock);
  }

  updatePod(update: UpdatePodOptions): void {
    const uid = update.pod?.metadata?.uid ?? update.runningPod?.uid;
    if (!uid) return;
    let st = this.statuses.get(uid);
    if (st?.finished && !st.working && update.updateType === 'create') {
      // Fully terminated and cleaned up: a create for the same UID (the same manifest written
      // back) starts a fresh worker now rather than at the next housekeeping.
      this.statuses.delete(uid);
      st = undefined;
    }
    if (!st) {
      st = {
        uid, fullname: fullName(update.pod, update.runningPod), pod: update.pod, runningPod: update.runningPod,
        state: 'syncing', finished: false, working: false, pending: undefined, gracePeriodSeconds: undefined,
        restartRequested: false, lastSyncTime: 0, started: false, waitAbort: undefined,
      };
      this.statuses.set(uid, st);
    }
    if (!this.transition(st, update)) return;
    if (!st.working) this.startLoop(st);
  }

  /** Apply an update to the worker's state. Returns false when the update is dropped. */
  private transition(st: PodSyncStatus, update: UpdatePodOptions): boolean {
    if (st.finished || st.state === 'terminated') {
      if (update.updateType === 'create') st.restartRequested = true;
      return false;
    }
    if (update.pod) st.pod = update.pod;
    if (update.runningPod) st.runningPod = update.runningPod;
    const wantsKill = update.updateType === 'kill' || !update.pod || update.pod.metadata?.deletionTimestamp !== undefined;
    if (wantsKill && st.state === 'syncing') {
      st.state = 'terminating';
      st.waitAbort?.abort();
      log('podworkers').info({ pod: st.fullname, uid: st.uid, reason: update.reason }, 'Pod is being terminated');
    }
    if (wantsKill) {
      const requested = update.gracePeriodSeconds ?? podGrace(st.pod);
      st.gracePeriodSeconds = st.gracePeriodSeconds === undefined ? requested : Math.min(st.gracePeriodSeconds, requested);
    }
    // Coalesce: once terminating, any pending work is termination work.
    const type: UpdateType = st.state === 'terminating' ? 'kill' : st.pending?.updateType === 'create' ? 'create' : update.updateType;
    st.pending = { ...update, updateType: type };
    this.queue.remove(st.uid);
    return true;
  }

  private startLoop(st: PodSyncStatus): void {
    st.working = true;
    const loop = this.loop(st).finally(() => {
      st.working = false;
      this.loops.delete(loop);
    });
    this.loops.add(loop);
  }

  private async loop(st: PodSyncStatus): Promise<void> {
    while (st.pending && !st.finished) {
      const update = st.pending;
      st.pending = undefined;
      await this.runOnce(st, update);
    }
  }

  private async runOnce(st: PodSyncStatus, update: UpdatePodOptions): Promise<void> {
    const syncer = this.opts.syncer;
    const started = this.clock.now();
    try {
      if (st.state === 'syncing') {
        if (!st.started && isStatic(st.pod)) await this.waitForStaticPredecessor(st);
        if (st.state !== 'syncing') return void (st.pending ??= { updateType: 'kill' });
        // Act only on a runtime status observed after our previous sync (upstream GetNewerThan).
        st.waitAbort = new AbortController();
        const cached = await this.opts.cache.getNewerThan(st.uid, st.lastSyncTime, st.waitAbort.signal);
        st.waitAbort = undefined;
        if (st.state !== 'syncing') return; // a kill arrived while waiting: it is pending
        st.lastSyncTime = this.clock.now();
        st.started = true;
        const result = await syncer.syncPod(update.updateType, st.pod!, cached.status);
        metrics.podWorkerDuration.observe({ operation: update.updateType }, (this.clock.now() - started) / 1000);
        if (result.isTerminal) {
          st.state = 'terminating';
          st.gracePeriodSeconds = podGrace(st.pod);
          st.pending ??= { updateType: 'kill' };
        } else {
          this.queue.enqueue(st.uid, result.requeueAfterMs ?? this.jitter(this.opts.resyncIntervalMs));
        }
        return;
      }
      // Termination does not wait for the next relist (upstream does): the kubelet reads a fresh
      // status from the runtime itself, so a kill starts at once and misses no new container.
      if (st.state === 'terminating') {
        if (st.pod) await syncer.syncTerminatingPod(st.pod, undefined, st.gracePeriodSeconds ?? podGrace(st.pod));
        else if (st.runningPod) await syncer.syncTerminatingRuntimePod(st.runningPod);
        st.state = 'terminated';
        log('podworkers').info({ pod: st.fullname, uid: st.uid }, 'Pod termination finished');
      }
      if (st.state === 'terminated') {
        if (st.pod) await syncer.syncTerminatedPod(st.pod, undefined);
        st.finished = true;
        st.pending = undefined;
        this.notifyFinished();
      }
    } catch (err) {
      log('podworkers').error({ pod: st.fullname, uid: st.uid, err: errorMessage(err) }, 'Error syncing pod, skipping');
      if (st.state === 'syncing') this.queue.enqueue(st.uid, WORKER_BACKOFF_MS);
      else st.pending ??= { updateType: 'kill' };
      if (st.state !== 'syncing') await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * A static pod must not start while an older instance with the same full name is still
   * terminating (upstream allowStaticPodStart): an edited manifest would otherwise run two
   * copies that fight over host ports.
   */
  private async waitForStaticPredecessor(st: PodSyncStatus): Promise<void> {
    for (;;) {
      const blocker = [...this.statuses.values()].find((o) => o !== st && o.fullname === st.fullname && o.started && !o.finished);
      if (!blocker || st.state !== 'syncing') return;
      await new Promise<void>((r) => this.finishWaiters.push(r));
    }
  }

  private notifyFinished(): void {
    const waiters = this.finishWaiters.splice(0);
    for (const w of waiters) w();
  }

  private jitter(ms: number): number {
    return ms + Math.random() * ms * 0.5;
  }

  isPodTerminationRequested(uid: string): boolean {
    const st = this.statuses.get(uid);
    return st !== undefined && st.state !== 'syncing';
  }

  couldHaveRunningContainers(uid: string): boolean {
    const st = this.statuses.get(uid);
    return st !== undefined && st.state !== 'terminated' && !st.finished;
  }

  syncKnownPods(desired: readonly Pod[]): Map<string, PodWorkerState> {
    const want = new Set(desired.map((p) => p.metadata?.uid));
    const out = new Map<string, PodWorkerState>();
    for (const [uid, st] of this.statuses) {
      if (st.finished && !st.working && !want.has(uid)) {
        this.statuses.delete(uid);
        this.queue.remove(uid);
        continue;
      }
      if (st.finished && st.restartRequested && want.has(uid)) {
        // Forget the finished worker so the pod can be created afresh by housekeeping.
        this.statuses.delete(uid);
        continue;
      }
      out.set(uid, st.state);
    }
    return out;
  }

  takeDueForSync(): string[] {
    return this.queue.takeReady();
  }

  async idle(): Promise<void> {
    while (this.loops.size > 0) await Promise.allSettled([...this.loops]);
  }
}

export function createPodWorkers(opts: PodWorkersOptions): PodWorkers {
  return new PodWorkersImpl(opts);
}
