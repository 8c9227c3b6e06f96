/**
 * The bounded API client: the linear watch line splitter (chunk boundaries, exactly at and over
 * the cap, no quadratic re-scan), the limits, the LIST pager (continue, 410 fallback, page and
 * byte budgets) on a fake client, and the real client against the hostile apiserver (huge LIST,
 * endless watch line, slow drip, garbage event, silent watch).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createApiClients,
  listAll,
  runReflector,
  API_LIMITS,
  type ApiClient,
  type ApiRequest,
} from '../../src/apiclient/index.js';
import { LineSplitter } from '../../src/apiclient/line-splitter.js';
import { watchTimeoutSeconds } from '../../src/apiclient/limits.js';
import { ApiError, ApiLimitError } from '../../src/errors.js';
import { startHostileApiserver } from '../support/hostile-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const text = (lines: Buffer[] | undefined) => lines?.map((l) => l.toString());

test('splitter: lines across chunk boundaries, CRLF, several per chunk', () => {
  const s = new LineSplitter(100);
  assert.deepEqual(text(s.push(Buffer.from('{"a"'))), []);
  assert.deepEqual(text(s.push(Buffer.from(':1}\n{"b":2}\r\n{"c"'))), ['{"a":1}', '{"b":2}']);
  assert.equal(s.pending, 4);
  assert.deepEqual(text(s.push(Buffer.from(':3}\n\n'))), ['{"c":3}', '']);
  assert.equal(s.pending, 0);
});

test('splitter: a line of exactly the cap passes; one byte more is refused, with or without its newline', () => {
  const ok = new LineSplitter(8);
  assert.deepEqual(text(ok.push(Buffer.from('1234'))), []);
  assert.deepEqual(text(ok.push(Buffer.from('5678\n'))), ['12345678']);
  const pendingOver = new LineSplitter(8);
  assert.deepEqual(
    text(pendingOver.push(Buffer.from('12345678'))),
    [],
    'exactly the cap while waiting for the newline',
  );
  assert.equal(pendingOver.push(Buffer.from('9')), undefined);
  assert.equal(new LineSplitter(8).push(Buffer.from('123456789\n')), undefined, 'over the cap in one chunk');
});

test('splitter: 32 MB without a newline is scanned once (linear), not re-scanned per chunk', () => {
  const s = new LineSplitter(64 << 20);
  const chunk = Buffer.alloc(64 << 10, 0x61);
  const t0 = performance.now();
  for (let i = 0; i < 512; i++) assert.deepEqual(s.push(chunk), []);
  assert.deepEqual(s.push(Buffer.from('\n'))?.[0]?.length, 32 << 20);
  const ms = performance.now() - t0;
  assert.ok(ms < 2000, `took ${ms} ms`);
});

test('limits: the documented values; watch timeouts random in [300, 600)', () => {
  assert.equal(API_LIMITS.responseBodyBytes, 64 << 20);
  assert.equal(API_LIMITS.objectBytes, 16 << 20);
  assert.equal(API_LIMITS.watchLineBytes, 16 << 20);
  assert.equal(API_LIMITS.listPageSize, 500);
  assert.equal(API_LIMITS.requestDeadlineMs, 30_000);
  assert.equal(
    API_LIMITS.watchConnections + API_LIMITS.requestConnections + API_LIMITS.heartbeatConnections,
    API_LIMITS.maxConnections,
  );
  assert.ok(
    API_LIMITS.objectCacheWatches < API_LIMITS.watchConnections,
    'the cache leaves watch connections for the pod watch',
  );
  assert.equal(
    watchTimeoutSeconds(() => 0),
    300,
  );
  assert.equal(
    watchTimeoutSeconds(() => 0.9999),
    599,
  );
});

/** A fake client serving `pages` of items by continue token; `expire` answers 410 to the token it names once. */
function pagedClient(
  total: number,
  opts: { expireOnce?: string; endless?: boolean; pageBytes?: number } = {},
): ApiClient & { calls: ApiRequest[] } {
  const calls: ApiRequest[] = [];
  let expired = false;
  const request = async <T>(r: ApiRequest): Promise<T> => {
    calls.push(r);
    const cont = r.query?.continue as string | undefined;
    if (cont && cont === opts.expireOnce && !expired) {
      expired = true;
      throw new ApiError(410, 'Expired', 'continue token expired');
    }
    const from = cont ? Number(cont) : 0;
    const limit = Number(r.query?.limit);
    const items = Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, i) => ({ n: from + i }));
    const next = opts.endless || from + limit < total ? String(from + limit) : undefined;
    r.onBodyBytes?.(opts.pageBytes ?? 100);
    return { items, metadata: { resourceVersion: '42', continue: next } } as T;
  };
  return {
    calls,
    request,
    watch: () => Promise.resolve(),
    resetConnections: () => undefined,
    close: () => undefined,
  } as ApiClient & { calls: ApiRequest[] };
}

test("pager: limit=500 pages joined by continue; the last page's resourceVersion", async () => {
  const c = pagedClient(1234);
  const r = await listAll<{ n: number }>(c, '/api/v1/pods', { fieldSelector: 'spec.nodeName=n' });
  assert.equal(r.items.length, 1234);
  assert.deepEqual(
    r.items.slice(498, 502).map((i) => i.n),
    [498, 499, 500, 501],
  );
  assert.equal(r.resourceVersion, '42');
  assert.deepEqual(
    c.calls.map((q) => [q.query?.limit, q.query?.continue, q.query?.fieldSelector]),
    [
      [500, undefined, 'spec.nodeName=n'],
      [500, '500', 'spec.nodeName=n'],
      [500, '1000', 'spec.nodeName=n'],
    ],
  );
});

test('pager: an expired continue token (410) restarts the LIST from scratch once', async () => {
  const c = pagedClient(1200, { expireOnce: '1000' });
  const r = await listAll(c, '/api/v1/pods');
  assert.equal(r.items.length, 1200);
  assert.deepEqual(
    c.calls.map((q) => q.query?.continue),
    [undefined, '500', '1000', undefined, '500', '1000'],
  );
});

test('pager: a server handing out continue tokens forever, or pages past the byte budget, is a limit error', async () => {
  await assert.rejects(
    listAll(pagedClient(10, { endless: true, pageBytes: 40 << 20 }), '/api/v1/pods'),
    /\/api\/v1\/pods exceeded 64 MiB \(response body limit\)/,
  );
  await assert.rejects(
    listAll(pagedClient(10, { endless: true, pageBytes: 1 }), '/api/v1/pods', {}, 1),
    (e: unknown) => e instanceof ApiLimitError && /10000 pages \(LIST page limit\)/.test(e.message),
  );
});

const api = await startHostileApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-bounded-')), { watchIdleTimeoutMs: 700 });
after(async () => {
  clients.close();
  await api.stop();
});

const limitError = (re: RegExp) => (e: unknown) =>
  e instanceof ApiLimitError && e.code === 'KTS_ERR_API_LIMIT' && re.test(e.message);

test('hostile: a 200 MB LIST is cut at 64 MiB with the named limit error', async () => {
  api.mode = 'huge-list';
  const before = process.memoryUsage().rss;
  await assert.rejects(
    listAll(clients.main, '/api/v1/pods'),
    limitError(/^apiserver response for \/api\/v1\/pods exceeded 64 MiB \(response body limit\); refused$/),
  );
  assert.ok(process.memoryUsage().rss - before < 200 << 20, 'RSS grew by less than 200 MiB');
  api.mode = undefined;
});

test('hostile: an endless watch line is cut at 16 MiB', async () => {
  api.mode = 'endless-line';
  await assert.rejects(
    clients.main.watch('/api/v1/pods', {}, () => undefined, new AbortController().signal),
    limitError(/\/api\/v1\/pods exceeded 16 MiB \(watch event line limit\)/),
  );
  api.mode = undefined;
});

test('hostile: a body dripped one byte per 100 ms hits the request deadline', async () => {
  api.mode = 'slow-drip';
  await assert.rejects(
    clients.main.request({ method: 'GET', path: '/api/v1/pods', timeoutMs: 1000 }),
    limitError(/\/api\/v1\/pods exceeded 1 s \(request deadline\)/),
  );
  api.mode = undefined;
});

test('hostile: a garbage watch event is a clear error; the reflector keeps its last good state and retries', async () => {
  await api.call('POST', '/api/v1/namespaces/h/pods', {
    metadata: { name: 'keep' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  const lists: string[][] = [];
  const events: string[] = [];
  const abort = new AbortController();
  let failedWatches = 0;
  api.mode = 'garbage';
  const before = api.hostileRequests;
  void runReflector<{ metadata: { name: string; resourceVersion?: string } }>({
    client: clients.main,
    path: '/api/v1/pods',
    what: 'pods',
    signal: abort.signal,
    maxBackoffMs: 200,
    onList: (items) => lists.push(items.map((i) => i.metadata.name)),
    onEvent: (type, o) => events.push(`${type}:${o.metadata.name}`),
  });
  await waitFor(
    'two garbage watches',
    10_000,
    () => ((failedWatches = api.hostileRequests - before) >= 2 ? true : undefined),
    20,
  );
  assert.ok(failedWatches >= 2);
  assert.deepEqual(lists, [['keep']], 'listed once; the garbage watch neither re-listed nor emptied the state');
  assert.deepEqual(events, []);
  await assert.rejects(
    clients.main.watch('/api/v1/pods', {}, () => undefined, new AbortController().signal),
    (e: unknown) => e instanceof ApiError && e.reason === 'BadWatchEvent' && /event is not JSON/.test(e.message),
  );
  api.mode = undefined;
  abort.abort();
});

test('hostile: a watch that never sends a byte ends at the idle timeout; requests still flow meanwhile', async () => {
  api.mode = 'silent-watch';
  const watching = clients.main.watch('/api/v1/pods', {}, () => undefined, new AbortController().signal);
  const node = await clients.main.request<{ items: unknown[] }>({ method: 'GET', path: '/api/v1/nodes' });
  assert.ok(Array.isArray(node.items));
  await assert.rejects(watching, (e: unknown) => e instanceof ApiError && /idle for 700 ms/.test(e.message));
  api.mode = undefined;
});
