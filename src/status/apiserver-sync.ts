/**
 * The status manager of API server mode (upstream status.manager syncPod/syncBatch): it keeps
 * the in-memory statuses (delegating to the standalone manager) and patches each pod's
 * pods/<name>/status when the computed status differs from what it last sent, with the pod's
 * UID as precondition (a pod deleted and recreated under the same name is never written to).
 * A terminal phase on the API is never regressed. Once a pod that carries a deletionTimestamp
 * has terminated, the final DELETE (grace period 0, UID precondition) removes it. Static pods
 * report through their mirror pod (its UID is the precondition) and are never deleted here.
 *
 * Syncs run one at a time, right after a change and every `retryMs` for those that failed, so a
 * status computed during an apiserver outage goes out when the server is back.
 */
import type { ApiPodStatus, Pod, PodCondition } from '../api/types.js';
import type { ApiClient } from '../apiclient/types.js';
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { isStaticPod, isTerminalPhase as isTerminal, klogRef } from '../api/pod.js';
import { normalizeStatus } from './normalize.js';
import { podStatusPatch } from './status-patch.js';
import type { StatusManager } from './types.js';

export interface ApiStatusSyncDeps {
  client: ApiClient;
  /** The in-memory manager (what /pods and the kubelet read). */
  base: StatusManager;
  /** The mirror pod UID of a static pod, once the mirror pod exists and matches. */
  mirrorPodUID?: (staticPod: Pod) => string | undefined;
  /** Retry period of failed or waiting syncs (default 1 s). */
  retryMs?: number;
  /** Every pod is looked at again this often (upstream syncBatch, 10 s): e.g. a recreated mirror pod. */
  resyncMs?: number;
  /**
   * upstream PodResourcesAreReclaimed: false while the pod's volumes are still set up (a CSI
   * driver that is down delays the teardown); the final delete waits for it. Absent: reclaimed.
   */
  podResourcesReclaimed?: (uid: string) => Promise<boolean>;
}

interface Entry {
  pod: Pod;
  status: ApiPodStatus;
  /** JSON of the status last accepted by the apiserver, and the UID it went to. */
  sent?: string;
  sentUid?: string;
  deleted?: boolean;
}

class ApiStatusManager implements StatusManager {
  private readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private running = false;
  private readonly timer: NodeJS.Timeout;
  private readonly resync: NodeJS.Timeout;

  constructor(private readonly deps: ApiStatusSyncDeps) {
    this.timer = setInterval(() => this.kick(), deps.retryMs ?? 1000);
    this.timer.unref();
    this.resync = setInterval(() => {
      for (const uid of this.entries.keys()) this.dirty.add(uid);
      this.kick();
    }, deps.resyncMs ?? 10_000);
    this.resync.unref();
  }

  getPodStatus(uid: string): ApiPodStatus | undefined {
    return this.deps.base.getPodStatus(uid);
  }

  setPodStatus(pod: Pod, status: ApiPodStatus): void {
    this.deps.base.setPodStatus(pod, status);
    const uid = pod.metadata?.uid;
    if (!uid) return;
    // Updated in place: a sync in flight records what it sent on this same entry, so a status set
    // meanwhile is compared with it (a new object would forget it and patch the same status again).
    const prev = this.entries.get(uid);
    if (prev) Object.assign(prev, { pod, status: normalizeStatus(pod, status) });
    else this.entries.set(uid, { pod, status: normalizeStatus(pod, status) });
    this.dirty.add(uid);
    this.kick();
  }

  removePodStatus(uid: string): void {
    this.deps.base.removePodStatus(uid);
    this.entries.delete(uid);
    this.dirty.delete(uid);
  }

  removeOrphanStatuses(keep: ReadonlySet<string>): void {
    this.deps.base.removeOrphanStatuses(keep);
    for (const uid of this.entries.keys()) {
      if (!keep.has(uid)) {
        this.entries.delete(uid);
        this.dirty.delete(uid);
      }
    }
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.resync);
  }

  private kick(): void {
    if (this.running || this.dirty.size === 0) return;
    this.running = true;
    void this.drain().finally(() => (this.running = false));
  }

  private async drain(): Promise<void> {
    for (const uid of [...this.dirty]) {
      const entry = this.entries.get(uid);
      this.dirty.delete(uid);
      if (!entry) continue;
      try {
        if (!(await this.syncPod(entry))) this.dirty.add(uid);
      } catch (err) {
        this.dirty.add(uid);
        log('status').warn(
          { pod: klogRef(entry.pod.metadata), err: errorMessage(err) },
          'Failed to update status for pod; will retry',
        );
        if (err instanceof ApiError && err.statusCode === 0) return; // server away: wait for the next tick
      }
    }
  }

  private async reclaimed(uid: string): Promise<boolean> {
    return (await this.deps.podResourcesReclaimed?.(uid).catch(() => false)) ?? true;
  }

  /** One pod: patch when changed, then the final delete when due. False = try again later. */
  private async syncPod(entry: Entry): Promise<boolean> {
    if (entry.deleted) return true;
    const { pod } = entry;
    const meta = pod.metadata!;
    const isStatic = isStaticPod(pod);
    const uid = isStatic ? this.deps.mirrorPodUID?.(pod) : meta.uid;
    if (!uid) return false; // static pod without its mirror pod yet
    const path = `/api/v1/namespaces/${encodeURIComponent(meta.namespace ?? 'default')}/pods/${encodeURIComponent(meta.name!)}`;
    const status: ApiPodStatus = { ...entry.status };
    // Never move a pod out of a terminal phase on the API (upstream checks the same).
    if (!isStatic && isTerminal(pod.status?.phase) && !isTerminal(status.phase)) status.phase = pod.status!.phase;
    const json = JSON.stringify(status);
    if (json !== entry.sent || uid !== entry.sentUid) {
      try {
        await this.deps.client.request({
          method: 'PATCH',
          path: `${path}/status`,
          contentType: 'application/strategic-merge-patch+json',
          body: {
            metadata: { uid },
            status: podStatusPatch(
              lastKnown(entry, uid),
              withConditionDeletes(status, [pod.status, lastSent(entry.sent)]),
            ),
          },
        });
      } catch (err) {
        if (err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 409)) {
          log('status').info(
            { pod: klogRef(meta), reason: err.reason },
            'Pod is gone or was replaced on the API server; status not written',
          );
          return true;
        }
        throw err;
      }
      entry.sent = json;
      entry.sentUid = uid;
      log('status').debug({ pod: klogRef(meta), phase: status.phase }, 'Patched pod status');
    }
    if (!isStatic && meta.deletionTimestamp && isTerminal(status.phase) && !anyRunning(status)) {
      // The object goes only once nothing of the pod is left on the node (upstream canBeDeleted).
      if (!(await this.reclaimed(meta.uid!))) return false;
      await this.deps.client
        .request({
          method: 'DELETE',
          path,
          body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid } },
        })
        .catch((err: unknown) => {
          if (!(err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 409))) throw err;
        });
      entry.deleted = true;
      log('status').info({ pod: klogRef(meta) }, 'Pod fully terminated and removed from the API server');
    }
    return true;
  }
}

/** Whether any container of the status, init and ephemeral ones too, still runs (upstream canBeDeleted). */
function anyRunning(status: ApiPodStatus): boolean {
  const all = [
    ...(status.initContainerStatuses ?? []),
    ...(status.containerStatuses ?? []),
    ...(status.ephemeralContainerStatuses ?? []),
  ];
  return all.some((c) => c.state?.running);
}

/** What the API holds as far as we know: what we last sent there, else the status the pod came with. */
function lastKnown(entry: Entry, uid: string): unknown {
  return entry.sent !== undefined && entry.sentUid === uid ? JSON.parse(entry.sent) : entry.pod.status;
}

/** A StatusManager that also syncs to the apiserver; `stop()` ends its retry timer. */
export function createApiStatusManager(deps: ApiStatusSyncDeps): StatusManager & { stop(): void } {
  return new ApiStatusManager(deps);
}

/** Conditions the kubelet sets and clears again (in-place resize): cleared ones need an explicit delete. */
const CLEARED_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'];

/**
 * A strategic merge patch keeps list entries it does not name: a resize condition that the API
 * has and our status no longer has is deleted by a `$patch: delete` entry (what upstream's
 * two-way patch emits).
 */
function withConditionDeletes(status: ApiPodStatus, before: readonly (ApiPodStatus | undefined)[]): ApiPodStatus {
  const ours = new Set((status.conditions ?? []).map((c) => c.type));
  const had = new Set(before.flatMap((b) => (b?.conditions ?? []).map((c) => c.type)));
  const gone = CLEARED_CONDITIONS.filter((t) => had.has(t) && !ours.has(t));
  if (gone.length === 0) return status;
  const deletes = gone.map((type) => ({ type, $patch: 'delete' }) as unknown as PodCondition);
  return { ...status, conditions: [...(status.conditions ?? []), ...deletes] };
}

/** The status last patched (its JSON), if any. */
function lastSent(json: string | undefined): ApiPodStatus | undefined {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as ApiPodStatus;
  } catch {
    return undefined;
  }
}
