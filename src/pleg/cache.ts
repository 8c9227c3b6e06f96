/**
 * Pod status cache with timestamps (upstream kubecontainer.cache). A pod worker that synced at
 * time T asks for a status newer than T, so it never acts twice on the same observation; the
 * PLEG calls updateTime after each relist so unchanged pods are "fresh" without re-inspection.
 */
import type { CachedPodStatus, PodStatusCache } from './types.js';

interface Waiter {
  uid: string;
  minTime: number;
  resolve: (v: CachedPodStatus) => void;
}

class PodCache implements PodStatusCache {
  private readonly entries = new Map<string, CachedPodStatus>();
  private globalTime = 0;
  private waiters: Waiter[] = [];

  get(uid: string): CachedPodStatus | undefined {
    return this.entries.get(uid);
  }

  getNewerThan(uid: string, minTime: number, signal?: AbortSignal): Promise<CachedPodStatus> {
    const ready = this.ifNewer(uid, minTime);
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const waiter: Waiter = { uid, minTime, resolve };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(this.entryOrEmpty(uid));
        },
        { once: true },
      );
    });
  }

  set(uid: string, status: CachedPodStatus['status'], error: Error | undefined, observed: number): void {
    this.entries.set(uid, { status, error, modified: observed });
    this.notify();
  }

  delete(uid: string): void {
    this.entries.delete(uid);
  }

  updateTime(time: number): void {
    this.globalTime = Math.max(this.globalTime, time);
    this.notify();
  }

  private entryOrEmpty(uid: string): CachedPodStatus {
    const e = this.entries.get(uid);
    return e
      ? { ...e, modified: Math.max(e.modified, this.globalTime) }
      : { status: undefined, error: undefined, modified: this.globalTime };
  }

  private ifNewer(uid: string, minTime: number): CachedPodStatus | undefined {
    const e = this.entries.get(uid);
    if ((e && e.modified > minTime) || this.globalTime > minTime) return this.entryOrEmpty(uid);
    return undefined;
  }

  private notify(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      const v = this.ifNewer(w.uid, w.minTime);
      if (v) w.resolve(v);
      else still.push(w);
    }
    this.waiters = still;
  }
}

export function createPodStatusCache(): PodStatusCache {
  return new PodCache();
}
