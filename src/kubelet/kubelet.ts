/**
 * The Kubelet: the syncLoop and its SyncHandler (HandlePodAdditions … HandlePodCleanups), and
 * the PodSyncer that pod workers call (syncPod / syncTerminatingPod / syncTerminatedPod).
 *
 * The syncLoop is one async loop fed by an inbox: config updates, PLEG events, the 1 s sync tick
 * and the 2 s housekeeping tick. While the runtime is not ready (RuntimeReady, PLEG) it does not
 * dispatch and backs off (100 ms doubling to 5 s), as upstream's syncLoop does; a network that is
 * not ready holds back only the pods on the pod network (syncPod), never the syncLoop.
 */
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../api/types.js';
import type { PodUpdate } from '../podconfig/types.js';
import type { PodRuntimeStatus, PodSyncResult, Runtime, RunningPod, ContainerWaiting } from '../kuberuntime/types.js';
import type { PodLifecycleEventGenerator, PodStatusCache } from '../pleg/types.js';
import type { ApiPodStatus } from '../api/types.js';
import type { EventRecorder } from '../events/types.js';
import type { ProbeManager } from '../prober/types.js';
import {
  generateAPIPodStatus,
  terminatedPodStatus,
  needToReconcilePodReadiness,
  rejectedPodStatus,
  type ProbeResults,
  type StatusManager,
} from '../status/index.js';
import {
  createPodWorkers,
  type PodStatusFunc,
  type PodWorkers,
  type PodSyncer,
  type SyncContext,
  type SyncPodResult,
  type TerminationOptions,
  type UpdateType,
} from '../podworkers/index.js';
import { metrics } from '../metrics/index.js';
import { errorMessage, KubeletError } from '../errors.js';
import {
  isPodEvicted,
  isStaticPod,
  isTerminalPhase,
  podFullName,
  podName,
  podNames,
  podNamespace,
  podUID,
  klogRef,
} from '../api/pod.js';
import { log } from '../util/log.js';
import { realClock, sleep, type Clock } from '../util/clock.js';
import { Backoff } from '../util/backoff.js';
import { PodManager } from '../podmanager/index.js';
import { runningPodFromStatus } from '../kuberuntime/index.js';
import { makePodDataDirs, volumesNotReady, type PodVolumes, type VolumeManager } from '../volume/index.js';
import { RuntimeState } from './runtime-state.js';
import { podEventRef } from '../events/refs.js';
import { admitPodFields, canAdmitPod, type AdmitHandler, type AdmitResult } from './admission.js';
import type { DeviceAdmission } from './device-admission.js';
import { newAppArmorValidator, type AppArmorValidator } from './apparmor.js';
import { admitSysctls, nodeSysctlAllowlist, type SysctlAllowlist } from './sysctls.js';
import type { UsernsManager } from './userns/index.js';
import { computeNodeInfo, type NodeInfo } from '../node/index.js';
import { syncLoopIteration } from './sync-loop.js';
import type { AllocationManager } from './allocation.js';
import { newActiveDeadlineHandler, type PodSyncLoopHandler } from './active-deadline.js';
import type { PodSyncHandler } from '../status/index.js';
import type { SyncHandler, SyncLoopInput } from './types.js';
import { forgetPod, observePodRunning } from '../metrics/pod-startup-latency.js';

export interface KubeletDeps {
  nodeName: string;
  hostIP: string;
  /** Every node IP (dual stack); default [hostIP]. */
  hostIPs?: string[];
  rootDir: string;
  /** In-place resize: allocated/actuated resources and the resize decisions; absent: none (the spec is run as is). */
  allocation?: AllocationManager | undefined;
  maxPods: number;
  /** Node name, labels, capacity and allocatable for admission; default: computed from the host with maxPods. */
  node?: NodeInfo;
  /** Readiness and startup probe results for the pod status; absent = no prober. */
  probes?: ProbeResults;
  syncFrequencyMs: number;
  runtime: Runtime;
  /**
   * Mounts each pod's volumes before the runtime's SyncPod and tears them down once the pod
   * has terminated; the runtime must be given the same one.
   */
  volumeManager: VolumeManager;
  pleg: PodLifecycleEventGenerator;
  cache: PodStatusCache;
  statusManager: StatusManager;
  /** Names of the configured sources; housekeeping, and container GC's removal of deleted pods, wait until each has sent its first SET. */
  sources: ReadonlySet<string>;
  /** The desired pods; default: a new, empty one. The root shares it with stats and the OOM watcher. */
  podManager?: PodManager;
  /**
   * API server mode: PVC, generic ephemeral and inline csi volumes can be resolved (claims, PVs,
   * CSIDrivers) and are admitted; standalone (default): refused at admission naming the field.
   */
  apiServer?: boolean;
  /** upstream allowedUnsafeSysctls: admitted besides the safe ones (validated with the config). */
  allowedUnsafeSysctls?: readonly string[];
  /**
   * The user namespace manager (userns/): housekeeping releases the blocks of pods gone (upstream
   * CleanupOrphanedPodUsernsAllocations, and Release when a pod directory is removed). Absent: none.
   */
  userns?: Pick<UsernsManager, 'release' | 'cleanupOrphaned'>;
  /**
   * The device manager at admission (device-admission.ts): its allocator runs after the other
   * checks that refuse a pod outright and before the resource fit; absent: no devices.
   */
  devices?: DeviceAdmission;
  /** Extra admission checks run before the resource fit (upstream PodAdmitHandlers); more via addPodAdmitHandler. */
  admitHandlers?: readonly AdmitHandler[];
  /** The AppArmor admission check, after the resource fit as upstream; default: this host's. */
  appArmor?: AppArmorValidator;
  /** Kubernetes events (Killing, Evicted, ...); default: dropped. */
  recorder?: EventRecorder;
  /** Probe workers: told each pod's status, their result changes sync the pod. Default: none. */
  prober?: ProbeManager;
  /** The OOM watcher's lookup: terminated containers it saw OOM-killed read OOMKilled. */
  wasOomKilled?: (containerId: string) => boolean;
  clock?: Clock;
  syncPeriodMs?: number;
  housekeepingPeriodMs?: number;
}

/** upstream events.NetworkNotReady and NetworkNotReadyErrorMsg. */
export const NETWORK_NOT_READY_REASON = 'NetworkNotReady';
export const NETWORK_NOT_READY_MESSAGE = 'network is not ready';
/** Events go nowhere when no recorder is given (tests). */
const DROP_EVENTS: EventRecorder = { event: () => undefined };
const EMPTY_WAITING: ReadonlyMap<string, ContainerWaiting> = new Map();
/** How often a pod with a container waiting in back-off is looked at again. */
const WAITING_RESYNC_MS = 1000;
/** The waits between teardown tries of an orphan's volumes (a CSI driver down): 2 s doubling to 2 min. */
const ORPHAN_VOLUME_RETRY_MS = { initial: 2000, max: 120_000 };
/** upstream plegChannelCapacity. */
export const PLEG_CHANNEL_CAPACITY = 1000;
function emptyRuntimeStatus(pod: Pod, now: Date): PodRuntimeStatus {
  return { ...podNames(pod), ips: [], sandboxStatuses: [], containerStatuses: [], timestamp: now };
}

export class Kubelet implements PodSyncer, SyncHandler {
  readonly podManager: PodManager;
  readonly podWorkers: PodWorkers;
  readonly runtimeState: RuntimeState;
  readonly node: NodeInfo;
  private readonly clock: Clock;
  private readonly inbox: SyncLoopInput[] = [];
  /** PLEG events waiting in the inbox (bounded by PLEG_CHANNEL_CAPACITY). */
  private plegPending = 0;
  private readonly admitHandlers: AdmitHandler[];
  private readonly appArmor: AppArmorValidator;
  private readonly sysctls: SysctlAllowlist;
  private wake: (() => void) | undefined;
  private readonly abort = new AbortController();
  private readonly seenSources = new Set<string>();
  private readonly waiting = new Map<string, Map<string, ContainerWaiting>>();
  private readonly firstSeen = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Pods refused at admission: never started, kept in the pod manager for their Failed status. */
  private readonly rejected = new Set<string>();
  /** Orphans whose volume teardown failed, by pod UID. */
  private readonly orphanVolumeRetry: Backoff;
  private housekeepingQueued = false;
  /** upstream PodSyncLoopHandlers and PodSyncHandlers: the active deadline is in both. */
  private readonly podSyncLoopHandlers: readonly PodSyncLoopHandler[];
  private readonly podSyncHandlers: readonly PodSyncHandler[];
  private syncQueued = false;
  private readonly volumeManager: VolumeManager;

  constructor(private readonly deps: KubeletDeps) {
    this.clock = deps.clock ?? realClock;
    this.orphanVolumeRetry = new Backoff(this.clock, ORPHAN_VOLUME_RETRY_MS.initial, ORPHAN_VOLUME_RETRY_MS.max);
    this.volumeManager = deps.volumeManager;
    this.node = deps.node ?? computeNodeInfo({ nodeName: deps.nodeName, maxPods: deps.maxPods });
    this.podManager = deps.podManager ?? new PodManager();
    this.admitHandlers = [...(deps.admitHandlers ?? [])];
    this.appArmor = deps.appArmor ?? newAppArmorValidator();
    this.sysctls = nodeSysctlAllowlist(deps.allowedUnsafeSysctls);
    this.podWorkers = createPodWorkers({
      syncer: this,
      cache: deps.cache,
      resyncIntervalMs: deps.syncFrequencyMs,
      clock: this.clock,
    });
    this.runtimeState = new RuntimeState(deps.runtime, deps.pleg);
    const activeDeadline = newActiveDeadlineHandler({
      statusProvider: deps.statusManager,
      recorder: deps.recorder ?? DROP_EVENTS,
      clock: this.clock,
    });
    this.podSyncLoopHandlers = [activeDeadline];
    this.podSyncHandlers = [activeDeadline];
  }

  /** Starts the PLEG, the tickers and the syncLoop; resolves when stop() is called. */
  async run(updates: AsyncIterable<PodUpdate>): Promise<void> {
    await this.runtimeState.update();
    this.deps.pleg.watch((event) => this.push({ kind: 'pleg', event }));
    // upstream syncLoop's livenessManager/readinessManager/startupManager channels.
    this.deps.prober?.onResultChange((podUid) => this.push({ kind: 'probe', podUid }));
    this.deps.pleg.start();
    this.every(5000, () => void this.runtimeState.update());
    this.every(this.deps.syncPeriodMs ?? 1000, () => {
      if (!this.syncQueued) {
        this.syncQueued = true;
        this.push({ kind: 'sync' });
      }
    });
    this.every(this.deps.housekeepingPeriodMs ?? 2000, () => {
      if (!this.housekeepingQueued) {
        this.housekeepingQueued = true;
        this.push({ kind: 'housekeeping' });
      }
    });
    void this.pumpConfig(updates);
    await this.syncLoop();
  }

  stop(): void {
    this.abort.abort();
    for (const t of this.timers) clearInterval(t);
    this.deps.pleg.stop();
    this.wake?.();
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  private async pumpConfig(updates: AsyncIterable<PodUpdate>): Promise<void> {
    try {
      for await (const update of updates) {
        if (this.abort.signal.aborted) return;
        this.push({ kind: 'config', update });
      }
    } catch (err) {
      log('kubelet').error({ err: errorMessage(err) }, 'Pod config stream failed');
    }
  }

  /** upstream AddPodAdmitHandler: checks of subsystems built after the Kubelet (eviction, node shutdown). */
  addPodAdmitHandler(handler: AdmitHandler): void {
    this.admitHandlers.push(handler);
  }

  private push(item: SyncLoopInput): void {
    if (item.kind === 'pleg') {
      // upstream's PLEG channel holds 1000 events and drops the rest (the periodic sync and the
      // next relist catch up); a stalled syncLoop must not grow the inbox without bound.
      if (this.plegPending >= PLEG_CHANNEL_CAPACITY) {
        metrics.plegDiscardEvents.inc();
        log('kubelet').warn(
          { pod: item.event.id, type: item.event.type },
          'PLEG event channel is full, discarding event',
        );
        return;
      }
      this.plegPending++;
    }
    this.inbox.push(item);
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async syncLoop(): Promise<void> {
    log('kubelet').info('Starting kubelet main sync loop');
    let backoff = 100;
    while (!this.abort.signal.aborted) {
      const err = this.runtimeState.runtimeErrors();
      if (err) {
        log('kubelet').debug({ err: err.message, code: err.code, backoffMs: backoff }, 'Skipping pod synchronization');
        await sleep(backoff, this.abort.signal);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      backoff = 100;
      const item = this.inbox.shift();
      if (item?.kind === 'pleg') this.plegPending--;
      if (!item) {
        await new Promise<void>((r) => {
          this.wake = r;
        });
        continue;
      }
      try {
        await this.iterate(item);
      } catch (e) {
        log('kubelet').error({ err: errorMessage(e), kind: item.kind }, 'syncLoop iteration failed');
      }
    }
  }

  /** The Kubelet's bookkeeping around one syncLoopIteration: seen sources, coalesced ticks. */
  private async iterate(item: SyncLoopInput): Promise<void> {
    if (item.kind === 'config') {
      const u = item.update;
      this.seenSources.add(u.source);
      log('kubelet').info(
        { op: u.op, source: u.source, pods: u.pods.map((p) => klogRef(p.metadata)) },
        'SyncLoop update',
      );
    }
    if (item.kind === 'sync') this.syncQueued = false;
    try {
      await syncLoopIteration(item, this, {
        getPodByUID: (uid) => this.podManager.getPodByUID(uid),
        podsDueForSync: () => this.podsToSync(),
        cleanUpContainersInPod: (uid, containerId) => this.cleanUpContainersInPod(uid, containerId),
      });
    } finally {
      if (item.kind === 'housekeeping') this.housekeepingQueued = false;
    }
  }

  /**
   * upstream getPodsToSync: the pods whose resync is due, and the pods a sync loop handler wants
   * synced now (past their active deadline). Only pods whose worker still syncs: one already
   * terminating needs no push, and a finished one would be asked again every tick.
   */
  private podsToSync(): string[] {
    const uids = new Set(this.podWorkers.takeDueForSync());
    for (const pod of this.podManager.getPods()) {
      const uid = podUID(pod);
      if (
        uids.has(uid) ||
        !this.podWorkers.couldHaveRunningContainers(uid) ||
        this.podWorkers.isPodTerminationRequested(uid)
      )
        continue;
      if (this.podSyncLoopHandlers.some((h) => h.shouldSync(pod))) uids.add(uid);
    }
    return [...uids];
  }

  // ---- SyncHandler --------------------------------------------------------------------------

  async handlePodAdditions(pods: Pod[]): Promise<void> {
    const sorted = byCreationTime(pods);
    for (const pod of sorted) {
      const uid = podUID(pod);
      const existing = this.podManager.getPods().filter((p) => p.metadata?.uid !== uid);
      this.podManager.addPod(pod);
      if (!this.firstSeen.has(uid)) this.firstSeen.set(uid, this.clock.now());
      // Admission, unless the pod is already on its way out (upstream HandlePodAdditions).
      if (!this.podWorkers.isPodTerminationRequested(uid) && !isTerminalPhase(pod.status?.phase)) {
        // upstream allocation manager AddPod: admitted at the allocation kept across a restart.
        const alloc = this.deps.allocation;
        const admitted = alloc?.updatePodFromAllocation(pod).pod ?? pod;
        const others = this.filterOutInactivePods(existing).map((p) => alloc?.updatePodFromAllocation(p).pod ?? p);
        const result = await this.admitNewPod(admitted, others);
        if (!result.admit) {
          this.rejectPod(pod, result.reason ?? 'UnexpectedAdmissionError', result.message ?? '');
          continue;
        }
        alloc?.addPod(admitted);
        this.rejected.delete(uid);
      }
      this.dispatch(pod, 'create');
    }
  }

  handlePodUpdates(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.updatePod(pod);
      this.dispatch(pod, 'update');
    }
  }

  handlePodRemoves(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.removePod(pod);
      forgetPod(podUID(pod));
      this.podWorkers.updatePod({ updateType: 'kill', pod, killPodOptions: { reason: 'removed from its source' } });
    }
  }

  /**
   * upstream HandlePodReconcile (a status-only change from the source): the pod manager takes the
   * new pod; a pod whose Ready condition disagrees with its readiness gates is synced; an evicted
   * pod's dead containers all go. Other failed pods keep theirs, as upstream, for `kubectl logs`.
   */
  handlePodReconcile(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.updatePod(pod);
      if (needToReconcilePodReadiness(pod)) this.dispatch(pod, 'sync');
      if (isPodEvicted(pod.status)) this.deleteDeadContainers(podUID(pod), '', true);
    }
  }

  /** upstream cleanUpContainersInPod, after a ContainerDied event. */
  private cleanUpContainersInPod(uid: string, exitedContainerId: string): void {
    this.deleteDeadContainers(uid, exitedContainerId, this.podWorkers.shouldPodContentBeRemoved(uid));
  }

  /** The podContainerDeletor's request, from the cached status (none while it holds an error). */
  private deleteDeadContainers(uid: string, exitedContainerId: string, removeAll: boolean): void {
    const cached = this.deps.cache.get(uid);
    if (!cached?.status || cached.error) return;
    this.deps.runtime.deleteContainersInPod(exitedContainerId, cached.status, removeAll);
  }

  handlePodSyncs(pods: Pod[]): void {
    for (const pod of pods) this.dispatch(pod, 'sync');
  }

  private dispatch(pod: Pod, updateType: UpdateType): void {
    this.podWorkers.updatePod({ updateType, pod });
    // upstream dispatchWork: note the number of containers of new pods.
    if (updateType === 'create') metrics.containersPerPod.observe(pod.spec?.containers?.length ?? 0);
  }

  /** Admission (upstream canAdmitPod): see admission.ts. Critical pods do not preempt others here. */
  canAdmitPod(pod: Pod, activePods: readonly Pod[]): AdmitResult {
    const handlers = this.runAdmitHandlers(pod);
    return handlers.admit ? this.predicate(pod, activePods) : handlers;
  }

  /**
   * A new pod's admission: the handlers, then the device allocator (upstream's resource allocator
   * admit handler; a pod refused for its fields never reaches a plugin), then the predicate. The
   * pod is in the pod manager already, so the device manager counts it active.
   */
  private async admitNewPod(pod: Pod, activePods: readonly Pod[]): Promise<AdmitResult> {
    const handlers = this.runAdmitHandlers(pod);
    if (!handlers.admit) return handlers;
    const devices = this.deps.devices;
    if (devices) {
      // upstream's sysctl handler runs before the allocator; our field refusals (DRA claims among them) too.
      const sysctls = admitSysctls(pod, this.sysctls);
      if (!sysctls.admit) return sysctls;
      const fields = admitPodFields(pod, { apiServer: this.deps.apiServer });
      if (!fields.admit) return fields;
      const allocated = await devices.allocate(pod);
      if (!allocated.admit) return allocated;
    }
    return this.predicate(pod, activePods);
  }

  private runAdmitHandlers(pod: Pod): AdmitResult {
    for (const handler of this.admitHandlers) {
      const r = handler(pod);
      if (!r.admit) return r;
    }
    return { admit: true };
  }

  private predicate(pod: Pod, activePods: readonly Pod[]): AdmitResult {
    const features = this.runtimeState.runtimeFeatures();
    const node = features ? { ...this.node, features } : this.node;
    const extended = this.deps.devices?.extendedAllocatable(pod);
    const fit = canAdmitPod(pod, activePods, node, {
      sysctls: this.sysctls,
      apiServer: this.deps.apiServer,
      ...(extended ? { extendedAllocatable: extended } : {}),
    });
    return fit.admit ? this.appArmor.admit(pod) : fit;
  }

  /**
   * upstream filterOutInactivePods: pods whose containers are known to be stopped, and pods in a
   * terminal phase (rejected ones included) that are not being torn down, use nothing.
   */
  filterOutInactivePods(pods: readonly Pod[]): Pod[] {
    return pods.filter((p) => {
      const uid = podUID(p);
      if (this.podWorkers.isPodKnownTerminated(uid)) return false;
      const phase = this.deps.statusManager.getPodStatus(uid)?.phase ?? p.status?.phase;
      return !(isTerminalPhase(phase) && !this.podWorkers.isPodTerminationRequested(uid));
    });
  }

  /** All desired pods that hold (or may hold) node resources. */
  activePods(): Pod[] {
    return this.filterOutInactivePods(this.podManager.getPods());
  }

  private rejectPod(pod: Pod, reason: string, message: string): void {
    log('kubelet').warn({ pod: podFullName(pod), reason, message }, 'Pod admission rejected');
    // upstream rejectPod: a Warning event with the admission reason, then the Failed status.
    this.deps.recorder?.event(podEventRef(pod), 'Warning', reason, message);
    this.rejected.add(podUID(pod));
    this.deps.statusManager.setPodStatus(pod, rejectedPodStatus(pod, reason, message, new Date(this.clock.now())));
  }

  /** upstream sourcesReady.AllReady: every configured source has sent its first update. */
  allSourcesReady(): boolean {
    for (const s of this.deps.sources) if (!this.seenSources.has(s)) return false;
    return true;
  }

  /**
   * upstream ShouldPodContentBeRemoved, for container GC (src/kubelet/gc-loops.ts): the pod is
   * not desired any more and its worker, if any, has stopped every container.
   */
  shouldPodContentBeRemoved(uid: string): boolean {
    return !this.podManager.getPodByUID(uid) && !this.podWorkers.couldHaveRunningContainers(uid);
  }

  /**
   * Housekeeping (upstream HandlePodCleanups): orphans, finished workers, dirs. Container GC is
   * its own loop (gc-loops.ts), so a slow collection never holds up the syncLoop.
   */
  async handlePodCleanups(): Promise<void> {
    if (!this.allSourcesReady()) return; // sources not ready: adopting, not killing
    const started = performance.now();
    try {
      await this.podCleanups();
    } finally {
      metrics.housekeepingDuration.observe((performance.now() - started) / 1000);
    }
  }

  private async podCleanups(): Promise<void> {
    const desired = this.podManager.getPods();
    const desiredUids = new Set(desired.map(podUID));
    const workers = this.podWorkers.syncKnownPods(desired);
    this.deps.statusManager.removeOrphanStatuses(new Set([...desiredUids, ...workers.keys()]));
    this.deps.allocation?.removeOrphanedPods(new Set([...desiredUids, ...workers.keys()]));
    for (const uid of this.waiting.keys()) if (!desiredUids.has(uid)) this.waiting.delete(uid);
    for (const uid of this.rejected) if (!desiredUids.has(uid)) this.rejected.delete(uid);
    // A pod gone before it ran: a later pod of the same UID (a restored static manifest) starts its own clock.
    for (const uid of this.firstSeen.keys()) if (!desiredUids.has(uid)) this.firstSeen.delete(uid);
    this.deps.prober?.cleanupPods(desiredUids);

    for (const pod of desired) {
      if (!workers.has(podUID(pod)) && !this.isRejected(pod)) this.dispatch(pod, 'create');
    }
    setPodCountGauges(desired, this.filterOutInactivePods(desired));
    const running = await this.deps.runtime.getPods(false);
    for (const rp of running) {
      if (!desiredUids.has(rp.uid) && !workers.has(rp.uid)) {
        // upstream counts a runtime pod no worker knew about (not one whose worker is finishing).
        metrics.orphanedRuntimePods.inc();
        log('kubelet').info({ pod: klogRef(rp), uid: rp.uid }, 'Killing orphaned pod found in the runtime');
        this.podWorkers.updatePod({ updateType: 'kill', runningPod: rp, killPodOptions: { reason: 'orphaned' } });
      }
    }
    const runningUids = new Set(running.map((p) => p.uid));
    await this.cleanupOrphanedPodDirs(desiredUids, workers, runningUids);
    await this.deps.userns?.cleanupOrphaned(new Set([...desiredUids, ...workers.keys(), ...runningUids]));
    await this.cleanupOrphanedPodCgroups(runningUids);
  }

  /**
   * upstream cleanupOrphanedPodCgroups: the cgroups of pods that may still run (their worker
   * syncs or terminates them, or the runtime shows them running) stay, and so do those of pods
   * whose volumes are still there (upstream podVolumesExist).
   */
  private async cleanupOrphanedPodCgroups(running: ReadonlySet<string>): Promise<void> {
    const keep = async (uid: string): Promise<boolean> =>
      running.has(uid) ||
      this.podWorkers.couldHaveRunningContainers(uid) ||
      (await this.volumeManager.podVolumesExist(uid));
    await this.deps.runtime
      .cleanupOrphanedPodCgroups(keep)
      .catch((err) => log('kubelet').warn({ err: errorMessage(err) }, 'failed to clean up orphaned pod cgroups'));
  }

  private isRejected(pod: Pod): boolean {
    return this.rejected.has(podUID(pod));
  }

  private async cleanupOrphanedPodDirs(
    desired: ReadonlySet<string>,
    workers: ReadonlyMap<string, unknown>,
    running: ReadonlySet<string>,
  ): Promise<void> {
    const podsDir = join(this.deps.rootDir, 'pods');
    let entries: string[];
    try {
      entries = await readdir(podsDir);
    } catch {
      return;
    }
    for (const uid of entries) {
      const known = desired.has(uid) || workers.has(uid);
      if (known && !this.podWorkers.isPodKnownTerminated(uid)) continue;
      // Volumes may still be mounted (tmpfs emptyDir, CSI): an rm -rf here would empty a live mount.
      // A pod terminated, or gone while the agent was down, with nothing left running has them torn
      // down through the volume manager (upstream's reconciler; a deleted pod's object waits for it).
      if (existsSync(join(podsDir, uid, 'volumes'))) {
        if (!running.has(uid)) await this.tearDownOrphanVolumes(uid);
        continue;
      }
      this.orphanVolumeRetry.reset(uid);
      if (known) continue;
      await rm(join(podsDir, uid), { recursive: true, force: true }).catch(() => undefined);
      await this.deps.userns?.release(uid);
    }
    this.orphanVolumeRetry.gc(); // the back-offs of pod directories gone since
  }

  /** Teardown of an orphan's volumes, retried with back-off while it fails. */
  private async tearDownOrphanVolumes(uid: string): Promise<void> {
    if (this.orphanVolumeRetry.isInBackOffSinceUpdate(uid)) return;
    try {
      await this.volumeManager.unmountPodVolumes(uid);
      this.orphanVolumeRetry.reset(uid);
    } catch (err) {
      this.orphanVolumeRetry.next(uid, this.clock.now());
      log('kubelet').debug({ uid, err: errorMessage(err) }, 'cannot tear down orphaned pod volumes yet');
    }
  }

  // ---- PodSyncer ----------------------------------------------------------------------------

  /**
   * upstream SyncPod: the status first (a terminal pod stops here), then the pod's data
   * directories and volumes (the volume manager), then the runtime's SyncPod.
   */
  async syncPod(
    ctx: SyncContext,
    updateType: UpdateType,
    pod: Pod,
    runtimeStatus: PodRuntimeStatus | undefined,
  ): Promise<SyncPodResult> {
    const uid = podUID(pod);
    const now = new Date(this.clock.now());
    // The first sync of a worker starts from a clean status: a UID created again after it
    // finished must not inherit its predecessor's terminal phase.
    if (updateType === 'create' && isTerminalPhase(this.deps.statusManager.getPodStatus(uid)?.phase)) {
      this.deps.statusManager.removePodStatus(uid);
    }
    const status = runtimeStatus ?? emptyRuntimeStatus(pod, now);
    // In-place resize: decide a pending resize, then run the pod at its allocation.
    const allocated = this.handlePodResourcesResize(pod);
    const apiStatus = this.updateStatus(pod, status, false);
    if (isTerminalPhase(apiStatus.phase)) return { isTerminal: true };
    this.checkNetworkReady(pod);
    await makePodDataDirs(this.deps.rootDir, uid);
    // upstream WaitForAttachAndMount, before SyncPod. A configMap, secret... volume that cannot be
    // set up is its containers' error, the others start; a CSI-served one holds the whole pod back.
    this.checkVolumesReady(pod, await this.volumeManager.mountPodVolumes(pod));
    const result = await this.deps.runtime.syncPod(allocated, status, ctx.signal);
    this.waiting.set(uid, result.waiting);
    await this.afterResize(pod, allocated, status, result);
    if (result.error) {
      if (result.changed) void this.deps.pleg.relist();
      throw result.error;
    }
    log('kubelet').debug({ pod: podFullName(pod), updateType }, 'Pod synced');
    return {
      isTerminal: false,
      requeueAfterMs: result.waiting.size > 0 ? WAITING_RESYNC_MS : undefined,
      // Look at what we just changed now rather than at the next periodic relist (upstream
      // RequestPodRelist), once the worker has recorded the end of this sync.
      ...(result.changed ? { postSync: () => void this.deps.pleg.relist() } : {}),
    };
  }

  /**
   * PodResizeInProgress from what this sync did; after an actuation the status is reported at
   * once from a fresh runtime status (nothing else would trigger a sync: no container changed state).
   */
  private async afterResize(pod: Pod, allocated: Pod, status: PodRuntimeStatus, result: PodSyncResult): Promise<void> {
    const alloc = this.deps.allocation;
    if (!alloc) return;
    if (!result.resized) return alloc.updateResizeInProgress(allocated, status, result.resizeError);
    const { uid, name, namespace } = podNames(pod);
    const fresh = await this.deps.runtime.getPodStatus(uid, name, namespace).catch(() => status);
    // upstream pleg.UpdateCache: later syncs read the resized resources, not the relist's old ones.
    if (fresh !== status) this.deps.cache.set(uid, fresh, undefined, this.clock.now());
    alloc.updateResizeInProgress(allocated, fresh, result.resizeError);
    this.updateStatus(pod, fresh, false);
  }

  /** upstream handlePodResourcesResize (allocation.ts): the pod to run, at its allocated resources. */
  private handlePodResourcesResize(pod: Pod): Pod {
    const alloc = this.deps.allocation;
    if (!alloc) return pod;
    // Only a pending resize needs the other pods: every sync walking them was O(pods²) a resync period.
    const others = () => this.activePods().filter((p) => podUID(p) !== podUID(pod));
    return alloc.handlePodResourcesResize(pod, others, this.node, (p, o) => this.canAdmitPod(p, o));
  }

  /**
   * upstream SyncPod's network gate: while the runtime's network is not ready only hostNetwork
   * pods start; the others fail their sync with a NetworkNotReady event and the pod worker retries
   * after its back-off, until the runtime reports NetworkReady (a CNI config appeared).
   */
  private checkNetworkReady(pod: Pod): void {
    const err = this.runtimeState.networkErrors();
    if (!err || pod.spec?.hostNetwork === true) return;
    const message = `${NETWORK_NOT_READY_MESSAGE}: ${err.message}`;
    (this.deps.recorder ?? DROP_EVENTS).event(podEventRef(pod), 'Warning', NETWORK_NOT_READY_REASON, message);
    throw new KubeletError('KTS_ERR_NETWORK_NOT_READY', message, { cause: err });
  }

  /**
   * upstream SyncPod's volume gate: while a PVC, generic ephemeral or inline CSI volume is not set
   * up, the sandbox is not started; the sync fails with upstream's FailedMount (and
   * FailedAttachVolume) events and the pod worker retries after its back-off. The pod stays
   * Pending, its containers waiting in ContainerCreating: a volume not ready never fails a pod.
   */
  private checkVolumesReady(pod: Pod, volumes: PodVolumes): void {
    const err = volumesNotReady(pod, volumes);
    if (!err) return;
    const recorder = this.deps.recorder ?? DROP_EVENTS;
    for (const e of err.events) recorder.event(podEventRef(pod), 'Warning', e.reason, e.message);
    throw err; // the pod worker logs it and retries after its back-off
  }

  /**
   * upstream SyncTerminatingPod: report the status (amended by the kill's status function, e.g.
   * Evicted), stop every container with the grace period, check nothing runs any more, and
   * report the final status with the pod terminal (exit codes decide Succeeded or Failed).
   * When a shorter grace period supersedes this call, it stops after its kill returns.
   */
  async syncTerminatingPod(
    ctx: SyncContext,
    pod: Pod,
    runtimeStatus: PodRuntimeStatus | undefined,
    { gracePeriodSeconds, statusFn }: TerminationOptions,
  ): Promise<PodRuntimeStatus | undefined> {
    const { uid, name, namespace } = podNames(pod);
    const status = runtimeStatus ?? (await this.deps.runtime.getPodStatus(uid, name, namespace));
    this.updateStatus(pod, status, false, statusFn);
    this.deps.prober?.stopLivenessAndStartup(uid);
    log('kubelet').info({ pod: podFullName(pod), gracePeriod: gracePeriodSeconds }, 'Killing pod');
    const pleg = this.deps.pleg;
    // The PLEG leaves the exits of this kill to the status read after it (podStopped).
    pleg.expectPodStop?.(uid);
    let stopped: { status: PodRuntimeStatus; observed: number } | undefined;
    try {
      await this.deps.runtime.killPod(pod, runningPodFromStatus(status), gracePeriodSeconds);
      stopped = await this.readStopped(ctx, pod);
    } finally {
      pleg.podStopped?.(uid, stopped);
    }
    if (!stopped) return undefined; // superseded by a shorter grace period
    this.updateStatus(pod, stopped.status, true, statusFn);
    return stopped.status;
  }

  /**
   * After a successful kill: the pod's status, checked to show nothing running (upstream's guard
   * against a runtime that acknowledged the stops without doing them). Without a PLEG that takes
   * the status (podStopped), the PLEG relists to see the kill, as it did before it could.
   */
  private async readStopped(
    ctx: SyncContext,
    pod: Pod,
  ): Promise<{ status: PodRuntimeStatus; observed: number } | undefined> {
    const { uid, name, namespace } = podNames(pod);
    if (ctx.signal.aborted || !this.deps.pleg.podStopped) void this.deps.pleg.relist();
    if (ctx.signal.aborted) return undefined;
    this.waiting.delete(uid);
    const observed = this.clock.now();
    const status = await this.deps.runtime.getPodStatus(uid, name, namespace);
    const stillRunning = status.containerStatuses.filter((c) => c.state === 'running').map((c) => c.name);
    if (stillRunning.length > 0) {
      void this.deps.pleg.relist();
      throw new KubeletError(
        'KTS_ERR_CRI_REPLY',
        `detected running containers after a successful KillPod, CRI violation: ${stillRunning.join(', ')}; the pod worker retries the kill`,
      );
    }
    return { status, observed };
  }

  async syncTerminatingRuntimePod(_ctx: SyncContext, running: RunningPod): Promise<void> {
    // Orphans have no spec left to read a grace period from: upstream uses a minimal one.
    await this.deps.runtime.killPod(undefined, running, 1);
    void this.deps.pleg.relist();
  }

  /**
   * upstream SyncTerminatedPod: the final status, from a runtime status observed after the kill;
   * then the volume manager tears the pod's volumes down (tmpfs unmounted, secrets deleted). A teardown that
   * fails is left to garbage collection, which tries again.
   */
  async syncTerminatedPod(_ctx: SyncContext, pod: Pod, runtimeStatus: PodRuntimeStatus | undefined): Promise<void> {
    const uid = podUID(pod);
    const status = runtimeStatus ?? (await this.deps.runtime.getPodStatus(uid, podName(pod), podNamespace(pod)));
    const apiStatus = this.updateStatus(pod, status, true);
    this.waiting.delete(uid);
    await this.volumeManager
      .unmountPodVolumes(uid)
      .catch((err: unknown) =>
        log('kubelet').warn(
          { pod: podFullName(pod), err: errorMessage(err) },
          'cannot tear down pod volumes; garbage collection will retry',
        ),
      );
    // upstream statusManager.TerminatePod: the pod leaves in a terminal phase.
    this.deps.statusManager.setPodStatus(pod, terminatedPodStatus(pod, apiStatus));
  }

  private updateStatus(
    pod: Pod,
    runtimeStatus: PodRuntimeStatus,
    podIsTerminal: boolean,
    statusFn?: PodStatusFunc,
  ): ApiPodStatus {
    const uid = podUID(pod);
    const previous = this.deps.statusManager.getPodStatus(uid);
    const apiStatus = generateAPIPodStatus({
      pod,
      runtime: runtimeStatus,
      waiting: this.waiting.get(uid) ?? EMPTY_WAITING,
      previous,
      podIsTerminal,
      hostIP: this.deps.hostIP,
      hostIPs: this.deps.hostIPs,
      now: new Date(this.clock.now()),
      probes: this.deps.probes,
      wasOomKilled: this.deps.wasOomKilled,
      podSyncHandlers: this.podSyncHandlers,
      resizeConditions: this.deps.allocation?.resizeConditions(uid),
      containerResources: this.deps.allocation
        ? (c, newest) => this.deps.allocation!.containerResources(uid, c, newest)
        : undefined,
    });
    statusFn?.(apiStatus);
    this.deps.statusManager.setPodStatus(pod, apiStatus);
    this.deps.prober?.updatePod(pod, apiStatus, podIsTerminal || isTerminalPhase(apiStatus.phase));
    if (apiStatus.phase === 'Running' && previous?.phase !== 'Running') {
      const seen = this.firstSeen.get(uid);
      if (seen !== undefined) {
        const now = this.clock.now();
        metrics.podStartDuration.observe((now - seen) / 1000);
        this.firstSeen.delete(uid);
        const created = createdAtMs(pod);
        observePodRunning(uid, Number.isFinite(created) ? created : seen, now, pod.spec?.hostNetwork === true);
      }
    }
    return apiStatus;
  }

  /** /healthz: empty when healthy. */
  healthErrors(): string[] {
    return this.runtimeState.healthErrors();
  }
}

/**
 * metadata.creationTimestamp in ms (a Date from manifests, an RFC 3339 string from the API);
 * none sorts first, as upstream's zero time. Compared as numbers: sorting by String() compared
 * Date.toString() texts ("Wed Nov 25 …", weekday first) with an ICU collator (localeCompare),
 * which also kept ICU's collation and time zone data resident.
 */
function createdAtMs(pod: Pod): number {
  const t = new Date(pod.metadata?.creationTimestamp ?? NaN).getTime();
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/** A copy of `pods`, oldest first (upstream HandlePodAdditions: sort.Sort(sliceutils.PodsByCreationTime)). */
export function byCreationTime(pods: readonly Pod[]): Pod[] {
  return pods
    .map((p) => ({ p, t: createdAtMs(p) }))
    .sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0))
    .map((x) => x.p);
}

/** upstream HandlePodCleanups: desired and active pods, split by static (label "true") or not (""). */
function setPodCountGauges(desired: readonly Pod[], active: readonly Pod[]): void {
  const staticCount = (pods: readonly Pod[]) => pods.filter((p) => isStaticPod(p)).length;
  metrics.desiredPods.set({ static: '' }, desired.length - staticCount(desired));
  metrics.desiredPods.set({ static: 'true' }, staticCount(desired));
  metrics.activePods.set({ static: '' }, active.length - staticCount(active));
  metrics.activePods.set({ static: 'true' }, staticCount(active));
}
