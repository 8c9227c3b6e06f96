// What the status manager does to every status (status/normalize.ts), as upstream's status manager:
// the pod's termination message budget (upstream status_manager_test.go
// TestStatusNormalizationEnforcesMaxBytes, with the per-container split that test's empty spec never
// reaches), and observedGeneration on the status and on the kubelet's conditions (upstream
// pkg/api/v1/pod/util_test.go TestCalculatePodStatusObservedGeneration and
// TestCalculatePodConditionObservedGeneration, PodObservedGenerationTracking on: locked in 1.35).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, ApiPodStatus, Pod } from '../../src/api/types.js';
import {
  MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH,
  capTerminationMessages,
  normalizeStatus,
  terminationMessageBudget,
  utf8Head,
} from '../../src/status/normalize.js';
import { createStatusManager, generateAPIPodStatus, markTerminatedByKubelet } from '../../src/status/index.js';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';

const named = (n: number, prefix = 'c') => Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, image: 'i' }));

function lastTerminated(name: string, message: string): ApiContainerStatus {
  return {
    name,
    ready: false,
    restartCount: 1,
    image: 'i',
    imageID: '',
    lastState: { terminated: { exitCode: 1, message } as never },
    state: { terminated: { exitCode: 2, message } as never },
  };
}

test('TestStatusNormalizationEnforcesMaxBytes: 48 statuses of an empty spec keep their 192..208 bytes', () => {
  const statuses = Array.from({ length: 48 }, (_, i) =>
    lastTerminated(`container${i}`, 'abcdefgh'.repeat(24 + (i % 3))),
  );
  const status: ApiPodStatus = {
    initContainerStatuses: statuses.slice(0, 16),
    containerStatuses: statuses.slice(16, 32),
    ephemeralContainerStatuses: statuses.slice(32),
  };
  const out = capTerminationMessages({ spec: { containers: [] } }, status);
  let count = 0;
  for (const s of out.initContainerStatuses!) {
    const l = s.lastState!.terminated!.message!.length;
    assert.ok(l >= 192 && l <= 256, `container message had length ${l}`);
    count += l;
  }
  assert.ok(count <= MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH);
});

test('the 12 KiB are split between init, regular and ephemeral containers of the spec; each message keeps its beginning', () => {
  const table: Array<[string, Pod['spec'], number]> = [
    ['no containers: the whole budget', { containers: [] }, 12288],
    ['one container: 12 KiB (above its own 4 KiB file cap)', { containers: named(1) }, 12288],
    ['three containers: 4 KiB each', { containers: named(3) }, 4096],
    [
      '2 init + 4 regular + 1 ephemeral: 12288 / 7',
      { initContainers: named(2, 'i'), containers: named(4), ephemeralContainers: named(1, 'e') as never },
      1755,
    ],
  ];
  for (const [name, spec, budget] of table) assert.equal(terminationMessageBudget({ spec }), budget, name);
  const pod: Pod = { spec: { containers: named(3), initContainers: named(3, 'i') } };
  const long = `BEGIN${'x'.repeat(4000)}END`;
  const short = lastTerminated('c1', 'short');
  const out = capTerminationMessages(pod, {
    containerStatuses: [lastTerminated('c0', long), short],
    initContainerStatuses: [lastTerminated('i0', long)],
  });
  for (const s of [out.containerStatuses![0]!, out.initContainerStatuses![0]!]) {
    assert.equal(s.state!.terminated!.message, long.slice(0, 2048), 'state: its first 2048 bytes');
    assert.equal(s.lastState!.terminated!.message, long.slice(0, 2048), 'lastState too');
  }
  assert.equal(out.containerStatuses![1]!.state!.terminated!.message, 'short', 'within budget: unchanged');
  assert.equal(out.containerStatuses![1], short, 'a status within budget is the same object');
});

test('a cut never leaves half a UTF-8 character (ours: upstream cuts bytes)', () => {
  assert.equal(utf8Head('aé', 2), 'a');
  assert.equal(utf8Head('aé', 3), 'aé');
  assert.equal(utf8Head('€€', 4), '€');
  assert.equal(utf8Head('abc', 10), 'abc');
  assert.equal(utf8Head('😀x', 3), '');
});

test('TestCalculatePodStatusObservedGeneration (gate on): the generation of the pod the status is for', () => {
  const status: ApiPodStatus = { phase: 'Running' };
  assert.deepEqual(normalizeStatus({ metadata: { generation: 5 } }, status), {
    observedGeneration: 5,
    phase: 'Running',
  });
  assert.equal(Object.keys(normalizeStatus({ metadata: { generation: 5 } }, status))[0], 'observedGeneration');
  assert.deepEqual(
    normalizeStatus({ metadata: { generation: 7 } }, { observedGeneration: 5, phase: 'Running' }),
    { observedGeneration: 7, phase: 'Running' },
    'a newer spec replaces an older observedGeneration',
  );
  assert.deepEqual(normalizeStatus({ metadata: {} }, status), { phase: 'Running' }, 'no generation (a file pod): none');
  assert.deepEqual(normalizeStatus({ metadata: {} }, { observedGeneration: 3, phase: 'Running' }), {
    phase: 'Running',
  });
});

test('the status manager keeps statuses normalized', () => {
  const m = createStatusManager();
  const pod: Pod = { metadata: { uid: 'u', generation: 2 }, spec: { containers: named(12) } };
  m.setPodStatus(pod, { phase: 'Failed', containerStatuses: [lastTerminated('c0', 'y'.repeat(3000))] });
  const got = m.getPodStatus('u')!;
  assert.equal(got.observedGeneration, 2);
  assert.equal(got.containerStatuses![0]!.state!.terminated!.message!.length, 1024, '12 KiB / 12 containers');
});

const runtime: PodRuntimeStatus = {
  uid: 'u',
  name: 'p',
  namespace: 'ns',
  ips: [],
  sandboxStatuses: [],
  containerStatuses: [],
  timestamp: new Date(0),
};

test('TestCalculatePodConditionObservedGeneration (gate on): every kubelet condition carries the pod generation', () => {
  const pod: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', generation: 3 },
    spec: { containers: named(1) },
    status: { conditions: [{ type: 'example.com/gate', status: 'True', observedGeneration: 1 }] },
  };
  const status = generateAPIPodStatus({ pod, runtime, waiting: new Map(), hostIP: '10.0.0.1', now: new Date(1000) });
  const byType = new Map(status.conditions!.map((c) => [c.type, c]));
  for (const t of ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']) {
    assert.equal(byType.get(t)?.observedGeneration, 3, t);
    assert.deepEqual(Object.keys(byType.get(t)!).slice(0, 3), ['type', 'observedGeneration', 'status'], t);
  }
  assert.equal(byType.get('example.com/gate')?.observedGeneration, 1, "another writer's condition is left as it was");
  const noGeneration = generateAPIPodStatus({
    pod: { ...pod, metadata: { ...pod.metadata, generation: undefined } },
    runtime,
    waiting: new Map(),
    hostIP: '10.0.0.1',
    now: new Date(1000),
  });
  assert.ok(
    noGeneration.conditions!.every((c) => c.type === 'example.com/gate' || !('observedGeneration' in c)),
    'no generation: none',
  );
});

test('DisruptionTarget carries the generation of the pod the kubelet stops', () => {
  const status: ApiPodStatus = { phase: 'Running', conditions: [] };
  markTerminatedByKubelet(status, { reason: 'Evicted', message: 'm', nowMs: 0, generation: 4 });
  assert.equal(status.conditions![0]!.type, 'DisruptionTarget');
  assert.equal(status.conditions![0]!.observedGeneration, 4);
  const none: ApiPodStatus = { phase: 'Running' };
  markTerminatedByKubelet(none, { reason: 'Evicted', message: 'm', nowMs: 0 });
  assert.equal('observedGeneration' in none.conditions![0]!, false);
});
