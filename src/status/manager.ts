/**
 * In-memory status manager. In standalone mode the status lives only here (served by /pods);
 * the apiserver sync (pods/status patches) is added with API-server mode. Every status is kept
 * normalized (normalize.ts: observedGeneration, the pod's termination message budget).
 */
import type { ApiPodStatus, Pod } from '../api/types.js';
import { normalizeStatus } from './normalize.js';
import type { StatusManager } from './types.js';

class MemoryStatusManager implements StatusManager {
  private readonly statuses = new Map<string, ApiPodStatus>();

  getPodStatus(uid: string): ApiPodStatus | undefined {
    return this.statuses.get(uid);
  }

  setPodStatus(pod: Pod, status: ApiPodStatus): void {
    const uid = pod.metadata?.uid;
    if (uid) this.statuses.set(uid, normalizeStatus(pod, status));
  }

  removePodStatus(uid: string): void {
    this.statuses.delete(uid);
  }

  removeOrphanStatuses(keep: ReadonlySet<string>): void {
    for (const uid of this.statuses.keys()) if (!keep.has(uid)) this.statuses.delete(uid);
  }
}

export function createStatusManager(): StatusManager {
  return new MemoryStatusManager();
}
