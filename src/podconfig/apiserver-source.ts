/**
 * The apiserver pod source (upstream config/apiserver.go: a reflector over pods with
 * fieldSelector spec.nodeName=<node> feeding an UndeltaStore): list + watch through
 * apiclient's reflector (resourceVersion, bookmarks, 410 → re-list, back-off), and every change
 * pushes a SET of the complete pod list. Mirror pods (kubernetes.io/config.mirror) are not pods
 * to run: they go to `onMirrorPods` instead of into the SET.
 */
import type { Pod } from '../api/types.js';
import { ConfigMirrorAnnotationKey } from '../api/types.js';
import type { ApiClient } from '../apiclient/types.js';
import { runReflector } from '../apiclient/reflector.js';
import { log } from '../util/log.js';
import type { PodSource, PodUpdate } from './types.js';
import { ApiserverSource } from './types.js';
import { klogRef } from '../api/pod.js';

export interface ApiserverSourceOptions {
  client: ApiClient;
  nodeName: string;
  /** Every change of the node's mirror pods (the complete list). */
  onMirrorPods?: (pods: Pod[]) => void;
  /** Longest back-off between failed lists/watches (default 30 s). */
  maxBackoffMs?: number;
}

export const isMirrorPod = (p: Pod): boolean => p.metadata?.annotations?.[ConfigMirrorAnnotationKey] !== undefined;

/**
 * The key a pod is held under: its UID when that is a non-empty string. Anything else (not an
 * object, no UID) is dropped here with a warning, so it cannot break the list for the others;
 * a UID of the wrong form goes on to PodConfig, which refuses the pod naming the field.
 */
function podKey(p: unknown): string | undefined {
  const uid = (p as Pod | null)?.metadata?.uid;
  if (typeof p === 'object' && p !== null && typeof uid === 'string' && uid !== '') return uid;
  log('podconfig').warn(
    { pod: klogRef((p as Pod | null)?.metadata) },
    'pod from the apiserver has no metadata.uid; ignored',
  );
  return undefined;
}

class ApiserverPodSource implements PodSource {
  private readonly abort = new AbortController();
  private readonly pods = new Map<string, Pod>();

  constructor(private readonly opts: ApiserverSourceOptions) {}

  start(push: (update: PodUpdate) => void): void {
    const publish = () => {
      const all = [...this.pods.values()];
      push({
        op: 'SET',
        source: ApiserverSource,
        // The watched objects themselves: PodStorage copies what it keeps, and recognises an
        // object it merged before (every event re-sends all N pods) without comparing it again.
        pods: all.filter((p) => !isMirrorPod(p)),
      });
      this.opts.onMirrorPods?.(all.filter(isMirrorPod));
    };
    void runReflector<Pod>({
      client: this.opts.client,
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${this.opts.nodeName}` },
      what: 'pods',
      signal: this.abort.signal,
      maxBackoffMs: this.opts.maxBackoffMs,
      onList: (items) => {
        this.pods.clear();
        for (const p of items) {
          const key = podKey(p);
          if (key !== undefined) this.pods.set(key, p);
        }
        log('podconfig').info({ pods: items.length }, 'Listed pods bound to this node');
        publish();
      },
      onEvent: (type, pod) => {
        const uid = podKey(pod);
        if (uid === undefined) return;
        if (type === 'DELETED') this.pods.delete(uid);
        else this.pods.set(uid, pod);
        publish();
      },
    });
  }

  stop(): void {
    this.abort.abort();
  }
}

export function newApiserverSource(opts: ApiserverSourceOptions): PodSource {
  return new ApiserverPodSource(opts);
}
