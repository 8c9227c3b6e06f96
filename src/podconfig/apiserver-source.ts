/**
 * The apiserver pod source (upstream config/apiserver.go: a reflector over pods with
 * fieldSelector spec.nodeName=<node> feeding an UndeltaStore): list, then watch from the list's
 * resourceVersion with bookmarks; every change pushes a SET of the complete pod list. A watch
 * that ends is resumed from the last resourceVersion seen (bookmarks keep it fresh); 410 Gone
 * (the resourceVersion was compacted) re-lists; failures back off 800 ms doubling to 30 s, as
 * client-go's reflector. Mirror pods (kubernetes.io/config.mirror) are not pods to run: they go
 * to `onMirrorPods` instead of into the SET.
 */
import type { Pod, PodList } from '../api/types.js';
import { ConfigMirrorAnnotationKey } from '../api/types.js';
import type { ApiClient, WatchEvent } from '../apiclient/types.js';
import { ApiError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { sleep } from '../util/clock.js';
import type { PodSource, PodUpdate } from './types.js';
import { ApiserverSource } from './types.js';

export interface ApiserverSourceOptions {
  client: ApiClient;
  nodeName: string;
  /** Every change of the node's mirror pods (the complete list). */
  onMirrorPods?: (pods: Pod[]) => void;
  /** Longest back-off between failed lists/watches (default 30 s). */
  maxBackoffMs?: number;
  /** Server-side watch timeout (default 5–10 min, random, as the reflector). */
  watchTimeoutSeconds?: () => number;
}

export const isMirrorPod = (p: Pod): boolean => p.metadata?.annotations?.[ConfigMirrorAnnotationKey] !== undefined;

class Expired extends Error {}

class ApiserverPodSource implements PodSource {
  private readonly abort = new AbortController();
  private readonly pods = new Map<string, Pod>();
  private resourceVersion = '';

  constructor(private readonly opts: ApiserverSourceOptions) {}

  start(push: (update: PodUpdate) => void): void {
    void this.run(push);
  }

  stop(): void {
    this.abort.abort();
  }

  private publish(push: (update: PodUpdate) => void): void {
    const all = [...this.pods.values()];
    push({ op: 'SET', source: ApiserverSource, pods: all.filter((p) => !isMirrorPod(p)).map((p) => structuredClone(p)) });
    this.opts.onMirrorPods?.(all.filter(isMirrorPod));
  }

  private async run(push: (update: PodUpdate) => void): Promise<void> {
    const signal = this.abort.signal;
    const path = '/api/v1/pods';
    const fieldSelector = `spec.nodeName=${this.opts.nodeName}`;
    let backoff = 800;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          const list = await this.opts.client.request<PodList>({ method: 'GET', path, query: { fieldSelector } });
          this.pods.clear();
          for (const p of list.items) this.pods.set(p.metadata!.uid!, p);
          this.resourceVersion = list.metadata?.resourceVersion ?? '';
          needList = false;
          log('podconfig').info({ pods: list.items.length, resourceVersion: this.resourceVersion }, 'Listed pods bound to this node');
          this.publish(push);
        }
        const timeoutSeconds = this.opts.watchTimeoutSeconds?.() ?? 300 + Math.floor(Math.random() * 300);
        await this.opts.client.watch<Pod>(path, { fieldSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds }, (e) => this.onEvent(e, push), signal);
        backoff = 800;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof Expired) {
          log('podconfig').info({ resourceVersion: this.resourceVersion }, 'Pod watch expired (410 Gone); listing again');
          needList = true;
          continue;
        }
        const level = err instanceof ApiError && err.statusCode === 0 ? 'info' : 'warn';
        log('podconfig')[level]({ err: errorMessage(err), retryInMs: backoff }, 'Pod list/watch failed; retrying');
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, this.opts.maxBackoffMs ?? 30_000);
      }
    }
  }

  private onEvent(e: WatchEvent<Pod>, push: (update: PodUpdate) => void): void {
    if (e.type === 'ERROR') {
      const st = e.object as unknown as { code?: number; message?: string };
      if (st.code === 410) throw new Expired(st.message ?? 'Gone');
      throw new ApiError(st.code ?? 500, 'WatchError', `pod watch: ${st.message ?? 'error event'}`);
    }
    const rv = e.object.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    const uid = e.object.metadata?.uid;
    if (!uid) return;
    if (e.type === 'DELETED') this.pods.delete(uid);
    else this.pods.set(uid, e.object);
    this.publish(push);
  }
}

export function newApiserverSource(opts: ApiserverSourceOptions): PodSource {
  return new ApiserverPodSource(opts);
}
