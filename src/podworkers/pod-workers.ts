/**
 * The pod worker driver. Each UID has one Worker record and at most one loop running for it;
 * updates that arrive while it works are coalesced into `pending`. The decisions (which state,
 * which grace period, preempt or not) come from states.ts; this file owns everything else: the
 * loop, cancellation, logging, metrics, retries, static pod start ordering and restarts.
 *
 * Cancellation: a kill aborts the work in flight. A sync is not abandoned (it may be creating
 * containers the kill must see): its wait for a fresh runtime status is cut short, and the
 * syncer's CRI calls and image pulls, which take the context's signal, are cancelled, so the sync
 * ends within milliseconds and the kill starts (upstream passes the worker's context down). A
 * sync that ends that way is not a failure: no back-off, the pending kill runs next. A kill is abandoned when a shorter grace period arrives: the
 * new kill starts at once with the shorter grace (the runtime honours a second StopContainer with
 * a shorter timeout) while the old call finishes on its own, no longer awaited.
 */
import type { Pod } from '../api/types.js';
import type { PodStatusCache } from '../pleg/types.js';
import type { PodRuntimeStatus, RunningPod } from '../kuberuntime/types.js';
import { buildPodFullName, isStaticPod, podTerminationGracePeriodSeconds } from '../api/pod.js';
import { metrics } from '../metrics/index.js';
import { errorMessage, KubeletError } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { WorkQueue } from './work-queue.js';
import {
  HANDLERS,
  finishesWithoutWork,
  initialState,
  isAllowedEdge,
  type TerminationCause,
  type WorkDone,
  type WorkerView,
} from './states.js';
import type {
  KillPodOptions,
  PodStatusFunc,
  PodSyncer,
  PodWorkerState,
  PodWorkers,
  SyncPodResult,
  UpdatePodOptions,
  UpdateType,
} from './types.js';

/** Upstream's backOffPeriod after a failed sync. */
export const WORKER_BACKOFF_MS = 10_000;
/** Retry period of a failed kill or cleanup (upstream: the worker back-off, at most this soon). */
export const TERMINATION_RETRY_MS = 1000;

interface Worker {
  uid: string;
  fullname: string;
  state: PodWorkerState;
  pod: Pod | undefined;
  runningPod: RunningPod | undefined;
  static: boolean;
  cause: TerminationCause | undefined;
  gracePeriod: number | undefined;
  /** Status amendments and completion callbacks of the kills received (upstream abnormalTerminations). */
  statusFns: PodStatusFunc[];
  onTerminated: (() => void)[];
  /** A create arrived while terminating: start the pod afresh once finished (upstream restartRequested). */
  restartRequested: boolean;
  restartPod: Pod | undefined;
  /** The next work to do; its type is the update type for syncs and metrics. */
  pending: { updateType: UpdateType } | undefined;
  working: boolean;
  /** The work in flight and how to abort it. */
  inflight: { state: PodWorkerState; abort: AbortController } | undefined;
  /** The pod was allowed to start (syncPod ran at least once). */
  started: boolean;
  /** A runtime-only kill named this UID: its containers exist, the kill must run (upstream observedRuntime). */
  observedRuntime: boolean;
  /** syncKnownPods found it no longer desired: as good as deleted, its content may go (upstream). */
  undesired: boolean;
  /** When the last sync ended: the next one needs a runtime status observed after it. */
  lastSyncTime: number;
  /** The status the kill read after stopping everything, for the cleanup that follows. */
  stoppedStatus: PodRuntimeStatus | undefined;
  retryTimer: { cancel(): void } | undefined;
}

export interface PodWorkersOptions {
  syncer: PodSyncer;
  cache: PodStatusCache;
  resyncIntervalMs: number;
  clock?: Clock;
  backOffMs?: number;
  terminationRetryMs?: number;
}

function fullName(pod: Pod | undefined, running: RunningPod | undefined): string {
  return buildPodFullName(
    pod?.metadata?.name ?? running?.name ?? '?',
    pod?.metadata?.namespace ?? running?.namespace ?? '?',
  );
}

/** upstream isPodStatusCacheTerminal: nothing running and no ready sandbox. */
function cacheShowsNothingRunning(cache: PodStatusCache, uid: string): boolean {
  const status = cache.get(uid)?.status;
  if (!status) return false;
  return !status.containerStatuses.some((c) => c.state === 'running') && !status.sandboxStatuses.some((s) => s.ready);
}

function raceAbort<T>(
  work: Promise<T>,
  signal: AbortSignal,
): Promise<{ aborted: true } | { aborted: false; value: T }> {
  if (signal.aborted) return Promise.resolve({ aborted: true });
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve({ aborted: true });
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ aborted: false, value });
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

class PodWorkersImpl implements PodWorkers {
  private readonly workers = new Map<string, Worker>();
  /** syncKnownPods ran at least once (upstream podsSynced). */
  private podsSynced = false;
  private readonly queue: WorkQueue;
  private readonly clock: Clock;
  /** Loops and abandoned kills still running (idle() waits for both). */
  private readonly outstanding = new Set<Promise<unknown>>();
  /** upstream startedStaticPodsByFullname / waitingToStartStaticPodsByFullname. */
  private readonly startedStatic = new Map<string, string>();
  private readonly waitingStatic = new Map<string, string[]>();

  constructor(private readonly opts: PodWorkersOptions) {
    this.clock = opts.clock ?? realClock;
    this.queue = new WorkQueue(this.clock);
  }

  // ---- UpdatePod: decide (states.ts), then apply ---------------------------------------------

  updatePod(update: UpdatePodOptions): void {
    const uid = update.pod?.metadata?.uid ?? update.runningPod?.uid;
    if (!uid) return;
    let w = this.workers.get(uid);
    if (!w) {
      if (!update.pod && update.updateType !== 'kill') {
        log('podworkers').info(
          { uid, updateType: update.updateType },
          'Pod update is ignored, runtime pods can only be killed',
        );
        return;
      }
      w = this.newWorker(uid, update);
      if (w.state === 'terminated') {
        // Seen for the first time, already terminal: only the cleanup runs.
        this.logTransition(w, 'syncing', 'terminated', 'pod is terminal and nothing runs');
        this.queueWork(w, update.updateType);
        return;
      }
    }
    if (!update.pod && update.updateType === 'kill') w.observedRuntime = true;
    const view = this.view(w);
    const decision = HANDLERS[w.state].onUpdate(view, update);
    switch (decision.kind) {
      case 'ignore':
        log('podworkers').debug(
          { pod: w.fullname, uid, state: w.state, updateType: update.updateType, why: decision.why },
          'Pod update ignored',
        );
        if (w.state === 'terminated' || w.state === 'finished') update.killPodOptions?.onTerminated?.();
        return;
      case 'restart-requested':
        log('podworkers').info(
          { pod: w.fullname, uid },
          'Pod is terminating but has been requested to restart with same UID, will start again once terminated',
        );
        w.restartRequested = true;
        w.restartPod = update.pod ?? w.restartPod;
        return;
      case 'new-incarnation':
        log('podworkers').info(
          { pod: w.fullname, uid },
          'Pod with a finished worker created again: starting a new worker',
        );
        this.forget(w);
        this.updatePod(update);
        return;
      case 'accept':
        break;
    }
    if (update.pod) w.pod = update.pod;
    if (update.runningPod && !w.pod) w.runningPod = update.runningPod;
    // The restart runs the newest spec sent after the create (upstream re-reads the pod manager).
    if (w.restartRequested && update.pod && !decision.cancelsRestart) w.restartPod = update.pod;
    if (decision.cancelsRestart && w.restartRequested) {
      w.restartRequested = false;
      w.restartPod = undefined;
    }
    if (decision.gracePeriod !== undefined) w.gracePeriod = decision.gracePeriod;
    if (decision.to === 'terminating' || decision.to === 'terminated')
      this.collectKillOptions(w, update.killPodOptions);
    else if (update.killPodOptions?.onTerminated) {
      // Kill options mean nothing outside termination (upstream closes CompletedCh at once).
      update.killPodOptions.onTerminated();
    }
    if (decision.to !== w.state) {
      this.move(w, decision.to, decision.cause ?? w.cause);
      w.cause ??= decision.cause;
    } else if (decision.to === 'terminating' && decision.preempt) {
      log('podworkers').info(
        { pod: w.fullname, uid, gracePeriod: w.gracePeriod },
        'Grace period shortened: restarting the kill with the shorter grace period',
      );
    }
    // Abort the work in flight before queueing: the loop may start the new work synchronously.
    if (decision.preempt && w.inflight && !w.inflight.abort.signal.aborted) {
      log('podworkers').debug({ pod: w.fullname, uid, inflight: w.inflight.state }, 'Cancelling current pod work');
      w.inflight.abort.abort();
    }
    this.queueWork(w, update.updateType);
  }

  private newWorker(uid: string, u: UpdatePodOptions): Worker {
    const state = initialState(u, cacheShowsNothingRunning(this.opts.cache, uid));
    const w: Worker = {
      uid,
      fullname: fullName(u.pod, u.runningPod),
      state,
      pod: u.pod,
      runningPod: u.pod ? undefined : u.runningPod,
      static: isStaticPod(u.pod),
      cause: state === 'terminated' ? 'terminal-phase' : undefined,
      gracePeriod: undefined,
      statusFns: [],
      onTerminated: [],
      restartRequested: false,
      restartPod: undefined,
      pending: undefined,
      working: false,
      inflight: undefined,
      started: false,
      observedRuntime: false,
      undesired: false,
      lastSyncTime: 0,
      stoppedStatus: undefined,
      retryTimer: undefined,
    };
    this.workers.set(uid, w);
    if (w.static) this.waitingStatic.set(w.fullname, [...(this.waitingStatic.get(w.fullname) ?? []), uid]);
    return w;
  }

  private view(w: Worker): WorkerView {
    return { state: w.state, pod: w.pod, gracePeriod: w.gracePeriod, orphan: w.pod === undefined };
  }

  private collectKillOptions(w: Worker, kill: KillPodOptions | undefined): void {
    if (kill?.statusFn) w.statusFns.push(kill.statusFn);
    if (kill?.onTerminated) {
      if (w.state === 'terminated' || w.state === 'finished') kill.onTerminated();
      else w.onTerminated.push(kill.onTerminated);
    }
  }

  /** The one place a worker changes state: the edge must be declared in states.ts. */
  private move(w: Worker, to: PodWorkerState, cause: TerminationCause | undefined): void {
    const from = w.state;
    if (from === to) return;
    if (!isAllowedEdge(from, to)) throw new Error(`pod worker ${w.uid}: illegal transition ${from} → ${to}`);
    w.state = to;
    this.logTransition(w, from, to, cause);
  }

  private logTransition(w: Worker, from: PodWorkerState, to: PodWorkerState, cause: string | undefined): void {
    log('podworkers').info(
      { pod: w.fullname, uid: w.uid, from, to, cause, gracePeriod: to === 'terminating' ? w.gracePeriod : undefined },
      'Pod worker state changed',
    );
  }

  /** Coalesce: a pending create stays a create; the loop reads the state for the kind of work. */
  private queueWork(w: Worker, updateType: UpdateType): void {
    w.pending = { updateType: w.pending?.updateType === 'create' ? 'create' : updateType };
    this.queue.remove(w.uid);
    w.retryTimer?.cancel();
    w.retryTimer = undefined;
    this.kick(w);
  }

  private kick(w: Worker): void {
    if (w.working || !w.pending || this.workers.get(w.uid) !== w) return;
    w.working = true;
    let blocked = false;
    const loop = this.loop(w)
      .then((b) => {
        blocked = b;
      })
      .catch((err: unknown) =>
        log('podworkers').error({ pod: w.fullname, uid: w.uid, err: errorMessage(err) }, 'Pod worker loop failed'),
      )
      .finally(() => {
        w.working = false;
        this.outstanding.delete(loop);
        // An update may have landed between the loop's last check and its end.
        if (!blocked && w.pending && w.state !== 'finished') this.kick(w);
      });
    this.outstanding.add(loop);
  }

  // ---- the loop: one piece of work at a time --------------------------------------------------

  /** Runs the pending work until there is none; true when a static predecessor blocks the start. */
  private async loop(w: Worker): Promise<boolean> {
    while (w.pending && w.state !== 'finished' && this.workers.get(w.uid) === w) {
      if (w.state !== 'syncing' && finishesWithoutWork(w)) {
        this.finishUnstarted(w);
        return false;
      }
      if (w.state === 'syncing' && !this.allowStart(w)) {
        log('podworkers').debug(
          { pod: w.fullname, uid: w.uid },
          'Static pod waits for the previous instance with the same full name to finish',
        );
        return true; // kicked again when the blocker finishes
      }
      const work = w.pending;
      w.pending = undefined;
      await this.runOnce(w, work.updateType);
    }
    return false;
  }

  private async runOnce(w: Worker, updateType: UpdateType): Promise<void> {
    const state = w.state;
    const abort = new AbortController();
    w.inflight = { state, abort };
    const ctx = { signal: abort.signal };
    const startedAt = this.clock.now();
    // upstream SyncPodType names: create/update/sync; a kill and its final cleanup are 'kill'.
    const operation = state === 'syncing' ? updateType : 'kill';
    try {
      const work = this.doWork(w, state, updateType, ctx);
      let done: WorkDone | undefined;
      if (state === 'terminating') {
        // A kill may be superseded by a shorter one: stop awaiting it, let it finish alone.
        const r = await raceAbort(work, abort.signal);
        if (r.aborted) {
          this.abandon(w, work);
          return;
        }
        done = r.value;
      } else {
        done = await work;
      }
      metrics.podWorkerDuration.observe({ operation_type: operation }, (this.clock.now() - startedAt) / 1000);
      if (done) this.complete(w, done);
    } catch (err) {
      if (state === 'syncing' && abort.signal.aborted) {
        log('podworkers').debug({ pod: w.fullname, uid: w.uid, err: errorMessage(err) }, 'Sync cancelled by a kill');
        return;
      }
      this.failed(w, state, updateType, err);
    } finally {
      if (w.inflight?.abort === abort) w.inflight = undefined;
    }
  }

  /** The work of one state; undefined when a sync was overtaken before it began. */
  private async doWork(
    w: Worker,
    state: PodWorkerState,
    updateType: UpdateType,
    ctx: { signal: AbortSignal },
  ): Promise<WorkDone | undefined> {
    const syncer = this.opts.syncer;
    switch (state) {
      case 'syncing': {
        // Act only on a runtime status observed after our previous sync (upstream GetNewerThan).
        const cached = await this.opts.cache.getNewerThan(w.uid, w.lastSyncTime, ctx.signal);
        if (ctx.signal.aborted || w.state !== 'syncing') return undefined; // a kill arrived: it is pending
        // The PLEG could not read the pod's status: syncing on no status would create a second
        // sandbox beside the live one. Fail and back off until a read succeeds (upstream).
        if (cached.error)
          throw new KubeletError('KTS_ERR_CRI', `error determining status: ${errorMessage(cached.error)}`, {
            cause: cached.error,
          });
        w.started = true;
        let result: SyncPodResult;
        try {
          result = await syncer.syncPod(ctx, updateType, w.pod!, cached.status);
        } finally {
          // The next sync (or kill) acts only on a status observed after this one ended, failed or
          // cancelled included (upstream): a relist during it may predate the containers it created.
          w.lastSyncTime = this.clock.now();
        }
        if (result.postSync) this.onceClockPasses(w.lastSyncTime, result.postSync);
        if (!result.isTerminal && w.state === 'syncing')
          this.queue.enqueue(w.uid, result.requeueAfterMs ?? this.jitter(this.opts.resyncIntervalMs));
        return { state: 'syncing', isTerminal: result.isTerminal };
      }
      case 'terminating': {
        // A status observed after the last sync ended lists every container the kill must stop
        // (upstream acts on it, waiting for the next relist when there is none). No wait here:
        // without one, the syncer reads a fresh status itself, so the kill starts at once.
        if (w.pod) {
          const cached = this.opts.cache.newerThan(w.uid, w.lastSyncTime);
          const known = cached?.error ? undefined : cached?.status;
          const stopped = await syncer.syncTerminatingPod(ctx, w.pod, known, {
            gracePeriodSeconds: w.gracePeriod ?? effectiveDefault(w.pod),
            statusFn: this.statusFn(w),
          });
          w.stoppedStatus = stopped ?? undefined;
        } else if (w.runningPod) await syncer.syncTerminatingRuntimePod(ctx, w.runningPod);
        w.lastSyncTime = this.clock.now();
        return { state: 'terminating' };
      }
      case 'terminated': {
        // Only a status observed after the kill: a newer cached one, else the one the kill read
        // after stopping everything (once: a retry reads afresh), else none and the syncer reads one.
        const cached = this.opts.cache.get(w.uid);
        const stopped = w.stoppedStatus;
        w.stoppedStatus = undefined;
        if (w.pod)
          await syncer.syncTerminatedPod(
            ctx,
            w.pod,
            cached && cached.modified > w.lastSyncTime ? cached.status : stopped,
          );
        return { state: 'terminated' };
      }
      case 'finished':
        return undefined;
    }
  }

  private statusFn(w: Worker): PodStatusFunc | undefined {
    if (w.statusFns.length === 0) return undefined;
    const fns = [...w.statusFns];
    return (status) => {
      for (const fn of fns) fn(status);
    };
  }

  private abandon(w: Worker, work: Promise<unknown>): void {
    log('podworkers').info(
      { pod: w.fullname, uid: w.uid, gracePeriod: w.gracePeriod },
      'Kill superseded by a shorter grace period; not waiting for it',
    );
    const tail = work
      .catch((err: unknown) =>
        log('podworkers').debug(
          { pod: w.fullname, uid: w.uid, err: errorMessage(err) },
          'Superseded kill ended with an error',
        ),
      )
      .finally(() => this.outstanding.delete(tail));
    this.outstanding.add(tail);
  }

  /** A state's work succeeded: take the transition states.ts declares. */
  private complete(w: Worker, done: WorkDone): void {
    if (this.workers.get(w.uid) !== w || w.state !== done.state) return; // overtaken meanwhile (a kill during a sync)
    const next = HANDLERS[done.state].onWorkDone(this.view(w), done);
    if (next.to === w.state) return;
    if (next.gracePeriod !== undefined) w.gracePeriod = next.gracePeriod;
    w.cause ??= next.cause;
    this.move(w, next.to, next.cause ?? w.cause);
    switch (next.to) {
      case 'terminating':
      case 'terminated':
        if (next.to === 'terminated') for (const cb of w.onTerminated.splice(0)) cb();
        // Go on to the next state at once (upstream requeues a synthetic update).
        w.pending ??= { updateType: 'sync' };
        this.queue.remove(w.uid);
        return;
      case 'finished':
        for (const cb of w.onTerminated.splice(0)) cb();
        this.finish(w);
        return;
    }
  }

  /** Termination requested before the pod ever started: nothing ran, so nothing to stop or clean up. */
  private finishUnstarted(w: Worker): void {
    log('podworkers').info(
      { pod: w.fullname, uid: w.uid },
      'Static pod terminated before it started: no kill, no cleanup',
    );
    this.move(w, 'finished', w.cause);
    for (const cb of w.onTerminated.splice(0)) cb();
    this.finish(w);
  }

  private finish(w: Worker): void {
    w.pending = undefined;
    this.queue.remove(w.uid);
    this.releaseStaticSlot(w);
    if (w.pod === undefined) {
      // A runtime-only pod is transient: nothing to remember once its containers are gone.
      this.workers.delete(w.uid);
    }
    if (w.restartRequested && w.restartPod) {
      const pod = w.restartPod;
      log('podworkers').info({ pod: w.fullname, uid: w.uid }, 'Pod terminated; starting it again as requested');
      this.forget(w);
      this.updatePod({ updateType: 'create', pod });
    }
  }

  /**
   * Runs fn once the clock reads later than t. The clock counts whole milliseconds: a relist that
   * postSync starts in the millisecond the sync ended is not newer than the sync (GetNewerThan is
   * strict), so the worker sat until the next periodic relist, up to 1 s: the manifest → Running
   * tail of issue 30 (p50 440 ms, p99 1.5 s on containerd 1.6, which sends no events).
   */
  private onceClockPasses(t: number, fn: () => void): void {
    const run = () => void (this.clock.now() > t ? fn() : this.clock.setTimeout(run, 1));
    this.clock.setTimeout(run, 1);
  }

  private failed(w: Worker, state: PodWorkerState, updateType: UpdateType, err: unknown): void {
    log('podworkers').error(
      { pod: w.fullname, uid: w.uid, state, err: errorMessage(err) },
      'Error syncing pod, skipping',
    );
    if (state === 'syncing') {
      this.queue.enqueue(w.uid, this.jitter(this.opts.backOffMs ?? WORKER_BACKOFF_MS));
      return;
    }
    // Termination and cleanup must complete even for pods nobody will sync again (orphans).
    w.retryTimer?.cancel();
    w.retryTimer = this.clock.setTimeout(() => {
      w.retryTimer = undefined;
      if (this.workers.get(w.uid) !== w || w.state === 'finished') return;
      w.pending ??= { updateType };
      this.kick(w);
    }, this.opts.terminationRetryMs ?? TERMINATION_RETRY_MS);
  }

  // ---- static pods: one instance per full name at a time (upstream allowStaticPodStart) -----

  private allowStart(w: Worker): boolean {
    if (!w.static || w.started) return true;
    const startedUid = this.startedStatic.get(w.fullname);
    if (startedUid !== undefined) return startedUid === w.uid;
    const waiting = this.waitingStatic.get(w.fullname) ?? [];
    let i = 0;
    for (; i < waiting.length; i++) {
      const other = this.workers.get(waiting[i]!);
      if (!other || other.state !== 'syncing') continue;
      if (other !== w) {
        this.waitingStatic.set(w.fullname, waiting.slice(i));
        return false;
      }
      break;
    }
    const rest = waiting.slice(i + 1);
    if (rest.length > 0) this.waitingStatic.set(w.fullname, rest);
    else this.waitingStatic.delete(w.fullname);
    this.startedStatic.set(w.fullname, w.uid);
    return true;
  }

  private releaseStaticSlot(w: Worker): void {
    if (this.startedStatic.get(w.fullname) === w.uid) this.startedStatic.delete(w.fullname);
    // Wake the successors waiting for this full name.
    for (const uid of this.waitingStatic.get(w.fullname) ?? []) {
      const other = this.workers.get(uid);
      if (other) this.kick(other);
    }
  }

  private forget(w: Worker): void {
    w.retryTimer?.cancel();
    this.queue.remove(w.uid);
    if (this.workers.get(w.uid) === w) this.workers.delete(w.uid);
    const waiting = this.waitingStatic.get(w.fullname)?.filter((uid) => uid !== w.uid);
    if (waiting && waiting.length > 0) this.waitingStatic.set(w.fullname, waiting);
    else this.waitingStatic.delete(w.fullname);
    this.releaseStaticSlot(w);
  }

  private jitter(ms: number): number {
    return ms + Math.random() * ms * 0.5;
  }

  // ---- queries ----------------------------------------------------------------------------------

  isPodTerminationRequested(uid: string): boolean {
    const w = this.workers.get(uid);
    return w !== undefined && w.state !== 'syncing';
  }

  isPodKnownTerminated(uid: string): boolean {
    const w = this.workers.get(uid);
    return w !== undefined && (w.state === 'terminated' || w.state === 'finished');
  }

  couldHaveRunningContainers(uid: string): boolean {
    const w = this.workers.get(uid);
    // An unknown UID: false even before the first syncKnownPods (upstream: true until then). The
    // sync tick asks this to skip pods without a worker, such as rejected ones: they must not start.
    return w !== undefined && (w.state === 'syncing' || w.state === 'terminating');
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    const w = this.workers.get(uid);
    if (!w) return this.podsSynced;
    // upstream counts every pod no longer desired, runtime-only ones included, as deleted.
    const deleted = w.cause === 'deleted' || w.cause === 'orphaned' || w.undesired;
    return w.cause === 'evicted' || (deleted && (w.state === 'terminated' || w.state === 'finished'));
  }

  syncKnownPods(desired: readonly Pod[]): Map<string, PodWorkerState> {
    this.podsSynced = true;
    const want = new Set(desired.map((p) => p.metadata?.uid));
    const out = new Map<string, PodWorkerState>();
    for (const [uid, w] of [...this.workers]) {
      const orphan = !want.has(uid);
      const finished = w.state === 'finished' && (orphan || w.restartRequested) && !w.working;
      // A static pod still waiting for its turn and no longer desired never ran: nothing to stop.
      // (Its loop may just have been woken to check its turn again; only work in flight matters.)
      const neverStarted = orphan && w.state === 'syncing' && finishesWithoutWork(w) && !w.inflight;
      if (finished || neverStarted) {
        // Forgotten: a pod still desired (restart requested) is created afresh by the caller.
        this.forget(w);
        continue;
      }
      if (orphan) w.undesired = true;
      if (orphan && w.state === 'syncing' && w.pod) {
        // No longer desired and nobody told us: terminate it (upstream removeTerminatedWorker).
        this.updatePod({ updateType: 'kill', pod: w.pod, killPodOptions: { reason: 'no longer desired' } });
      }
      out.set(uid, w.state);
    }
    return out;
  }

  terminatePodAbnormally(pod: Pod, opts: KillPodOptions): Promise<void> {
    const grace = opts.gracePeriodSeconds ?? podTerminationGracePeriodSeconds(pod);
    const timeoutMs = Math.max(10, grace + Math.floor(grace / 2)) * 1000;
    return new Promise<void>((resolve, reject) => {
      const timer = this.clock.setTimeout(
        () =>
          reject(
            new KubeletError(
              'KTS_ERR_POD_KILL_TIMEOUT',
              `timeout waiting to terminate pod ${fullName(pod, undefined)} abnormally: not terminated within ${timeoutMs / 1000} s (its grace period and half again); its pod worker keeps trying`,
            ),
          ),
        timeoutMs,
      );
      this.updatePod({
        updateType: 'kill',
        pod,
        killPodOptions: {
          ...opts,
          onTerminated: () => {
            timer.cancel();
            opts.onTerminated?.();
            resolve();
          },
        },
      });
    });
  }

  takeDueForSync(): string[] {
    return this.queue.takeReady();
  }

  async idle(): Promise<void> {
    while (this.outstanding.size > 0) await Promise.allSettled([...this.outstanding]);
  }
}

function effectiveDefault(pod: Pod): number {
  return Math.max(1, podTerminationGracePeriodSeconds(pod));
}

export function createPodWorkers(opts: PodWorkersOptions): PodWorkers {
  return new PodWorkersImpl(opts);
}
