/**
 * Pod observedGeneration over the wire (KEP-5067, GA in 1.35): the test apiserver numbers pod
 * generations as kube-apiserver does (1 at creation, +1 on a spec change and on graceful
 * deletion, what the client sends ignored), and the API status manager reports the generation of
 * the pod object the status was computed for, on the status and on the kubelet's conditions.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { createApiStatusManager, createStatusManager } from '../../src/status/index.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-obsgen-')));
after(async () => {
  clients.close();
  await api.stop();
});

const PATH = '/api/v1/namespaces/g/pods/p';
const stored = () => api.store.get('pods', 'g', 'p') as Pod;

test('the test apiserver: generation 1 at creation, +1 per spec change, +1 on graceful deletion', async () => {
  const created = await api.call('POST', '/api/v1/namespaces/g/pods', {
    metadata: { name: 'p', generation: 42 },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
  });
  assert.equal(created.status, 201);
  assert.equal(stored().metadata?.generation, 1, "the client's generation is ignored");
  await api.call('PATCH', PATH, { metadata: { labels: { a: 'b' }, generation: 9 } }, 'application/merge-patch+json');
  assert.equal(stored().metadata?.generation, 1, 'metadata only: the same generation');
  await api.call('PATCH', `${PATH}/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
  assert.equal(stored().metadata?.generation, 1, 'status only: the same generation');
  await api.call('PATCH', PATH, { spec: { activeDeadlineSeconds: 60 } }, 'application/merge-patch+json');
  assert.equal(stored().metadata?.generation, 2, 'a spec change');
  const put = { ...stored(), spec: { ...stored().spec!, activeDeadlineSeconds: 30 } };
  await api.call('PUT', PATH, put);
  assert.equal(stored().metadata?.generation, 3, 'a spec change by update');
  await api.call('DELETE', PATH, { gracePeriodSeconds: 30 });
  assert.equal(stored().metadata?.generation, 4, 'graceful deletion');
  await api.call('DELETE', PATH, { gracePeriodSeconds: 30 });
  assert.equal(stored().metadata?.generation, 4, 'the same grace again changes nothing');
  await api.call('DELETE', PATH, { gracePeriodSeconds: 0 });
});

test('the status on the API names the generation of the pod it was computed for', async () => {
  await api.call('POST', '/api/v1/namespaces/g/pods', {
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
  });
  const sm = createApiStatusManager({ client: clients.main, base: createStatusManager(), retryMs: 50 });
  try {
    const first = stored();
    sm.setPodStatus(first, {
      phase: 'Running',
      conditions: [{ type: 'Ready', observedGeneration: 1, status: 'True' }],
    });
    await waitFor(
      'observedGeneration 1',
      5000,
      () => (stored().status?.observedGeneration === 1 ? true : undefined),
      20,
    );
    assert.equal(stored().status?.conditions?.[0]?.observedGeneration, 1);
    await api.call('PATCH', PATH, { spec: { activeDeadlineSeconds: 60 } }, 'application/merge-patch+json');
    // A status computed from the pod before the change still names generation 1.
    sm.setPodStatus(first, { phase: 'Running', message: 'stale' });
    await waitFor('the stale status sent', 5000, () => (stored().status?.message === 'stale' ? true : undefined), 20);
    assert.equal(stored().status?.observedGeneration, 1);
    sm.setPodStatus(stored(), { phase: 'Running' });
    await waitFor(
      'observedGeneration 2',
      5000,
      () => (stored().status?.observedGeneration === 2 ? true : undefined),
      20,
    );
  } finally {
    sm.stop();
  }
});

test('the status patch drops what the new status no longer has (upstream CreateTwoWayMergePatch)', async () => {
  await api.call('POST', '/api/v1/namespaces/g/pods', {
    metadata: { name: 'q' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
  });
  const q = () => api.store.get('pods', 'g', 'q') as Pod;
  const cs = (state: object) => [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state }];
  const sm = createApiStatusManager({ client: clients.main, base: createStatusManager(), retryMs: 50 });
  try {
    sm.setPodStatus(q(), {
      phase: 'Pending',
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'm' }],
      containerStatuses: cs({ waiting: { reason: 'ContainerCreating' } }),
    });
    await waitFor(
      'waiting on the API',
      5000,
      () => (q().status?.containerStatuses?.[0]?.state?.waiting ? true : undefined),
      20,
    );
    sm.setPodStatus(q(), {
      phase: 'Failed',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: cs({ terminated: { exitCode: 1, message: 'why' } }),
    });
    await waitFor('Failed on the API', 5000, () => (q().status?.phase === 'Failed' ? true : undefined), 20);
    assert.deepEqual(q().status?.containerStatuses?.[0]?.state, { terminated: { exitCode: 1, message: 'why' } });
    assert.deepEqual(q().status?.conditions, [{ type: 'Ready', status: 'True' }]);
  } finally {
    sm.stop();
  }
});
