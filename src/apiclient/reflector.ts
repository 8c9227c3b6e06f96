/**
 * A reflector (client-go's ListAndWatch, reduced): list, then watch from the list's
 * resourceVersion with bookmarks. A watch that ends is resumed from the last resourceVersion
 * seen; an ERROR 410 (Gone: compacted) lists again; failures back off 800 ms doubling to 30 s.
 * Used by the pod source and by the configMap/secret cache.
 */
import { ApiError, KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { sleep } from '../util/clock.js';
import type { ApiClient, WatchEvent } from './types.js';
import { listAll } from './pager.js';
import { watchTimeoutSeconds } from './limits.js';

export interface ReflectorOptions<T> {
  client: ApiClient;
  /** Collection path, e.g. /api/v1/pods or /api/v1/namespaces/ns/configmaps. */
  path: string;
  /** fieldSelector / labelSelector of both list and watch. */
  query?: Record<string, string>;
  /** The complete list (after every list). */
  onList(items: T[]): void;
  /** Every ADDED / MODIFIED / DELETED event. */
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
  signal: AbortSignal;
  /** For logs. */
  what: string;
  maxBackoffMs?: number;
  /** Server-side watch timeout (default 5–10 min, random, as the reflector). */
  watchTimeoutSeconds?: () => number;
}

interface Meta {
  metadata?: { resourceVersion?: string };
}

export async function runReflector<T extends Meta>(o: ReflectorOptions<T>): Promise<void> {
  let resourceVersion = '';
  let backoff = 800;
  let needList = true;
  const onEvent = (e: WatchEvent<T>) => {
    if (e.type === 'ERROR') {
      const st = e.object as unknown as { code?: number; message?: string };
      if (st.code === 410) throw new ApiError(410, 'Expired', `${o.what} watch: ${st.message ?? 'Gone'}`);
      throw new ApiError(st.code ?? 500, 'WatchError', `${o.what} watch: ${st.message ?? 'error event'}`);
    }
    // A hostile server's `"object": null` must not end the watch (and relist) at every event.
    if (typeof e.object !== 'object' || e.object === null) {
      log('apiclient').warn({ what: o.what, type: e.type }, 'Ignoring a watch event without an object');
      return;
    }
    const rv = e.object.metadata?.resourceVersion;
    if (rv) resourceVersion = rv;
    if (e.type !== 'BOOKMARK') o.onEvent(e.type, e.object);
  };
  const pause = async () => {
    await sleep(backoff, o.signal);
    backoff = Math.min(backoff * 2, o.maxBackoffMs ?? 30_000);
  };
  while (!o.signal.aborted) {
    const listing = needList;
    try {
      if (needList) {
        const list = await listAll<T>(o.client, o.path, o.query);
        resourceVersion = list.resourceVersion;
        needList = false;
        o.onList(list.items);
      }
      const timeoutSeconds = o.watchTimeoutSeconds?.() ?? watchTimeoutSeconds();
      const started = Date.now();
      await o.client.watch<T>(
        o.path,
        { ...o.query, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        onEvent,
        o.signal,
      );
      // A server that ends every watch at once must not make us spin (client-go's "very short watch").
      if (Date.now() - started < 1000 && !o.signal.aborted) await pause();
      else backoff = 800;
    } catch (err) {
      if (o.signal.aborted) return;
      // A 410 from a watch lists again at once; a 410 from the list itself backs off like any failure.
      if (err instanceof ApiError && err.statusCode === 410 && !listing) {
        log('apiclient').info({ what: o.what, resourceVersion }, 'Watch expired (410 Gone); listing again');
        needList = true;
        continue;
      }
      log('apiclient').warn(
        {
          what: o.what,
          code: err instanceof KubeletError ? err.code : undefined,
          err: errorMessage(err),
          retryInMs: backoff,
        },
        'List/watch failed; retrying',
      );
      await pause();
    }
  }
}
