/**
 * The Service informer of API server mode against the test apiserver: not synced before its
 * first list; then default/kubernetes (which the apiserver keeps) and every namespace's Services,
 * with creations, edits and deletions arriving through one cluster-wide watch; what it holds
 * gives a pod its Service env vars.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClients } from '../../src/apiclient/index.js';
import { SERVICES_PATH, ServiceCache } from '../../src/apimode/service-cache.js';
import { serviceEnvVarMap, type Service } from '../../src/kuberuntime/index.js';
import { KUBERNETES_SERVICE_IP, startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const api = await startTestApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-services-')));
const cache = new ServiceCache(clients.main);
after(async () => {
  cache.stop();
  clients.close();
  await api.stop();
});

const names = () =>
  cache
    .list()
    .map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`)
    .sort();
const find = (ns: string, name: string): Service | undefined =>
  cache.list().find((s) => s.metadata?.namespace === ns && s.metadata?.name === name);

async function create(ns: string, body: Record<string, unknown>): Promise<void> {
  const r = await api.call('POST', `/api/v1/namespaces/${ns}/services`, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

test('not synced before the first list; then default/kubernetes and every namespace', async () => {
  await create('a', { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } });
  assert.equal(cache.hasSynced(), false);
  assert.deepEqual(cache.list(), []);
  cache.start();
  await waitFor('services listed', 10_000, () => (cache.hasSynced() ? true : undefined), 20);
  assert.deepEqual(names(), ['a/web', 'default/kubernetes']);
  const kube = find('default', 'kubernetes')!;
  assert.equal(kube.spec?.clusterIP, KUBERNETES_SERVICE_IP);
  assert.deepEqual(kube.spec?.ports?.[0], { name: 'https', port: 443, protocol: 'TCP', targetPort: api.port });
  // The test apiserver allocates a cluster IP and defaults the protocol, as the real one.
  assert.match(find('a', 'web')!.spec?.clusterIP ?? '', /^10\.96\.\d+\.\d+$/);
  assert.equal(find('a', 'web')!.spec?.ports?.[0]?.protocol, 'TCP');
});

test('creations, edits and deletions arrive through the watch', async () => {
  await create('b', { metadata: { name: 'db' }, spec: { clusterIP: '10.96.5.5', ports: [{ port: 5432 }] } });
  await waitFor('db watched', 10_000, () => find('b', 'db'), 20);
  const r = await api.call(
    'PATCH',
    '/api/v1/namespaces/b/services/db',
    { spec: { ports: [{ port: 5433, protocol: 'TCP' }] } },
    'application/merge-patch+json',
  );
  assert.equal(r.status, 200);
  await waitFor(
    'edit watched',
    10_000,
    () => (find('b', 'db')?.spec?.ports?.[0]?.port === 5433 ? true : undefined),
    20,
  );
  assert.equal((await api.call('DELETE', '/api/v1/namespaces/b/services/db')).status, 200);
  await waitFor('delete watched', 10_000, () => (find('b', 'db') ? undefined : true), 20);
});

test('one cluster-wide list and one watch, however many namespaces', () => {
  const calls = api.requests.filter((r) => r.path.endsWith('/services') && r.method === 'GET');
  assert.ok(
    calls.every((r) => r.path === SERVICES_PATH),
    calls.map((r) => r.path).join(' '),
  );
  assert.equal(calls.filter((r) => r.query.get('watch') === 'true').length, 1);
  assert.equal(calls.filter((r) => r.query.get('watch') !== 'true').length, 1);
});

test('what it holds makes the Service env vars of a pod', () => {
  const env = serviceEnvVarMap(cache.list(), 'a', true);
  assert.equal(env.get('KUBERNETES_SERVICE_HOST'), KUBERNETES_SERVICE_IP);
  assert.equal(env.get('KUBERNETES_SERVICE_PORT'), '443');
  assert.equal(env.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
  assert.equal(env.get('WEB_SERVICE_PORT_HTTP'), '80');
  assert.equal(serviceEnvVarMap(cache.list(), 'a', false).has('WEB_SERVICE_HOST'), false);
});
