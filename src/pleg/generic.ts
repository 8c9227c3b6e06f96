/**
 * Generic PLEG (upstream GenericPLEG), with our hot path and event-driven triggers:
 *
 *  1. ListPodSandbox and ListContainers in parallel, as raw protobuf bytes;
 *  2. one call to the RelistDiffer (C++ or its TypeScript twin) decodes the few fields it needs,
 *     diffs against the previous relist it retains, and returns only the events;
 *  3. pods with events (or whose last inspection failed) are inspected in parallel, with a
 *     bound, and the status cache is updated; then the events are emitted.
 *
 * A pod whose inspection fails gets no events from that relist (upstream "Ignoring events for
 * pod"): its cache entry holds the error, so its worker fails the sync and backs off instead of
 * acting on a status it does not have (an empty one would start a second sandbox beside the live
 * one), and its old record is kept so the events come again once an inspection succeeds.
 *
 * Relists run every period (1 s) as the safety net, and at once when the runtime sends a CRI
 * container event other than a stop (CriEventTrigger; containerd 1.6 does not offer them) or when
 * the kubelet asks after changing the runtime. Concurrent requests coalesce into one more relist.
 *
 * An exit is reported by the runtime itself: its CONTAINER_STOPPED_EVENT, which carries the
 * statuses of every container of the sandbox, or, when a container's cgroup reports its last
 * process gone (CgroupExitWatcher), the ContainerStatus that shows the exit recorded. That report
 * is written into the pod's cached status (upstream's evented PLEG writes events to its cache)
 * and ContainerDied is sent at once for the pod's containers that were running and now are
 * exited. Then the exit relists only its pod (upstream relistPod, gate PLEGOnDemandRelist, after
 * 1.35), whose inspection replaces the patch; the next full relist's ContainerDied for them is
 * dropped. No inspection, node-wide list, or wait for a relist already running sits between the
 * runtime's report and the event (issue 30: docs/perf-log.md).
 *
 * Exits the kubelet causes itself are not confirmed: while it kills a pod (expectPodStop) the
 * pod's cgroup exits wait, and the status its kill reads afterwards (podStopped) is cached and
 * sends the ContainerDied, as a pod relist would (a stop event meanwhile is written, but the pod
 * relist after it is left to that read). The runtime has recorded an exit once
 * StopContainer returns, so polling for it only doubled the kill's own calls (issue 30: a
 * 100-pod delete). A kill that fails hands its exits back to the confirmation.
 */
import { metrics } from '../metrics/index.js';
import type { PodRuntimeStatus, Runtime, RuntimeExitReport } from '../kuberuntime/types.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../errors.js';
import type { RelistDiffer, RelistEvent, RelistPodInfo } from './relist-types.js';
import type { CgroupExitWatcher } from './cgroup-exit-watcher.js';
import type { ContainerEvent, ContainerStatus } from '../cri/types.js';
import { CriEventTrigger, type SubscribeContainerEvents } from './cri-events.js';
import type { CriEventsState, PodLifecycleEvent, PodLifecycleEventGenerator, PodStatusCache } from './types.js';
import { klogRef } from '../api/pod.js';

/** Upstream's relistThreshold: a relist older than this makes the PLEG unhealthy. */
export const RELIST_THRESHOLD_MS = 3 * 60_000;
/** Pod status inspections running at once. */
const INSPECT_CONCURRENCY = 10;
/**
 * After a cgroup says a container exited, the runtime records the exit only later (containerd
 * first deletes the task: ~50 ms, much more under load; bench/pleg-runtimes.ts measures it). We
 * ask the runtime about just those containers every EXIT_CONFIRM_INTERVAL_MS and relist the
 * moment one shows as exited, so the event follows the runtime's own first report closely
 * without relisting in a loop. After EXIT_CONFIRM_LIMIT_MS the periodic relist takes over.
 */
const EXIT_CONFIRM_INTERVAL_MS = 5;
const EXIT_CONFIRM_LIMIT_MS = 2000;
/**
 * While the runtime's CRI events flow, its CONTAINER_STOPPED_EVENT comes with its first report of
 * the exit, so the status calls above would only add load to the runtime and this loop (they
 * lengthened the exit path's tail on 1.7 and 2.x: docs/perf-log.md, issue 30). They start only if
 * the event has not come this long after the cgroup emptied: containerd 1.7 hands each event to
 * one subscriber only (containerd#7318), so a second client on the node can take ours.
 */
const EXIT_CONFIRM_EVENT_GRACE_MS = 250;
/** Status calls per round, oldest exits first: a mass exit must not flood the runtime. */
const EXIT_CONFIRM_BATCH = 8;

/** The raw list calls (src/cri's listPodSandboxRaw / listContainersRaw). */
export interface RawRelistSource {
  listRaw(): Promise<{ sandboxes: Buffer; containers: Buffer }>;
  /**
   * Whether the runtime has recorded the container's exit yet: false while it runs, else its
   * ContainerStatus, or true when there is none (removed, or a test source). Absent (test
   * sources): a cgroup exit relists once.
   */
  containerExited?(containerId: string): Promise<boolean | ContainerStatus>;
}

export interface GenericPlegOptions {
  /** For GetPodStatus of pods with events. */
  runtime: Runtime;
  source: RawRelistSource;
  differ: RelistDiffer;
  cache: PodStatusCache;
  relistPeriodMs?: number;
  clock?: Clock;
  /** Event-driven trigger; built with the PLEG's exit callback. Absent = periodic only. */
  createExitWatcher?: (onExit: (podUid: string, containerId: string) => void) => CgroupExitWatcher;
  /** CRI GetContainerEvents; each event triggers a relist. Absent or Unimplemented = not used. */
  subscribeContainerEvents?: SubscribeContainerEvents;
}

async function forEachBounded<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

class GenericPLEG implements PodLifecycleEventGenerator {
  private readonly clock: Clock;
  private readonly period: number;
  private readonly listeners = new Set<(e: PodLifecycleEvent) => void>();
  private readonly exitWatcher: CgroupExitWatcher | undefined;
  private readonly criEvents: CriEventTrigger | undefined;
  /** Name/namespace of every pod seen, for re-inspection after the pod left the list. */
  private readonly podInfo = new Map<string, RelistPodInfo>();
  private needsReinspection = new Set<string>();
  /** Containers a cgroup reported exited that the runtime has not shown as exited yet. */
  private readonly pendingExits = new Map<string, { at: number; podUid: string; from: number }>();
  /** Running containers (id → pod uid) as the events sent say: a pod relist reports only their exits. */
  private readonly runningContainers = new Map<string, string>();
  /** Containers whose ContainerDied a pod relist sent; the full relist's own one is dropped. */
  private readonly diedSent = new Set<string>();
  /** Pods the kubelet is stopping (expectPodStop): kills in progress, cgroup exits seen meanwhile. */
  private readonly stopping = new Map<string, { kills: number; exits: Set<string> }>();
  /** Pod relists in flight; `again`: one more was asked for meanwhile. */
  private readonly podRelists = new Map<string, { again: boolean }>();
  private confirmTimer: { cancel(): void } | undefined;
  private lastRelistStart = 0;
  /** End of the last successful relist; undefined until the first one (upstream relistTime). */
  private lastRelistDone: number | undefined;
  private timer: { cancel(): void } | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly opts: GenericPlegOptions) {
    this.clock = opts.clock ?? realClock;
    this.period = opts.relistPeriodMs ?? 1000;
    this.exitWatcher = opts.createExitWatcher?.((podUid, cid) => this.onCgroupExit(podUid, cid));
    if (opts.subscribeContainerEvents)
      this.criEvents = new CriEventTrigger(opts.subscribeContainerEvents, (e) => this.onCriEvent(e), this.clock);
  }

  start(): void {
    this.stopped = false;
    this.criEvents?.start();
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.confirmTimer?.cancel();
    this.exitWatcher?.close();
    this.criEvents?.stop();
  }

  criEventsState(): CriEventsState | undefined {
    return this.criEvents?.state();
  }

  watch(listener: (e: PodLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** upstream GenericPLEG.Healthy: unhealthy until the first relist succeeds, and when the last one is older than the threshold. */
  healthy(): { ok: boolean; message?: string } {
    if (this.lastRelistDone === undefined) return { ok: false, message: 'pleg has yet to be successful' };
    const age = this.clock.now() - this.lastRelistDone;
    if (age > RELIST_THRESHOLD_MS)
      return {
        ok: false,
        message: `pleg was last seen active ${Math.round(age / 1000)}s ago; threshold is ${RELIST_THRESHOLD_MS / 1000}s`,
      };
    return { ok: true };
  }

  /** Relists are serialised; a request during a relist runs one more right after it. */
  relist(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.doRelist().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.relist();
      }
    });
    return this.running;
  }

  private tick(): void {
    if (this.stopped) return;
    void this.relist().finally(() => {
      if (!this.stopped) this.timer = this.clock.setTimeout(() => this.tick(), this.period);
    });
  }

  /**
   * upstream's evented PLEG as a hint (pkg/kubelet/pleg/evented.go processCRIEvents): a stopped
   * container's pod is relisted at once. Upstream hints only unexpected terminations; every exit
   * here, as the cgroup trigger does. Other events relist the node (a start's ContainerStarted).
   */
  private onCriEvent(e: ContainerEvent): void {
    const uid = e.type === 'CONTAINER_STOPPED_EVENT' ? e.podSandboxStatus?.metadata?.uid : undefined;
    if (!uid) return void this.relist();
    const report = { containers: e.containersStatuses, sandbox: e.podSandboxStatus };
    void this.exitReported(uid, report, this.eventTime(uid, e));
  }

  /**
   * The runtime reported an exit: its statuses are written into the pod's cached status, and
   * ContainerDied sent, with no inspection on the way. A patch is stamped as at least as new as
   * the cached status it was made from (every container that status lacks was created after it),
   * or `reportedAt` when later (eventTime). A pod worker that synced after that stamp waits for a
   * newer status, so it never acts on one that lacks a container it created: the pod relist that
   * follows gives it one (and stands in when the report names nothing the cache holds).
   */
  private async exitReported(uid: string, report: RuntimeExitReport, reportedAt?: number): Promise<void> {
    const entry = this.opts.cache.get(uid);
    const patched =
      entry?.status && (await this.opts.runtime.patchPodStatus(entry.status, report).catch(() => undefined));
    if (patched) this.applyPodStatus(uid, patched, Math.max(entry!.modified, reportedAt ?? -Infinity));
    if (!this.stopping.has(uid)) this.requestPodRelist(uid); // a kill reads the pod when it ends
  }

  /**
   * A stop event is an observation of the moment its container exited (`finishedAt`): the
   * runtime gathered the statuses after it, so every container of the sandbox created before
   * then is in them. That holds for the pod only if the sandbox is its newest and ready: a newer
   * sandbox replaces one only after stopping it, and the event does not list the newer one's
   * containers. undefined: no such claim.
   */
  private eventTime(uid: string, e: ContainerEvent): number | undefined {
    const exited = e.containersStatuses.find((c) => c.id === e.containerId);
    const finishedAt = exited?.state === 'CONTAINER_EXITED' ? Number(exited.finishedAt / 1_000_000n) : 0;
    const newest = this.opts.cache.get(uid)?.status?.sandboxStatuses[0]?.id;
    const sandbox = e.podSandboxStatus;
    if (finishedAt <= 0 || sandbox?.id !== newest || sandbox?.state !== 'SANDBOX_READY') return undefined;
    return finishedAt;
  }

  /** See PodLifecycleEventGenerator.expectPodStop. */
  expectPodStop(uid: string): void {
    const s = this.stopping.get(uid);
    if (s) s.kills++;
    else this.stopping.set(uid, { kills: 1, exits: new Set() });
  }

  /**
   * See PodLifecycleEventGenerator.podStopped. The exits the status shows are settled (a sandbox's
   * pause container too: its ContainerDied comes with the next relist, as after a pod relist); the
   * others wait for the pod's last kill to end, then are confirmed as any cgroup exit.
   */
  podStopped(uid: string, stopped?: { status: PodRuntimeStatus; observed: number }): void {
    const s = this.stopping.get(uid);
    if (stopped && !this.stopped) {
      this.applyPodStatus(uid, stopped.status, stopped.observed);
      for (const c of stopped.status.containerStatuses) if (c.state === 'exited') s?.exits.delete(c.id);
      for (const sb of stopped.status.sandboxStatuses) if (!sb.ready) s?.exits.delete(sb.id);
    }
    if (!s || --s.kills > 0) return;
    this.stopping.delete(uid);
    for (const cid of s.exits) if (this.runningContainers.has(cid)) this.onCgroupExit(uid, cid);
  }

  private onCgroupExit(podUid: string, containerId: string): void {
    // The kubelet is stopping it: its kill reads the pod's status right after (podStopped).
    const stopping = this.stopping.get(podUid);
    if (stopping) return void stopping.exits.add(containerId);
    if (!this.opts.source.containerExited) return void this.relist();
    const at = this.clock.now();
    const grace = this.criEvents?.state() === 'active' ? EXIT_CONFIRM_EVENT_GRACE_MS : 0;
    this.pendingExits.set(containerId, { at, podUid, from: at + grace });
    this.scheduleExitConfirm(grace);
  }

  private scheduleExitConfirm(delay: number): void {
    if (this.confirmTimer || this.stopped) return;
    this.confirmTimer = this.clock.setTimeout(() => {
      this.confirmTimer = undefined;
      void this.confirmExits();
    }, delay);
  }

  /** One round of per-container status calls; a relist as soon as the runtime shows an exit. */
  private async confirmExits(): Promise<void> {
    const now = this.clock.now();
    const ids = [...this.pendingExits]
      .filter(([cid, p]) => {
        if (now - p.from > EXIT_CONFIRM_LIMIT_MS) this.pendingExits.delete(cid); // the periodic relist will see it
        return now - p.from <= EXIT_CONFIRM_LIMIT_MS && p.from <= now;
      })
      .slice(0, EXIT_CONFIRM_BATCH)
      .map(([cid]) => cid);
    const exited = await Promise.all(ids.map((cid) => this.opts.source.containerExited!(cid).catch(() => false)));
    const pods = new Map<string, ContainerStatus[]>();
    for (const [i, cid] of ids.entries()) {
      const pending = this.pendingExits.get(cid);
      const report = exited[i];
      if (!report || !pending) continue;
      this.pendingExits.delete(cid);
      const statuses = pods.get(pending.podUid) ?? [];
      pods.set(pending.podUid, report === true ? statuses : [...statuses, report]);
    }
    for (const [uid, containers] of pods)
      if (containers.length > 0) void this.exitReported(uid, { containers });
      else this.requestPodRelist(uid);
    if (this.pendingExits.size === 0) return;
    const next = Math.min(...[...this.pendingExits.values()].map((p) => p.from)) - this.clock.now();
    this.scheduleExitConfirm(Math.max(EXIT_CONFIRM_INTERVAL_MS, next));
  }

  private async doRelist(): Promise<void> {
    const start = this.clock.now();
    const previous = this.lastRelistStart;
    if (previous) metrics.plegRelistInterval.observe((start - previous) / 1000);
    this.lastRelistStart = start;
    let events: RelistEvent[];
    try {
      const { sandboxes, containers } = await this.opts.source.listRaw();
      // Upstream keeps a pod's old record when its inspection failed, so its events recur.
      if (this.needsReinspection.size > 0) this.opts.differ.keepPrevious(this.needsReinspection);
      const result = this.opts.differ.diff(sandboxes, containers);
      events = result.events;
      for (const [uid, info] of result.pods) this.podInfo.set(uid, info);
      metrics.runningPods.set(result.counts.runningPods);
      for (const [state, n] of Object.entries(result.counts.containers))
        metrics.runningContainers.set({ container_state: state }, n);
    } catch (err) {
      log('pleg').error({ err: errorMessage(err) }, 'GenericPLEG: unable to retrieve pods');
      return;
    }
    const toInspect = new Set(this.needsReinspection);
    for (const e of events) if (!toInspect.has(e.podId) && !this.cacheShows(e, previous)) toInspect.add(e.podId);
    for (const e of events) {
      const cached = toInspect.has(e.podId) ? undefined : this.opts.cache.get(e.podId)?.status;
      if (cached) this.forgetIfGone(e.podId, cached);
    }
    this.needsReinspection = new Set();
    await forEachBounded([...toInspect], INSPECT_CONCURRENCY, (uid) => this.inspect(uid, start));
    this.opts.cache.updateTime(start);
    const done = this.clock.now();
    this.lastRelistDone = done;
    metrics.plegRelistDuration.observe((done - start) / 1000);
    metrics.plegLastSeen.set(done / 1000);
    // Pods whose inspection failed just now: no events (they come again, see keepPrevious).
    const failed = this.needsReinspection;
    for (const e of events) if (!failed.has(e.podId) && !this.sentByPodRelist(e)) this.deliver(e);
  }

  /**
   * The pod's cached status, observed since the previous relist started (a kill's read after it
   * stopped the pod, a pod relist), already shows this change: inspecting the pod again would
   * read what the cache holds (issue 30: a deleted pod was read once more per relist).
   */
  private cacheShows(e: RelistEvent, previousStart: number): boolean {
    const cached = this.opts.cache.get(e.podId);
    if (!cached?.status || cached.error || cached.modified <= previousStart) return false;
    const c = cached.status.containerStatuses.find((x) => x.id === e.containerId);
    const sb = cached.status.sandboxStatuses.find((x) => x.id === e.containerId);
    switch (e.type) {
      case 'ContainerDied':
        return c ? c.state === 'exited' : sb ? !sb.ready : false;
      case 'ContainerStarted':
        return c ? c.state === 'running' : sb ? sb.ready : false;
      case 'ContainerRemoved':
        return !c && !sb;
      default:
        return false;
    }
  }

  /** A ContainerDied a pod relist already sent (the differ learns of the exit only now). */
  private sentByPodRelist(e: RelistEvent): boolean {
    return e.type === 'ContainerDied' && this.diedSent.delete(e.containerId);
  }

  /**
   * Relists one pod now (upstream RequestRelist); a request while it runs runs it once more
   * after. A pod not seen yet (no name to inspect it by) relists the node.
   */
  private requestPodRelist(uid: string): void {
    if (this.stopped) return;
    const info = this.podInfo.get(uid);
    if (!info) return void this.relist();
    const inFlight = this.podRelists.get(uid);
    if (inFlight) return void (inFlight.again = true);
    const state = { again: false };
    this.podRelists.set(uid, state);
    void this.relistPod(uid, info).finally(() => {
      this.podRelists.delete(uid);
      if (state.again) this.requestPodRelist(uid);
    });
  }

  /**
   * upstream relistPod, for exits: inspect the pod, update the cache, then send ContainerDied for
   * each container that was running and the runtime now reports exited.
   */
  private async relistPod(uid: string, info: RelistPodInfo): Promise<void> {
    const observed = this.clock.now();
    let status: PodRuntimeStatus;
    try {
      const previous = this.opts.cache.get(uid)?.status;
      status = await this.opts.runtime.getPodStatus(uid, info.name, info.namespace, previous);
    } catch (err) {
      log('pleg').debug({ pod: klogRef(info), err: errorMessage(err) }, 'PLEG: pod relist failed; relisting the node');
      return void this.relist();
    }
    this.applyPodStatus(uid, status, observed);
  }

  /**
   * A pod's status from a pod relist, the kubelet's read after a kill or the runtime's exit report
   * (patched): cached, then ContainerDied for the containers that were running and the cache now
   * holds exited.
   */
  private applyPodStatus(uid: string, status: PodRuntimeStatus, observed: number): void {
    this.setStatus(uid, status, undefined, observed);
    for (const c of this.opts.cache.get(uid)?.status?.containerStatuses ?? []) {
      if (c.state !== 'exited' || this.runningContainers.get(c.id) !== uid) continue;
      this.diedSent.add(c.id);
      this.deliver({ podId: uid, containerId: c.id, type: 'ContainerDied' });
    }
  }

  /**
   * A pod relist and a full relist may inspect the same pod at once: the older observation never
   * replaces the newer (upstream serialises them under relistLock to the same effect).
   */
  private setStatus(uid: string, status: PodRuntimeStatus | undefined, err: Error | undefined, observed: number): void {
    const cached = this.opts.cache.get(uid);
    if ((cached?.modified ?? -Infinity) > observed) return;
    this.opts.cache.set(uid, status && keepExits(status, cached?.status), err, observed);
  }

  private async inspect(uid: string, observed: number): Promise<void> {
    const info = this.podInfo.get(uid);
    if (!info) return;
    // Observed after this relist started (a pod relist, the kubelet's read after a kill): what
    // the runtime would answer now could not replace it (setStatus), so it is not asked.
    const cached = this.opts.cache.get(uid);
    if (cached?.status && !cached.error && cached.modified > observed) return this.forgetIfGone(uid, cached.status);
    try {
      const status = await this.opts.runtime.getPodStatus(uid, info.name, info.namespace);
      this.setStatus(uid, status, undefined, observed);
      this.forgetIfGone(uid, status);
    } catch (err) {
      this.needsReinspection.add(uid);
      this.setStatus(uid, undefined, err as Error, observed);
      log('pleg').warn(
        { pod: klogRef(info), err: errorMessage(err) },
        'PLEG: pod status inspection failed; will retry next relist',
      );
    }
  }

  /** A pod with nothing left in the runtime needs no name for later inspections. */
  private forgetIfGone(uid: string, status: PodRuntimeStatus): void {
    if (status.containerStatuses.length === 0 && status.sandboxStatuses.length === 0) this.podInfo.delete(uid);
  }

  private deliver(e: RelistEvent): void {
    switch (e.type) {
      case 'ContainerStarted':
        this.runningContainers.set(e.containerId, e.podId);
        if (this.exitWatcher) void this.exitWatcher.track(e.podId, e.containerId);
        break;
      case 'ContainerDied':
        this.observeExitLatency(e);
        this.forget(e.containerId);
        break;
      case 'ContainerRemoved':
        this.forget(e.containerId);
        this.diedSent.delete(e.containerId);
        break;
      case 'ContainerChanged':
        return; // upstream does not send ContainerChanged to the syncLoop
    }
    this.emit({ id: e.podId, type: e.type, data: e.containerId });
  }

  private forget(containerId: string): void {
    this.runningContainers.delete(containerId);
    this.exitWatcher?.untrack(containerId);
    this.pendingExits.delete(containerId);
  }

  private observeExitLatency(e: RelistEvent): void {
    const s = this.opts.cache.get(e.podId)?.status?.containerStatuses.find((c) => c.id === e.containerId);
    if (!s?.finishedAt) return;
    const latency = this.clock.now() - s.finishedAt.getTime();
    if (latency >= 0) metrics.plegExitToEvent.observe(latency / 1000);
  }

  private emit(e: PodLifecycleEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        log('pleg').error({ err: errorMessage(err) }, 'PLEG listener threw');
      }
    }
  }
}

/**
 * A container never runs again once it exited: an inspection whose lists were answered before
 * the runtime recorded an exit that the cache already holds (from a stop event, written first)
 * keeps the exit, instead of taking it back after ContainerDied was sent.
 */
function keepExits(next: PodRuntimeStatus, cached: PodRuntimeStatus | undefined): PodRuntimeStatus {
  const exited = new Map(cached?.containerStatuses.filter((c) => c.state === 'exited').map((c) => [c.id, c]));
  if (exited.size === 0 || !next.containerStatuses.some((c) => c.state !== 'exited' && exited.has(c.id))) return next;
  const containerStatuses = next.containerStatuses.map((c) => (c.state === 'exited' ? c : (exited.get(c.id) ?? c)));
  return { ...next, containerStatuses };
}

export function createGenericPLEG(opts: GenericPlegOptions): PodLifecycleEventGenerator {
  return new GenericPLEG(opts);
}
