/**
 * The runtime manager (upstream kubeGenericRuntimeManager): the Runtime interface over a CRI
 * RuntimeService, with the ImageManager (src/images) for images. It holds the only state that
 * outlives a call, the crash-loop back-off; everything else is read back from the runtime each
 * time.
 */
import type { Pod } from '../api/types.js';
import type { PodContainerManager, ResourceConfig } from '../cm/types.js';
import type { RuntimeStatus } from '../cri/types.js';
import type { Clock } from '../util/clock.js';
import { log } from '../util/log.js';
import { Backoff, type BackOffSettings } from '../util/backoff.js';
import { garbageCollect, type GCPolicy } from './gc.js';
import { OrphanedPodCgroups } from './orphaned-pod-cgroups.js';
import { MIN_DEAD_CONTAINERS_IN_POD, PodContainerDeletor } from './container-deletor.js';
import { removeContainer } from './remove.js';
import { killPod } from './kill.js';
import { getPodStatus, getPods, patchPodStatus, podIPsFromRuntime } from './runtime-status.js';
import { killDeps, syncPod, type SyncDeps } from './sync-pod.js';
import type {
  PodRuntimeStatus,
  PodSyncResult,
  PreviousPodStatus,
  RunningPod,
  Runtime,
  RuntimeExitReport,
} from './types.js';

/** What the manager is built from: the sync dependencies it does not create itself. */
export type RuntimeManagerOptions = Omit<SyncDeps, 'crashBackOff' | 'podIPs'> & {
  /** upstream --root-dir: garbage collection looks for the pod directories of pods gone. */
  rootDir: string;
  clock: Clock;
  crashLoopBackOff: BackOffSettings;
  gcPolicy: GCPolicy;
};

function errnoOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Pod cgroups that turn themselves off, with one warning, when the cgroup filesystem refuses us
 * (not root, read-only /sys/fs/cgroup): a missing capability degrades, it is not fatal.
 */
class DegradingPodContainerManager implements PodContainerManager {
  private disabled = false;
  constructor(private readonly inner: PodContainerManager) {}

  get enabled(): boolean {
    return !this.disabled && this.inner.enabled;
  }

  getPodContainerName(pod: Pod): string {
    return this.enabled ? this.inner.getPodContainerName(pod) : '';
  }

  async ensureExists(pod: Pod): Promise<void> {
    if (!this.enabled) return;
    try {
      await this.inner.ensureExists(pod);
    } catch (err) {
      const code = errnoOf(err);
      if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw err;
      this.disabled = true;
      log('cm').warn(
        { err: String(err) },
        'cannot create pod cgroups; pod cgroups are disabled (the runtime places the containers)',
      );
    }
  }

  exists(pod: Pod): Promise<boolean> {
    return this.enabled ? this.inner.exists(pod) : Promise.resolve(true);
  }

  destroy(name: string): Promise<void> {
    return this.inner.destroy(name);
  }

  setPodCgroupConfig(pod: Pod, r: ResourceConfig): Promise<void> {
    return this.enabled ? this.inner.setPodCgroupConfig(pod, r) : Promise.resolve();
  }

  getAllPodsFromCgroups(): Promise<Map<string, string>> {
    return this.enabled ? this.inner.getAllPodsFromCgroups() : Promise.resolve(new Map());
  }
}

export class KubeGenericRuntimeManager implements Runtime {
  private readonly crashBackOff: Backoff;
  private readonly syncDeps: SyncDeps;
  private readonly podCgroups: PodContainerManager;
  private readonly deletor: PodContainerDeletor;
  private readonly orphanedCgroups: OrphanedPodCgroups;

  constructor(private readonly opts: RuntimeManagerOptions) {
    this.deletor = new PodContainerDeletor(
      (id) => removeContainer(opts.runtime, id),
      Math.max(opts.gcPolicy.maxPerPodContainer, MIN_DEAD_CONTAINERS_IN_POD),
    );
    this.crashBackOff = new Backoff(opts.clock, opts.crashLoopBackOff.initialMs, opts.crashLoopBackOff.maxMs);
    this.podCgroups = new DegradingPodContainerManager(opts.podCgroups);
    this.orphanedCgroups = new OrphanedPodCgroups(this.podCgroups);
    this.syncDeps = {
      runtime: opts.runtime,
      imageManager: opts.imageManager,
      crashBackOff: this.crashBackOff,
      probeFailure: opts.probeFailure,
      startupProbeSucceeded: opts.startupProbeSucceeded,
      recorder: opts.recorder,
      podLogsDir: opts.podLogsDir,
      nodeName: opts.nodeName,
      hostIP: opts.hostIP,
      hostIPs: opts.hostIPs,
      dns: opts.dns,
      memoryCapacity: opts.memoryCapacity,
      allocatable: opts.allocatable,
      podCgroups: this.podCgroups,
      hookTimeoutMs: opts.hookTimeoutMs,
      podIPs: (uid) => podIPsFromRuntime(opts.runtime, uid, opts.hostIPs ?? (opts.hostIP ? [opts.hostIP] : [])),
      objects: opts.objects,
      services: opts.services,
      pullSecretsFor: opts.pullSecretsFor,
      runtimeClasses: opts.runtimeClasses,
      ephemeralRefusal: opts.ephemeralRefusal,
      userNamespaces: opts.userNamespaces,
      volumes: opts.volumes,
      criStarts: opts.criStarts,
      rootDir: opts.rootDir,
      actuated: opts.actuated,
      seccompDefault: opts.seccompDefault,
      deviceOptions: opts.deviceOptions,
    };
  }

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const v = await this.opts.runtime.version();
    return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: v.runtimeApiVersion };
  }

  async status(): Promise<RuntimeStatus> {
    return this.opts.runtime.status();
  }

  getPods(all: boolean): Promise<RunningPod[]> {
    return getPods(this.opts.runtime, all);
  }

  getPodStatus(uid: string, name: string, namespace: string, previous?: PreviousPodStatus): Promise<PodRuntimeStatus> {
    return getPodStatus(this.opts.runtime, { uid, name, namespace }, () => this.opts.clock.now(), previous);
  }

  patchPodStatus(previous: PodRuntimeStatus, report: RuntimeExitReport): Promise<PodRuntimeStatus | undefined> {
    return patchPodStatus(previous, report, () => this.opts.clock.now());
  }

  syncPod(pod: Pod, status: PodRuntimeStatus, signal?: AbortSignal): Promise<PodSyncResult> {
    return syncPod(this.syncDeps, pod, status, signal);
  }

  killPod(pod: Pod | undefined, running: RunningPod, gracePeriodSeconds?: number): Promise<void> {
    return killPod(killDeps(this.syncDeps), pod, running, gracePeriodSeconds);
  }

  deleteContainersInPod(exitedContainerId: string, status: PodRuntimeStatus, removeAll: boolean): void {
    this.deletor.deleteContainersInPod(exitedContainerId, status, removeAll);
  }

  async garbageCollect(activePodUids: ReadonlySet<string>): Promise<void> {
    await garbageCollect(
      {
        runtime: this.opts.runtime,
        podLogsDir: this.opts.podLogsDir,
        rootDir: this.opts.rootDir,
        now: () => this.opts.clock.now(),
        policy: this.opts.gcPolicy,
        removePodVolumes: (uid) => this.opts.volumes.unmountPodVolumes(uid),
        cleanupOrphanedVolumes: () => this.opts.volumes.cleanupOrphanedVolumes?.() ?? Promise.resolve(),
      },
      activePodUids,
    );
    this.crashBackOff.gc();
  }

  cleanupOrphanedPodCgroups(keep: (uid: string) => Promise<boolean>): Promise<void> {
    return this.orphanedCgroups.cleanup(keep);
  }
}
