/**
 * Request counters of the test apiserver (issue 30: API traffic per node). Every request is
 * counted per client (its User-Agent) as `<verb> <resource>[/<subresource>]`, with the verbs of
 * kube-apiserver's request info (get, list, watch, create, update, patch, delete,
 * deletecollection; a non-resource path such as /version is `<method> <path>`). Watches are
 * followed while they are open; a watch or list of the same collection and selectors as an
 * earlier one from the same client is a watch restart or a relist.
 */

/** A point-in-time copy of one client's counters (or of all clients'). */
export interface TrafficSnapshot {
  /** When it was taken (ms since the epoch). */
  at: number;
  /** `"<verb> <resource>"` → requests. */
  requests: Record<string, number>;
  total: number;
  /** Watch requests that repeat an earlier watch of the same collection and selectors. */
  watchRestarts: number;
  /** List requests that repeat an earlier list of the same collection and selectors. */
  relists: number;
  /** Watches open at `at`, as `<path>?<selectors>`, sorted. */
  openWatches: string[];
  /** Most watches open at once since the counters started. */
  peakOpenWatches: number;
}

interface ClientCounters {
  requests: Map<string, number>;
  watchRestarts: number;
  relists: number;
  seenWatches: Set<string>;
  seenLists: Set<string>;
  open: Map<number, string>;
  peakOpen: number;
}

/** The verb and resource kube-apiserver's request info would give a request. */
export interface RequestKind {
  verb: string;
  resource: string;
  /** The collection and selectors, for watches and lists (restart and relist detection). */
  collection?: string;
}

/** What the counters need to know of a route (test-apiserver's parsePath). */
export interface RouteShape {
  plural: string;
  name?: string;
  sub?: string;
}

const WRITE_VERBS: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/** Classifies a request as kube-apiserver's RequestInfoFactory does (verbs, resource/subresource). */
export function requestKind(method: string, url: URL, route: RouteShape | undefined): RequestKind {
  if (!route) return { verb: method.toLowerCase(), resource: url.pathname };
  const resource = route.sub ? `${route.plural}/${route.sub}` : route.plural;
  const selectors = ['fieldSelector', 'labelSelector']
    .map((k) => (url.searchParams.get(k) ? `${k}=${url.searchParams.get(k)}` : ''))
    .filter(Boolean)
    .join('&');
  const collection = selectors ? `${url.pathname}?${selectors}` : url.pathname;
  if (method === 'GET' && !route.name) {
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    return { verb: watch ? 'watch' : 'list', resource, collection };
  }
  if (method === 'GET') return { verb: 'get', resource };
  if (method === 'DELETE') return { verb: route.name ? 'delete' : 'deletecollection', resource };
  return { verb: WRITE_VERBS[method] ?? method.toLowerCase(), resource };
}

export class ApiTraffic {
  private readonly clients = new Map<string, ClientCounters>();
  private nextWatch = 0;

  private of(client: string): ClientCounters {
    let c = this.clients.get(client);
    if (!c) {
      c = {
        requests: new Map(),
        watchRestarts: 0,
        relists: 0,
        seenWatches: new Set(),
        seenLists: new Set(),
        open: new Map(),
        peakOpen: 0,
      };
      this.clients.set(client, c);
    }
    return c;
  }

  /** Counts one request; for a watch, returns the function to call when it closes. */
  count(client: string, kind: RequestKind): (() => void) | undefined {
    const c = this.of(client);
    const key = `${kind.verb} ${kind.resource}`;
    c.requests.set(key, (c.requests.get(key) ?? 0) + 1);
    if (kind.verb === 'list' && kind.collection) {
      if (c.seenLists.has(kind.collection)) c.relists++;
      c.seenLists.add(kind.collection);
    }
    if (kind.verb !== 'watch' || !kind.collection) return undefined;
    if (c.seenWatches.has(kind.collection)) c.watchRestarts++;
    c.seenWatches.add(kind.collection);
    const id = this.nextWatch++;
    c.open.set(id, kind.collection);
    c.peakOpen = Math.max(c.peakOpen, c.open.size);
    return () => c.open.delete(id);
  }

  /**
   * The counters of the clients whose User-Agent starts with `clientPrefix` (all when absent).
   * peakOpenWatches is the largest peak of one of them.
   */
  snapshot(clientPrefix = ''): TrafficSnapshot {
    const requests: Record<string, number> = {};
    const open: string[] = [];
    let watchRestarts = 0;
    let relists = 0;
    let peak = 0;
    for (const [client, c] of this.clients) {
      if (!client.startsWith(clientPrefix)) continue;
      for (const [k, n] of c.requests) requests[k] = (requests[k] ?? 0) + n;
      open.push(...c.open.values());
      watchRestarts += c.watchRestarts;
      relists += c.relists;
      peak = Math.max(peak, c.peakOpen);
    }
    const total = Object.values(requests).reduce((a, b) => a + b, 0);
    return { at: Date.now(), requests, total, watchRestarts, relists, openWatches: open.sort(), peakOpenWatches: peak };
  }
}

/** What happened between two snapshots of the same clients: requests by kind, restarts, relists. */
export function trafficBetween(
  before: TrafficSnapshot,
  after: TrafficSnapshot,
): Pick<TrafficSnapshot, 'requests' | 'total' | 'watchRestarts' | 'relists'> & { seconds: number } {
  const requests: Record<string, number> = {};
  for (const [k, n] of Object.entries(after.requests)) {
    const d = n - (before.requests[k] ?? 0);
    if (d > 0) requests[k] = d;
  }
  return {
    seconds: (after.at - before.at) / 1000,
    requests,
    total: after.total - before.total,
    watchRestarts: after.watchRestarts - before.watchRestarts,
    relists: after.relists - before.relists,
  };
}
