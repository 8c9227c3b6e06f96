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
  /**
   * Waiters by pod UID: a set() looks at its own pod's waiters only. One list of all waiters made
   * each of a relist's per-pod inspections scan every waiting worker, O(pods²) per relist while
   * 250 pods start (issue 30); updateTime, once per relist, still looks at all of them.
   */
  private readonly waiters = new Map<string, Set<Waiter>>();

  get(uid: string): CachedPodStatus | undefined {
    return this.entries.get(uid);
  }

  getNewerThan(uid: string, minTime: number, signal?: AbortSignal): Promise<CachedPodStatus> {
    const ready = this.ifNewer(uid, minTime);
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const waiter: Waiter = { uid, minTime, resolve };
      const forPod = this.waiters.get(uid) ?? new Set<Waiter>();
      this.waiters.set(uid, forPod.add(waiter));
      signal?.addEventListener(
        'abort',
        () => {
          this.drop(waiter);
          resolve(this.entryOrEmpty(uid));
        },
        { once: true },
      );
    });
  }

  newerThan(uid: string, minTime: number): CachedPodStatus | undefined {
    return this.ifNewer(uid, minTime);
  }

  set(uid: string, status: CachedPodStatus['status'], error: Error | undefined, observed: number): void {
    this.entries.set(uid, { status, error, modified: observed });
    const forPod = this.waiters.get(uid);
    if (forPod) this.notify(forPod);
  }

  delete(uid: string): void {
    this.entries.delete(uid);
  }

  updateTime(time: number): void {
    this.globalTime = Math.max(this.globalTime, time);
    for (const forPod of [...this.waiters.values()]) this.notify(forPod);
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

  private drop(w: Waiter): void {
    const forPod = this.waiters.get(w.uid);
    forPod?.delete(w);
    if (forPod?.size === 0) this.waiters.delete(w.uid);
  }

  /** Resolves the waiters of one pod whose minimum time has passed. */
  private notify(forPod: Set<Waiter>): void {
    for (const w of [...forPod]) {
      const v = this.ifNewer(w.uid, w.minTime);
      if (!v) continue;
      this.drop(w);
      w.resolve(v);
    }
  }
}

export function createPodStatusCache(): PodStatusCache {
  return new PodCache();
}
