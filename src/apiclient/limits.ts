/**
 * Every bound the API client puts on what an apiserver may make it hold, in one place. The
 * apiserver is trusted to say which pods to run, not to decide how much memory, time or how many
 * sockets the node spends listening to it: a hostile or man-in-the-middle server once took the
 * agent to 1.7 GiB with one 400 MB LIST. Each limit is enforced as bytes arrive, and going over
 * one is an ApiLimitError (KTS_ERR_API_LIMIT) naming the limit and the URL path.
 */

const MiB = 1024 * 1024;

export const API_LIMITS = {
  /**
   * One response body (a LIST page, or any answer). A 500-item page of real pods is ~5 MiB;
   * 64 MiB leaves room for fat objects (large configMaps) and still bounds the heap.
   */
  responseBodyBytes: 64 * MiB,
  /**
   * One object in a GET/PUT/PATCH answer. The apiserver itself refuses objects over ~1.5 MiB
   * (etcd's request limit), so 16 MiB is never hit by an honest server.
   */
  objectBytes: 16 * MiB,
  /** One watch event (one JSON line of the stream): the same reasoning as objectBytes. */
  watchLineBytes: 16 * MiB,
  /** LIST page size, as client-go's pager (`limit=500`, then `continue`). */
  listPageSize: 500,
  /**
   * Pages of one LIST: 10k pages of 500 is 5 M objects, far beyond any node's pods; bounds a
   * server that hands out `continue` tokens forever.
   */
  listMaxPages: 10_000,
  /**
   * Whole-request deadline of a non-watch request, from dial to last byte (client-go's
   * default request timeout for the kubelet is 30 s). The socket idle timeout alone lets a
   * server drip one byte every few seconds forever.
   */
  requestDeadlineMs: 30_000,
  /** Server-side watch timeout, random in [min, max) so that watches do not all restart at once (client-go's reflector: 5–10 min). */
  watchTimeoutMinSeconds: 300,
  watchTimeoutMaxSeconds: 600,
  /** A watch the server keeps open past its own timeoutSeconds by this much is cut by the client (a drip never idles out). */
  watchDeadlineSlackMs: 30_000,
  /**
   * Connections to one apiserver, watches included (each watch holds one for minutes). Split
   * into fixed pools so that watches can never starve requests nor the heartbeat:
   * watches + main requests + heartbeat = 64.
   */
  maxConnections: 64,
  watchConnections: 56,
  requestConnections: 6,
  heartbeatConnections: 2,
  /**
   * Individual configMap/secret watches of the object cache: what the watch pool holds less
   * the pod watch and headroom. Past this the cache polls (GET, 60 s TTL) instead.
   */
  objectCacheWatches: 48,
  objectCacheTtlMs: 60_000,
  /** A bearer token file is re-read this often (client-go's cachingTokenSource: 1 min). */
  tokenFileRereadMs: 60_000,
  /** An exec credential plugin: its run time and the size of what it prints. */
  execPluginTimeoutMs: 30_000,
  execPluginOutputBytes: 1 * MiB,
} as const;

/** The random server-side timeoutSeconds of the next watch. */
export function watchTimeoutSeconds(random: () => number = Math.random): number {
  const { watchTimeoutMinSeconds: min, watchTimeoutMaxSeconds: max } = API_LIMITS;
  return min + Math.floor(random() * (max - min));
}

/** "64 MiB" for messages. */
export function formatBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`;
}
