/**
 * The API client and the test apiserver together: kubeconfig (CA + token), conflicts, patches,
 * selectors, watch with bookmarks, 410 Gone → re-list, the QPS/burst bucket, the heartbeat
 * timeout and reconnecting after the server restarts on the same port.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiClients, runReflector, TokenBucket, type ApiClients } from '../../src/apiclient/index.js';
import { ApiError, KubeletError } from '../../src/errors.js';
import { registry } from '../../src/metrics/index.js';
import {
  startTestApiserver,
  matchesFieldSelector,
  matchesLabelSelector,
  type TestApiserver,
} from '../support/test-apiserver.js';
import { strategicMergePatch, jsonMergePatch } from '../support/apiserver-patch.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const dir = testTempDir('kts-apiclient-');
let hang = false;
let api: TestApiserver = await startTestApiserver({
  bookmarkMs: 100,
  // Mounted handler: answers nothing while `hang` is set (a slow apiserver for the heartbeat test).
  extraHandlers: [(req) => hang && req.url!.startsWith('/api/v1/nodes/slow')],
});
const clients: ApiClients = await createApiClients(api.kubeconfig(dir), { heartbeatTimeoutMs: 300 });

after(async () => {
  clients.close();
  await api.stop();
});

test('a kubeconfig that does not load is a KTS_ERR_KUBECONFIG error', async () => {
  const bad = join(dir, 'bad');
  writeFileSync(bad, 'apiVersion: v1\nkind: Config\nclusters: []\n');
  await assert.rejects(
    createApiClients(bad),
    (e: unknown) => e instanceof KubeletError && e.code === 'KTS_ERR_KUBECONFIG',
  );
});

test('requests authenticate with the token over TLS; conflicts are 409; UID preconditions hold', async () => {
  const cm = await clients.main.request<{ metadata: { resourceVersion: string; uid: string } }>({
    method: 'POST',
    path: '/api/v1/namespaces/a/configmaps',
    body: { metadata: { name: 'c1' }, data: { k: 'v' } },
  });
  await clients.main.request({
    method: 'PUT',
    path: '/api/v1/namespaces/a/configmaps/c1',
    body: { metadata: { name: 'c1', resourceVersion: cm.metadata.resourceVersion }, data: { k: 'v2' } },
  });
  const stale = clients.main.request({
    method: 'PUT',
    path: '/api/v1/namespaces/a/configmaps/c1',
    body: { metadata: { name: 'c1', resourceVersion: cm.metadata.resourceVersion }, data: { k: 'v3' } },
  });
  await assert.rejects(stale, (e: unknown) => e instanceof ApiError && e.statusCode === 409 && e.reason === 'Conflict');
  const wrongUid = clients.main.request({
    method: 'PATCH',
    path: '/api/v1/namespaces/a/configmaps/c1',
    contentType: 'application/merge-patch+json',
    body: { metadata: { uid: 'nope' }, data: { k: 'x' } },
  });
  await assert.rejects(wrongUid, (e: unknown) => e instanceof ApiError && e.statusCode === 409);
  await assert.rejects(
    clients.main.request({ method: 'GET', path: '/api/v1/namespaces/a/configmaps/none' }),
    (e: unknown) => e instanceof ApiError && e.statusCode === 404,
  );
  const exposed = await registry.getSingleMetricAsString('rest_client_requests_total');
  assert.match(exposed, /rest_client_requests_total\{code="409",method="PUT",host="127\.0\.0\.1:\d+"\} 1/);
});

test('strategic merge patches lists by key; merge patch replaces them; null deletes', () => {
  const cur = {
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PodScheduled', status: 'True' },
      ],
      images: [{ names: ['a'] }],
    },
  };
  const smp = strategicMergePatch(cur, {
    status: { conditions: [{ type: 'Ready', status: 'True' }], images: [{ names: ['b'] }], $setElementOrder: 1 },
  }) as typeof cur;
  assert.deepEqual(smp.status.conditions, [
    { type: 'Ready', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ]);
  assert.deepEqual(smp.status.images, [{ names: ['b'] }]);
  const del = strategicMergePatch(cur, { status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } }) as typeof cur;
  assert.deepEqual(
    del.status.conditions.map((c) => c.type),
    ['PodScheduled'],
  );
  assert.deepEqual(
    (
      jsonMergePatch(cur, { status: { conditions: [{ type: 'X' }], images: null } }) as Record<
        string,
        Record<string, unknown>
      >
    ).status,
    { conditions: [{ type: 'X' }] },
  );
});

test('field and label selectors', () => {
  const pod = {
    metadata: { name: 'p', labels: { app: 'web', tier: 'fe' } },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running' },
  };
  assert.ok(matchesFieldSelector(pod, 'spec.nodeName=n1,status.phase!=Failed'));
  assert.ok(!matchesFieldSelector(pod, 'spec.nodeName==n2'));
  assert.ok(matchesLabelSelector(pod, 'app=web,tier in (fe,be),!gone'));
  assert.ok(!matchesLabelSelector(pod, 'app!=web'));
});

test('reflector: list, watch events, bookmarks, and a re-list after 410 Gone', async () => {
  const seen: string[] = [];
  let lists = 0;
  const abort = new AbortController();
  const path = '/api/v1/namespaces/r/configmaps';
  await clients.main.request({ method: 'POST', path, body: { metadata: { name: 'one' } } });
  void runReflector<{ metadata: { name: string; resourceVersion?: string } }>({
    client: clients.main,
    path,
    what: 'test',
    signal: abort.signal,
    watchTimeoutSeconds: () => 1,
    onList: (items) => {
      lists++;
      seen.push(`list:${items.map((i) => i.metadata.name).join(',')}`);
    },
    onEvent: (type, o) => seen.push(`${type}:${o.metadata.name}`),
  });
  await waitFor('first list', 5000, () => (lists === 1 ? true : undefined), 20);
  await clients.main.request({ method: 'POST', path, body: { metadata: { name: 'two' } } });
  await waitFor('ADDED two', 5000, () => (seen.includes('ADDED:two') ? true : undefined), 20);
  // A watch that ends resumes from its resourceVersion (kept fresh by bookmarks), no re-list.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(lists, 1, seen.join(' '));
  // Compaction while the watch is down: the next resume gets 410 and lists again.
  const { port, store, certs, token } = api;
  await api.stop();
  store.put('configmaps', { metadata: { name: 'three', namespace: 'r' } }, 'ADDED'); // written meanwhile (another apiserver)
  store.compact();
  await clients.main.request({ method: 'GET', path }).catch(() => undefined);
  api = await startTestApiserver({ port, store, certs, token, bookmarkMs: 100, extraHandlers: api.extraHandlers });
  await waitFor('re-list after 410', 15_000, () => (lists >= 2 ? true : undefined), 50);
  assert.equal(seen.filter((s) => s.startsWith('list:')).at(-1), 'list:one,two,three');
  abort.abort();
});

test('the heartbeat client has its own short timeout and reconnects', async () => {
  await clients.main.request({ method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'slow' } } });
  hang = true;
  const t0 = Date.now();
  await assert.rejects(
    clients.heartbeat.request({ method: 'GET', path: '/api/v1/nodes/slow' }),
    (e: unknown) => e instanceof ApiError && e.statusCode === 0,
  );
  assert.ok(Date.now() - t0 < 3000, 'timed out by the heartbeat timeout');
  hang = false;
  const n = await clients.heartbeat.request<{ metadata: { name: string } }>({
    method: 'GET',
    path: '/api/v1/nodes/slow',
  });
  assert.equal(n.metadata.name, 'slow');
});

test('token bucket: burst at once, then qps', async () => {
  const b = new TokenBucket(20, 5);
  for (let i = 0; i < 5; i++) assert.ok(b.tryAcquire());
  assert.ok(!b.tryAcquire());
  const t0 = Date.now();
  for (let i = 0; i < 4; i++) await b.acquire();
  const took = Date.now() - t0;
  assert.ok(took >= 150 && took < 1500, `4 tokens at 20 qps took ${took} ms`);
});
