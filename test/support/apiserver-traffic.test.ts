/**
 * The test apiserver's request counters (apiserver-traffic.ts): kube-apiserver's verbs and
 * resource/subresource names, per client; open watches followed until they close; a repeated
 * watch is a restart and a repeated list a relist; `call()` is counted apart from the agent.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiTraffic, requestKind, trafficBetween } from './apiserver-traffic.js';
import { startTestApiserver, TEST_CALL_USER_AGENT } from './test-apiserver.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { waitFor } from './kubelet-process.js';
import { testTempDir } from './temp-dir.js';

test('requestKind: the verbs and resources of kube-apiserver request info', () => {
  const u = (p: string) => new URL(p, 'https://x');
  const cases: [string, string, Parameters<typeof requestKind>[2], string][] = [
    ['GET', '/api/v1/nodes/n', { plural: 'nodes', name: 'n' }, 'get nodes'],
    ['GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn', { plural: 'pods' }, 'list pods'],
    ['GET', '/api/v1/pods?watch=true', { plural: 'pods' }, 'watch pods'],
    ['GET', '/api/v1/pods?watch=1', { plural: 'pods' }, 'watch pods'],
    ['POST', '/api/v1/namespaces/a/events', { plural: 'events' }, 'create events'],
    [
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n',
      { plural: 'leases', name: 'n' },
      'update leases',
    ],
    ['PATCH', '/api/v1/namespaces/a/pods/p/status', { plural: 'pods', name: 'p', sub: 'status' }, 'patch pods/status'],
    ['DELETE', '/api/v1/namespaces/a/pods/p', { plural: 'pods', name: 'p' }, 'delete pods'],
    ['DELETE', '/api/v1/namespaces/a/pods', { plural: 'pods' }, 'deletecollection pods'],
    ['GET', '/version', undefined, 'get /version'],
  ];
  for (const [method, path, route, want] of cases) {
    const k = requestKind(method, u(path), route);
    assert.equal(`${k.verb} ${k.resource}`, want, `${method} ${path}`);
  }
  const w = requestKind('GET', u('/api/v1/pods?watch=true&fieldSelector=a%3Db&resourceVersion=7'), { plural: 'pods' });
  assert.equal(w.collection, '/api/v1/pods?fieldSelector=a=b', 'the resourceVersion is no part of the collection');
});

test('ApiTraffic: per client; restarts, relists, open and peak watches; differences', () => {
  const t = new ApiTraffic();
  const watch = { verb: 'watch', resource: 'pods', collection: '/api/v1/pods' };
  const before = t.snapshot('agent');
  t.count('agent/1', { verb: 'list', resource: 'pods', collection: '/api/v1/pods' });
  const close1 = t.count('agent/1', watch)!;
  const close2 = t.count('agent/1', { ...watch, collection: '/api/v1/services', resource: 'services' })!;
  assert.deepEqual(t.snapshot('agent').openWatches, ['/api/v1/pods', '/api/v1/services']);
  close1();
  t.count('agent/1', watch); // the restart of the pod watch
  t.count('agent/1', { verb: 'list', resource: 'pods', collection: '/api/v1/pods' }); // a relist
  t.count('other', { verb: 'get', resource: 'nodes' });
  close2();
  const s = t.snapshot('agent');
  assert.deepEqual(s.requests, { 'list pods': 2, 'watch pods': 2, 'watch services': 1 });
  assert.equal(s.watchRestarts, 1);
  assert.equal(s.relists, 1);
  assert.deepEqual(s.openWatches, ['/api/v1/pods']);
  assert.equal(s.peakOpenWatches, 2);
  assert.equal(t.snapshot().total, 6);
  const d = trafficBetween(before, s);
  assert.equal(d.total, 5);
  assert.equal(d.watchRestarts, 1);
});

test('the server counts each client apart and follows its watches until they close', async () => {
  const api = await startTestApiserver({ bookmarkMs: 100 });
  const clients = await createApiClients(api.kubeconfig(testTempDir('kts-traffic-')), { userAgent: 'agent-x/1' });
  const abort = new AbortController();
  after(async () => {
    abort.abort();
    clients.close();
    await api.stop();
  });
  await api.call('POST', '/api/v1/namespaces/a/configmaps', { metadata: { name: 'c' } });
  await clients.main.request({ method: 'GET', path: '/api/v1/namespaces/a/configmaps/c' });
  const watching = clients.main.watch('/api/v1/configmaps', { resourceVersion: '1' }, () => undefined, abort.signal);
  await waitFor('watch open', 5000, () => api.traffic.snapshot('agent-x').openWatches.length || undefined, 10);
  assert.deepEqual(api.traffic.snapshot('agent-x').requests, { 'get configmaps': 1, 'watch configmaps': 1 });
  assert.deepEqual(api.traffic.snapshot(TEST_CALL_USER_AGENT).requests, { 'create configmaps': 1 });
  abort.abort();
  await watching;
  await waitFor(
    'watch closed',
    5000,
    () => (api.traffic.snapshot('agent-x').openWatches.length ? undefined : true),
    10,
  );
});
