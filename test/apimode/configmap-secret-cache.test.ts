/**
 * The watch-based configMap/secret cache and the token manager against the test apiserver: the
 * first lookup starts a watch and answers "not synced"; edits and deletions arrive through the
 * watch with a change callback; tokens are requested again after 80 % of their lifetime.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { ObjectCache, podObjectRefs, withObjectRegistration } from '../../src/apimode/configmap-secret-cache.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const api = await startTestApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-cache-')));
const changes: string[] = [];
const cache = new ObjectCache({
  client: clients.main,
  onChange: (kind, ns, name) => changes.push(`${kind}/${ns}/${name}`),
});
after(async () => {
  cache.stop();
  clients.close();
  await api.stop();
});

test('configMaps: not synced, then data; edits and deletion arrive through the watch', async () => {
  await api.call('POST', '/api/v1/namespaces/c/configmaps', { metadata: { name: 'cm' }, data: { a: '1' } });
  assert.equal(cache.configMap('c', 'cm'), undefined);
  await waitFor('synced', 5000, () => cache.configMap('c', 'cm') ?? undefined, 20);
  assert.deepEqual(cache.configMap('c', 'cm')!.data, { a: '1' });
  await api.call('PATCH', '/api/v1/namespaces/c/configmaps/cm', { data: { a: '2' } }, 'application/merge-patch+json');
  await waitFor('edit', 5000, () => (cache.configMap('c', 'cm')?.data?.a === '2' ? true : undefined), 20);
  assert.ok(changes.filter((c) => c === 'configmaps/c/cm').length >= 2);
  await api.call('DELETE', '/api/v1/namespaces/c/configmaps/cm');
  await waitFor('deleted', 5000, () => (cache.configMap('c', 'cm') === null ? true : undefined), 20);
  // A secret that does not exist is null once synced (optional volumes/env skip it).
  cache.secret('c', 'none');
  await waitFor('absent', 5000, () => (cache.secret('c', 'none') === null ? true : undefined), 20);
});

test('past its watch cap the cache polls: GET with a TTL, changes reported, no extra watch', async () => {
  const polled: string[] = [];
  const capped = new ObjectCache({
    client: clients.main,
    maxWatches: 1,
    ttlMs: 300,
    onChange: (kind, ns, name) => polled.push(`${kind}/${ns}/${name}`),
  });
  try {
    await api.call('POST', '/api/v1/namespaces/p/configmaps', { metadata: { name: 'w' }, data: { a: '1' } });
    await api.call('POST', '/api/v1/namespaces/p/configmaps', { metadata: { name: 'g' }, data: { a: '1' } });
    capped.configMap('p', 'w');
    capped.configMap('p', 'g');
    assert.equal(capped.watching, 1);
    await waitFor('polled copy', 5000, () => capped.configMap('p', 'g') ?? undefined, 20);
    const gets = () => api.requests.filter((r) => r.path === '/api/v1/namespaces/p/configmaps/g').length;
    assert.equal(gets(), 1, 'within the TTL the copy is served');
    await api.call('PATCH', '/api/v1/namespaces/p/configmaps/g', { data: { a: '2' } }, 'application/merge-patch+json');
    await waitFor(
      'edit seen after the TTL',
      5000,
      () => (capped.configMap('p', 'g')?.data?.a === '2' ? true : undefined),
      50,
    );
    assert.ok(polled.filter((c) => c === 'configmaps/p/g').length >= 2, 'onChange for the first copy and the edit');
    assert.ok(
      !api.requests.some(
        (r) => r.path === '/api/v1/namespaces/p/configmaps' && r.query.get('fieldSelector') === 'metadata.name=g',
      ),
      'never watched',
    );
  } finally {
    capped.stop();
  }
});

test('service account tokens are issued, then refreshed after 80 % of their lifetime', async () => {
  const pod = {
    metadata: { name: 'p', namespace: 'c', uid: 'u-1' },
    spec: { serviceAccountName: 'sa', containers: [] },
  } as unknown as Pod;
  assert.equal(cache.serviceAccountToken(pod, 'aud', 2), undefined);
  const first = await waitFor('token', 5000, () => cache.serviceAccountToken(pod, 'aud', 2), 20);
  assert.match(first, /^kts-test-token\.c\.sa\./);
  const req = api.requests.find((r) => r.path === '/api/v1/namespaces/c/serviceaccounts/sa/token');
  assert.ok(req, 'TokenRequest posted');
  await new Promise((r) => setTimeout(r, 1700));
  const second = await waitFor(
    'refreshed token',
    5000,
    () => {
      const t = cache.serviceAccountToken(pod, 'aud', 2);
      return t !== first ? t : undefined;
    },
    50,
  );
  assert.notEqual(second, first);
  assert.ok(changes.includes('token/c/u-1'));
});

test('podObjectRefs finds volumes, projections, env and envFrom references', () => {
  const refs = podObjectRefs({
    spec: {
      volumes: [
        { name: 'a', configMap: { name: 'cm1' } },
        { name: 'b', secret: { secretName: 's1' } },
        { name: 'c', projected: { sources: [{ configMap: { name: 'cm2' } }, { serviceAccountToken: { path: 't' } }] } },
      ],
      containers: [
        {
          name: 'x',
          env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's2', key: 'k' } } }],
          envFrom: [{ configMapRef: { name: 'cm3' } }],
        },
      ],
    },
  } as Pod);
  assert.deepEqual([...refs.configMaps].sort(), ['cm1', 'cm2', 'cm3']);
  assert.deepEqual([...refs.secrets].sort(), ['s1', 's2']);
  assert.equal(refs.tokens, true);
});

test('pods delivered by their source register their objects: one watch per object, however many pods', async () => {
  const own = new ObjectCache({ client: clients.main });
  try {
    await api.call('POST', '/api/v1/namespaces/reg/configmaps', { metadata: { name: 'shared' }, data: { a: '1' } });
    const pod = (i: number, phase?: string): Pod => ({
      metadata: { name: `p${i}`, namespace: 'reg', uid: `reg-${i}` },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 'shared-s', key: 'k' } } }],
          },
        ],
        volumes: [{ name: 'v', configMap: { name: phase ? 'of-finished-pod' : 'shared' } }],
      },
      ...(phase ? { status: { phase } } : {}),
    });
    const pushed: string[] = [];
    const source = withObjectRegistration(
      {
        start: (push) =>
          push({
            op: 'SET',
            source: 'api',
            pods: [...Array.from({ length: 50 }, (_, i) => pod(i)), pod(99, 'Succeeded')],
          }),
        stop: () => undefined,
      },
      own,
    );
    source.start((u) => pushed.push(u.op));
    assert.deepEqual(pushed, ['SET']);
    assert.equal(own.watching, 2, 'one ConfigMap and one Secret watch for 50 pods; none for a finished pod');
    await waitFor('synced before any sync asks', 5000, () => own.configMap('reg', 'shared') ?? undefined, 20);
  } finally {
    own.stop();
  }
});
