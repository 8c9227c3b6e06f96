/**
 * Mirror pods (upstream mirror_client.go + pod manager's static/mirror pairing): every static
 * pod gets a pod object on the API server, with the kubernetes.io/config.mirror annotation set
 * to the static pod's config hash and an owner reference to the Node, so that the cluster sees
 * it. A mirror pod that was deleted, is being deleted, or carries another hash (the manifest
 * changed) is replaced; a mirror pod whose static pod is gone is deleted. The static pod's
 * status is written to its mirror pod (mirrorPodUID).
 */
import type { Pod } from '../api/types.js';
import { podName, podNamespace } from '../api/pod.js';
import { ConfigHashAnnotationKey, ConfigMirrorAnnotationKey, ConfigSeenAnnotationKey } from '../api/types.js';
import type { ApiClient } from '../apiclient/types.js';
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';

export interface MirrorPodDeps {
  client: ApiClient;
  nodeName: string;
  nodeUID(): string | undefined;
  /** The static pods this kubelet runs now. */
  staticPods(): Pod[];
  /** Reconcile period (default 2 s; every mirror pod change also triggers one). */
  periodMs?: number;
}

const key = (p: Pod) => `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`;
const hashOf = (p: Pod) => p.metadata?.annotations?.[ConfigHashAnnotationKey] ?? p.metadata?.uid ?? '';

export class MirrorPods {
  private mirrors = new Map<string, Pod>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly deps: MirrorPodDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.reconcile(), this.deps.periodMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The apiserver source's current mirror pods of this node. */
  setMirrorPods(pods: Pod[]): void {
    this.mirrors = new Map(pods.map((p) => [key(p), p]));
    void this.reconcile();
  }

  /** UID of the mirror pod of `staticPod`, when it exists and matches the static pod. */
  mirrorPodUID(staticPod: Pod): string | undefined {
    const m = this.mirrors.get(key(staticPod));
    return m && this.matches(staticPod, m) ? m.metadata?.uid : undefined;
  }

  private matches(staticPod: Pod, mirror: Pod): boolean {
    return (
      mirror.metadata?.annotations?.[ConfigMirrorAnnotationKey] === hashOf(staticPod) &&
      !mirror.metadata?.deletionTimestamp
    );
  }

  async reconcile(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const statics = this.deps.staticPods();
      const wanted = new Set(statics.map(key));
      for (const pod of statics) {
        const mirror = this.mirrors.get(key(pod));
        if (mirror && this.matches(pod, mirror)) continue;
        if (mirror && !mirror.metadata?.deletionTimestamp) await this.remove(mirror, 'its static pod changed');
        await this.create(pod);
      }
      for (const [k, mirror] of this.mirrors)
        if (!wanted.has(k)) await this.remove(mirror, 'orphaned: no static pod of that name');
    } catch (err) {
      log('mirrorpods').warn({ err: errorMessage(err) }, 'Mirror pod reconcile failed; will retry');
    } finally {
      this.busy = false;
    }
  }

  private async create(pod: Pod): Promise<void> {
    const nodeUID = this.deps.nodeUID();
    if (!nodeUID) return;
    // config.seen is this kubelet's local bookkeeping, not part of the pod the cluster sees.
    const annotations: Record<string, string> = {
      ...pod.metadata?.annotations,
      [ConfigMirrorAnnotationKey]: hashOf(pod),
    };
    delete annotations[ConfigSeenAnnotationKey];
    const mirror: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: podName(pod),
        namespace: podNamespace(pod),
        labels: pod.metadata?.labels,
        annotations,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.deps.nodeName, uid: nodeUID, controller: true }],
      },
      spec: { ...pod.spec!, nodeName: this.deps.nodeName },
    };
    try {
      const created = await this.deps.client.request<Pod>({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(mirror.metadata!.namespace!)}/pods`,
        body: mirror,
      });
      this.mirrors.set(key(created), created);
      log('mirrorpods').info({ pod: key(pod) }, 'Created mirror pod');
    } catch (err) {
      if (!(err instanceof ApiError && err.statusCode === 409)) throw err; // exists: the watch will tell us
    }
  }

  private async remove(mirror: Pod, why: string): Promise<void> {
    const m = mirror.metadata!;
    log('mirrorpods').info({ pod: key(mirror), why }, 'Deleting mirror pod');
    await this.deps.client
      .request({
        method: 'DELETE',
        path: `/api/v1/namespaces/${encodeURIComponent(m.namespace ?? 'default')}/pods/${encodeURIComponent(m.name!)}`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: m.uid } },
      })
      .catch((err: unknown) => {
        if (!(err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 409))) throw err;
      });
    this.mirrors.delete(key(mirror));
  }
}
