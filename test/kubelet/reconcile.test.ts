// upstream HandlePodReconcile and cleanUpContainersInPod (pkg/kubelet/kubelet.go): a RECONCILE
// syncs a pod whose Ready condition disagrees with its readiness gates, and removes every dead
// container of an evicted pod; a ContainerDied removes the surplus dead containers of that name,
// or all of them when the pod's content may go. The removals read the cached status, never one
// holding an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import type { UpdatePodOptions } from '../../src/podworkers/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakePLEG } from './fake-pleg.js';
import { testTempDir } from '../support/temp-dir.js';
import { volumeRoot } from './volume-root.js';

function setup() {
  const runtime = new FakeRuntime();
  const cache = createPodStatusCache();
  const kubelet = new Kubelet({
    nodeName: 'n',
    hostIP: '192.0.2.1',
    ...volumeRoot(testTempDir('kts-reconcile-')),
    maxPods: 110,
    syncFrequencyMs: 60_000,
    node: computeNodeInfo({ nodeName: 'n', maxPods: 110, capacity: { milliCPU: 2000, memory: 4 * 2 ** 30 } }),
    runtime,
    pleg: new FakePLEG(runtime, cache),
    cache,
    statusManager: createStatusManager(),
    sources: new Set(['api']),
  });
  const dispatched: string[] = [];
  kubelet.podWorkers.updatePod = (o: UpdatePodOptions) => {
    dispatched.push(`${o.updateType}:${o.pod?.metadata?.uid}`);
  };
  return { runtime, cache, kubelet, dispatched };
}

const status = (uid: string) => ({
  uid,
  name: uid,
  namespace: 'ns',
  ips: [],
  sandboxStatuses: [],
  containerStatuses: [],
  timestamp: new Date(),
});

function pod(
  uid: string,
  extra: { gates?: boolean; ready?: 'True' | 'False'; message?: string; evicted?: boolean } = {},
): Pod {
  return {
    metadata: { name: uid, namespace: 'ns', uid },
    spec: {
      containers: [{ name: 'a', image: 'x' }],
      ...(extra.gates ? { readinessGates: [{ conditionType: 'example.com/gate' }] } : {}),
    },
    status: {
      phase: extra.evicted ? 'Failed' : 'Running',
      ...(extra.evicted ? { reason: 'Evicted' } : {}),
      conditions: [
        ...(extra.ready
          ? [{ type: 'Ready', status: extra.ready, ...(extra.message ? { message: extra.message } : {}) }]
          : []),
        { type: 'ContainersReady', status: 'True' },
        { type: 'example.com/gate', status: 'False' },
      ],
      containerStatuses: [
        { name: 'a', ready: true, restartCount: 0, image: 'x', imageID: 'x', state: { running: {} } },
      ],
    },
  } as unknown as Pod;
}

// [name, pod, synced, dead containers removed (removeAll)]
const ROWS: Array<[string, Pod, boolean, boolean]> = [
  ['no readiness gates: nothing to reconcile', pod('a', { ready: 'True' }), false, false],
  ['a gate not True but Ready reported True: synced', pod('b', { gates: true, ready: 'True' }), true, false],
  [
    "Ready already False with the gate's message: not synced",
    pod('c', {
      gates: true,
      ready: 'False',
      message: 'the status of pod readiness gate "example.com/gate" is not "True", but False',
    }),
    false,
    false,
  ],
  ['no Ready condition yet: not synced', pod('d', { gates: true }), false, false],
  ['evicted: every dead container goes', pod('e', { evicted: true }), false, true],
];

for (const [name, p, synced, removed] of ROWS) {
  test(`HandlePodReconcile: ${name}`, () => {
    const { runtime, cache, kubelet, dispatched } = setup();
    cache.set(p.metadata!.uid!, status(p.metadata!.uid!), undefined, Date.now());
    kubelet.handlePodReconcile([p]);
    assert.deepEqual(dispatched, synced ? [`sync:${p.metadata!.uid}`] : []);
    assert.deepEqual(runtime.deletions, removed ? [['', true]] : []);
  });
}

test('HandlePodReconcile of an evicted pod whose cached status holds an error removes nothing', () => {
  const { runtime, cache, kubelet } = setup();
  cache.set('e', undefined, new Error('timeout'), Date.now());
  kubelet.handlePodReconcile([pod('e', { evicted: true })]);
  assert.deepEqual(runtime.deletions, []);
});
