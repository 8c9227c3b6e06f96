/**
 * A minimal PLEG for kubelet unit tests: each relist reads every pod's status from the runtime
 * into the cache and reports a PodSync event for pods whose containers changed. Independent of
 * the real PLEG's construction so these tests only exercise the kubelet.
 */
import type { Runtime, RunningPod } from '../../src/kuberuntime/types.js';
import type { PodLifecycleEvent, PodLifecycleEventGenerator, PodStatusCache } from '../../src/pleg/types.js';

export class FakePLEG implements PodLifecycleEventGenerator {
  private readonly listeners = new Set<(e: PodLifecycleEvent) => void>();
  private timer: NodeJS.Timeout | undefined;
  private last = new Map<string, string>();

  constructor(
    private readonly runtime: Runtime,
    private readonly cache: PodStatusCache,
    private readonly periodMs = 20,
    private readonly filter: (p: RunningPod) => boolean = () => true,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.relist(), this.periodMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  watch(listener: (e: PodLifecycleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  healthy() {
    return { ok: true };
  }

  async relist(): Promise<void> {
    const now = Date.now();
    for (const p of (await this.runtime.getPods(true)).filter(this.filter)) {
      const status = await this.runtime.getPodStatus(p.uid, p.name, p.namespace).catch(() => undefined);
      const key = JSON.stringify(status?.containerStatuses.map((c) => [c.id, c.state]) ?? []);
      this.cache.set(p.uid, status, undefined, now);
      if (this.last.get(p.uid) !== key) {
        this.last.set(p.uid, key);
        for (const l of this.listeners) l({ id: p.uid, type: 'PodSync', data: '' });
      }
    }
    this.cache.updateTime(now);
  }
}
