/**
 * The runtime manager (upstream kubeGenericRuntimeManager): the Runtime interface over a CRI
 * RuntimeService and ImageService. It holds the only state that outlives a call, the crash-loop
 * and image-pull back-offs; everything else is read back from the runtime each time.
 */
import type { Pod } from '../api/types.js';
import type { ImageService } from '../cri/types.js';
import type { Clock } from '../util/clock.js';
import { Backoff } from './backoff.js';
import { garbageCollect } from './gc.js';
import { ImagePuller } from './images.js';
import { killPod } from './kill.js';
import { getPodStatus, getPods } from './runtime-status.js';
import { syncPod, type SyncDeps } from './sync-pod.js';
import type { PodRuntimeStatus, PodSyncResult, RunningPod, Runtime } from './types.js';

/** What the manager is built from: the sync dependencies it does not create itself. */
export type RuntimeManagerOptions = Omit<SyncDeps, 'puller' | 'crashBackOff'> & {
  images: ImageService;
  clock: Clock;
};

export class KubeGenericRuntimeManager implements Runtime {
  private readonly crashBackOff: Backoff;
  private readonly imageBackOff: Backoff;
  private readonly syncDeps: SyncDeps;

  constructor(private readonly opts: RuntimeManagerOptions) {
    this.crashBackOff = new Backoff(opts.clock);
    this.imageBackOff = new Backoff(opts.clock);
    this.syncDeps = {
      runtime: opts.runtime,
      puller: new ImagePuller(opts.images, this.imageBackOff),
      crashBackOff: this.crashBackOff,
      probeFailure: opts.probeFailure,
      podLogsDir: opts.podLogsDir,
      rootDir: opts.rootDir,
      nodeName: opts.nodeName,
      hostIP: opts.hostIP,
      dns: opts.dns,
      memoryCapacity: opts.memoryCapacity,
    };
  }

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    const v = await this.opts.runtime.version();
    return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: v.runtimeApiVersion };
  }

  async ready(): Promise<{ ready: boolean; reason?: string }> {
    const { conditions } = await this.opts.runtime.status();
    for (const type of ['RuntimeReady', 'NetworkReady']) {
      const c = conditions.find((x) => x.type === type);
      if (!c) return { ready: false, reason: `runtime did not report ${type}` };
      if (!c.status) return { ready: false, reason: `${type}=false reason:${c.reason} message:${c.message}` };
    }
    return { ready: true };
  }

  getPods(all: boolean): Promise<RunningPod[]> {
    return getPods(this.opts.runtime, all);
  }

  getPodStatus(uid: string, name: string, namespace: string): Promise<PodRuntimeStatus> {
    return getPodStatus(this.opts.runtime, uid, name, namespace, () => this.opts.clock.now());
  }

  syncPod(pod: Pod, status: PodRuntimeStatus): Promise<PodSyncResult> {
    return syncPod(this.syncDeps, pod, status);
  }

  killPod(pod: Pod | undefined, running: RunningPod, gracePeriodSeconds?: number): Promise<void> {
    return killPod(this.opts.runtime, pod, running, gracePeriodSeconds);
  }

  async garbageCollect(activePodUids: ReadonlySet<string>): Promise<void> {
    await garbageCollect({ runtime: this.opts.runtime, podLogsDir: this.opts.podLogsDir, rootDir: this.opts.rootDir, now: () => this.opts.clock.now() }, activePodUids);
    this.crashBackOff.gc();
    this.imageBackOff.gc();
  }
}
