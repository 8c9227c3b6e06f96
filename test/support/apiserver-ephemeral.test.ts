// The test apiserver's pods/{name}/ephemeralcontainers subresource, as kube-apiserver serves it
// (EphemeralContainersREST, ValidatePodEphemeralContainersUpdate): a whole Pod in and out, only
// spec.ephemeralContainers taken, containers only added, names unique.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startTestApiserver } from './test-apiserver.js';

const api = await startTestApiserver();
after(() => api.stop());

const SUB = '/api/v1/namespaces/default/pods/p/ephemeralcontainers';
const SMP = 'application/strategic-merge-patch+json';
const debug = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox', ...extra });

await api.call('POST', '/api/v1/namespaces/default/pods', {
  metadata: { name: 'p' },
  spec: { nodeName: 'n', containers: [{ name: 'app', image: 'busybox' }] },
});

test('a strategic merge patch as kubectl debug sends it adds one, defaulted', async () => {
  const patch = {
    spec: {
      '$setElementOrder/ephemeralContainers': [{ name: 'd1' }],
      ephemeralContainers: [debug('d1', { targetContainerName: 'app', stdin: true })],
      containers: [{ name: 'app', image: 'changed' }],
    },
  };
  const r = await api.call('PATCH', SUB, patch, SMP);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const spec = r.body.spec as { ephemeralContainers: Record<string, unknown>[]; containers: { image: string }[] };
  assert.equal(spec.ephemeralContainers[0]!.targetContainerName, 'app');
  assert.equal(spec.ephemeralContainers[0]!.terminationMessagePath, '/dev/termination-log');
  assert.equal(spec.containers[0]!.image, 'busybox', 'only ephemeral containers change');
  const got = await api.call('GET', SUB);
  assert.equal((got.body.spec as { ephemeralContainers: unknown[] }).ephemeralContainers.length, 1);
});

test('existing ones may not be changed nor removed; names are unique; forbidden fields', async () => {
  const pod = (await api.call('GET', SUB)).body;
  const spec = pod.spec as { ephemeralContainers: Record<string, unknown>[] };
  const put = (ecs: unknown[]) => api.call('PUT', SUB, { ...pod, spec: { ...spec, ephemeralContainers: ecs } });
  const cases: [unknown[], RegExp][] = [
    [[], /existing ephemeral containers "d1" may not be removed/],
    [[{ ...spec.ephemeralContainers[0], image: 'other' }], /existing ephemeral containers "d1" may not be changed/],
    [[...spec.ephemeralContainers, debug('app')], /spec\.ephemeralContainers\[1\]\.name: Duplicate value: "app"/],
    [[...spec.ephemeralContainers, debug('d2', { ports: [{ containerPort: 80 }] })], /ports: Forbidden/],
    [[...spec.ephemeralContainers, debug('d2', { targetContainerName: 'nope' })], /targetContainerName: Not found/],
  ];
  for (const [ecs, want] of cases) {
    const r = await put(ecs);
    assert.equal(r.status, 422, JSON.stringify(ecs));
    assert.match(String(r.body.message), want);
  }
  const ok = await put([...spec.ephemeralContainers, debug('d2')]);
  assert.equal(ok.status, 200);
  assert.deepEqual(
    (ok.body.spec as { ephemeralContainers: { name: string }[] }).ephemeralContainers.map((c) => c.name),
    ['d1', 'd2'],
  );
});
