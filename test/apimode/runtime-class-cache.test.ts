/**
 * The RuntimeClass cache of API server mode against the test apiserver: lookups wait for the
 * first list; a known class gives its handler and overhead, an unknown one upstream's NotFound
 * words; creations, edits and deletions arrive through the watch; pods naming a class without
 * an overhead of their own get the class's podFixed (upstream's RuntimeClass admission), on every
 * update their source pushes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createApiClients } from '../../src/apiclient/index.js';
import {
  RUNTIME_CLASSES_PATH,
  RuntimeClassCache,
  withRuntimeClassOverhead,
} from '../../src/apimode/runtime-class-cache.js';
import type { PodUpdate } from '../../src/podconfig/types.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const api = await startTestApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-rtclass-')));
const cache = new RuntimeClassCache(clients.main);
after(async () => {
  cache.stop();
  clients.close();
  await api.stop();
});

const podOf = (runtimeClassName?: string, overhead?: Record<string, string>): Pod => ({
  metadata: { name: 'p', namespace: 'd', uid: 'u' },
  spec: {
    containers: [{ name: 'c', image: 'busybox' }],
    ...(runtimeClassName ? { runtimeClassName } : {}),
    ...(overhead ? { overhead } : {}),
  },
});

const lookupOrError = (name: string, from: RuntimeClassCache = cache) => {
  try {
    return from.lookup(name);
  } catch (err) {
    return (err as Error).message;
  }
};

test('before the first list a lookup fails as not synced; after it, classes resolve', async () => {
  await api.call('POST', RUNTIME_CLASSES_PATH, {
    metadata: { name: 'kata' },
    handler: 'kata-qemu',
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
  });
  assert.match(String(lookupOrError('kata')), /not synced yet/);
  cache.start();
  await cache.synced();
  assert.deepEqual(cache.lookup('kata'), { handler: 'kata-qemu', overhead: { cpu: '250m', memory: '120Mi' } });
  assert.equal(lookupOrError('gone'), 'runtimeclasses.node.k8s.io "gone" not found');
});

test('a cache that cannot list stops waiting after its bound', async () => {
  const unlisted = new RuntimeClassCache(clients.main); // never started: no list will come
  const t0 = Date.now();
  await unlisted.synced(100);
  assert.ok(Date.now() - t0 < 5000);
  assert.match(String(lookupOrError('kata', unlisted)), /not synced yet/);
});

test('new, edited and deleted classes arrive through the watch', async () => {
  await api.call('POST', RUNTIME_CLASSES_PATH, { metadata: { name: 'alt' }, handler: 'alt' });
  await waitFor('alt known', 5000, () => (typeof lookupOrError('alt') === 'object' ? true : undefined), 20);
  assert.deepEqual(cache.lookup('alt'), { handler: 'alt' });
  await api.call(
    'PATCH',
    `${RUNTIME_CLASSES_PATH}/alt`,
    { overhead: { podFixed: { memory: '10Mi' } } },
    'application/merge-patch+json',
  );
  await waitFor('alt overhead', 5000, () => cache.lookup('alt').overhead, 20);
  await api.call('DELETE', `${RUNTIME_CLASSES_PATH}/alt`);
  await waitFor('alt gone', 5000, () => (typeof lookupOrError('alt') === 'string' ? true : undefined), 20);
  assert.equal(lookupOrError('alt'), 'runtimeclasses.node.k8s.io "alt" not found');
});

test("pods get their class's overhead unless they have one; pods without a class are left alone", () => {
  assert.deepEqual(cache.withOverhead(podOf('kata')).spec!.overhead, { cpu: '250m', memory: '120Mi' });
  assert.deepEqual(
    cache.withOverhead(podOf('kata', { cpu: '1' })).spec!.overhead,
    { cpu: '1' },
    "the pod's own overhead wins",
  );
  const plain = podOf();
  assert.equal(cache.withOverhead(plain), plain);
  assert.equal(
    cache.withOverhead(podOf('gone')).spec!.overhead,
    undefined,
    'an unknown class adds nothing (the sandbox fails later)',
  );
});

test('withRuntimeClassOverhead fills every update its source pushes', () => {
  const pushed: PodUpdate[] = [];
  let stopped = false;
  let push: ((u: PodUpdate) => void) | undefined;
  const source = withRuntimeClassOverhead(
    {
      start: (p) => {
        push = p;
      },
      stop: () => {
        stopped = true;
      },
    },
    cache,
  );
  source.start((u) => pushed.push(u));
  push!({ op: 'SET', source: 'api', pods: [podOf('kata'), podOf()] });
  assert.deepEqual(
    pushed[0]!.pods.map((p) => p.spec!.overhead),
    [{ cpu: '250m', memory: '120Mi' }, undefined],
  );
  // The same object re-sent (every apiserver event re-sends every pod) comes out as the same
  // object, so PodStorage recognises it unchanged without comparing it.
  const kata = podOf('kata');
  push!({ op: 'SET', source: 'api', pods: [kata] });
  push!({ op: 'SET', source: 'api', pods: [kata] });
  assert.equal(pushed[2]!.pods[0], pushed[1]!.pods[0]);
  source.stop();
  assert.ok(stopped);
});

test('a pod keeps the overhead it was first given when its class changes later (upstream: set once at admission)', async () => {
  await api.call('POST', RUNTIME_CLASSES_PATH, {
    metadata: { name: 'grow' },
    handler: 'alt',
    overhead: { podFixed: { memory: '10Mi' } },
  });
  await waitFor('grow known', 5000, () => (cache.has('grow') ? true : undefined), 20);
  const pushed: PodUpdate[] = [];
  let push: ((u: PodUpdate) => void) | undefined;
  withRuntimeClassOverhead(
    {
      start: (p) => {
        push = p;
      },
      stop: () => undefined,
    },
    cache,
  ).start((u) => pushed.push(u));
  const pod = { ...podOf('grow'), metadata: { name: 'g', namespace: 'default', uid: 'uid-grow' } };
  push!({ op: 'ADD', source: 'api', pods: [pod] });
  await api.call(
    'PATCH',
    `${RUNTIME_CLASSES_PATH}/grow`,
    { overhead: { podFixed: { memory: '99Mi' } } },
    'application/merge-patch+json',
  );
  await waitFor('grow changed', 5000, () => (cache.lookup('grow').overhead?.memory === '99Mi' ? true : undefined), 20);
  push!({ op: 'UPDATE', source: 'api', pods: [pod] });
  assert.deepEqual(
    pushed.map((u) => u.pods[0]!.spec!.overhead),
    [{ memory: '10Mi' }, { memory: '10Mi' }],
    'the running pod is not resized',
  );
  push!({ op: 'REMOVE', source: 'api', pods: [pod] });
  push!({ op: 'ADD', source: 'api', pods: [pod] });
  assert.deepEqual(
    pushed[3]!.pods[0]!.spec!.overhead,
    { memory: '99Mi' },
    'a pod seen anew gets the class as it is now',
  );
});

// upstream pkg/kubelet/runtimeclass/runtimeclass_manager_test.go TestLookupRuntimeHandler
// (nil / empty name → the default handler, a known class → its handler, an unknown one → NotFound).
test('upstream TestLookupRuntimeHandler table', async () => {
  const { runtimeHandlerFor } = await import('../../src/kuberuntime/runtime-class.js');
  await api.call('POST', RUNTIME_CLASSES_PATH, {
    metadata: { name: 'example-runtimeclass' },
    handler: 'example-handler',
  });
  await waitFor('example known', 5000, () => (cache.has('example-runtimeclass') ? true : undefined), 20);
  const cases: { name: string; runtimeClassName?: string; expected?: string; expectError?: RegExp }[] = [
    { name: 'nil runtime class', expected: '' },
    { name: 'empty runtime class', runtimeClassName: '', expected: '' },
    { name: 'existing runtime class', runtimeClassName: 'example-runtimeclass', expected: 'example-handler' },
    {
      name: 'non-existent runtime class',
      runtimeClassName: 'foo',
      expectError: /runtimeclasses.node.k8s.io "foo" not found/,
    },
  ];
  for (const c of cases) {
    const pod: Pod = {
      metadata: { name: 'p', uid: 'u' },
      spec: { containers: [], ...(c.runtimeClassName !== undefined ? { runtimeClassName: c.runtimeClassName } : {}) },
    };
    if (c.expectError) assert.throws(() => runtimeHandlerFor(pod, cache), c.expectError, c.name);
    else assert.equal(runtimeHandlerFor(pod, cache), c.expected, c.name);
  }
});
