/**
 * Mirror pods against the test apiserver: created with the mirror annotation and the Node as
 * owner; replaced when the static pod's hash changed; orphans deleted; the UID is only offered
 * for a matching mirror pod.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createApiClients } from '../../src/apiclient/index.js';
import { MirrorPods } from '../../src/apimode/mirror-pods.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { testTempDir } from '../support/temp-dir.js';

const api = await startTestApiserver();
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-mirror-')));
after(async () => {
  clients.close();
  await api.stop();
});

const staticPod = (hash: string): Pod => ({
  metadata: {
    name: 'web-n1',
    namespace: 'm',
    uid: hash,
    annotations: {
      'kubernetes.io/config.hash': hash,
      'kubernetes.io/config.source': 'file',
      'kubernetes.io/config.seen': 'x',
    },
  },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
});
const mirrors = () => api.store.list('pods', 'm') as Pod[];

test('create, replace when stale, delete orphans', async () => {
  let statics = [staticPod('h1')];
  const m = new MirrorPods({
    client: clients.main,
    nodeName: 'n1',
    nodeUID: () => 'node-uid',
    staticPods: () => statics,
  });
  await m.reconcile();
  let [mirror] = mirrors();
  assert.equal(mirror!.metadata!.annotations!['kubernetes.io/config.mirror'], 'h1');
  assert.equal(mirror!.metadata!.annotations!['kubernetes.io/config.seen'], undefined);
  assert.deepEqual(mirror!.metadata!.ownerReferences, [
    { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid', controller: true },
  ]);
  m.setMirrorPods(mirrors());
  assert.equal(m.mirrorPodUID(statics[0]!), mirror!.metadata!.uid);
  // The manifest changed: new hash → the old mirror pod is replaced.
  statics = [staticPod('h2')];
  assert.equal(m.mirrorPodUID(statics[0]!), undefined);
  await m.reconcile();
  [mirror] = mirrors();
  assert.equal(mirror!.metadata!.annotations!['kubernetes.io/config.mirror'], 'h2');
  m.setMirrorPods(mirrors());
  // The static pod is gone: its mirror pod is an orphan.
  statics = [];
  await m.reconcile();
  assert.deepEqual(mirrors(), []);
});
