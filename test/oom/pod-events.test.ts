// What an OOM kill means for the node's pods (src/oom/pod-events.ts): OOMKilling on the pod with
// its container, SystemOOM on the Node outside pods, and the per-container count /metrics/cadvisor reads.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createOomPodEvents } from '../../src/oom/index.js';

function harness() {
  const raised: Array<{ kind: string; name: string; reason: string; message: string; fieldPath?: string }> = [];
  const pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u1' } } as Pod;
  const events = createOomPodEvents({
    nodeName: 'node-a',
    recorder: {
      event: (ref, _type, reason, message) =>
        raised.push({
          kind: ref.kind,
          name: ref.name,
          reason,
          message,
          ...(ref.fieldPath ? { fieldPath: ref.fieldPath } : {}),
        }),
    },
    pods: {
      getPodByUID: (uid) => (uid === 'u1' ? pod : undefined),
      containerName: (uid, id) => (uid === 'u1' && id === 'c1' ? 'app' : undefined),
    },
  });
  return { events, raised };
}

it('raises OOMKilling on the pod, naming the victim and the container, and counts it', () => {
  const { events, raised } = harness();
  events.onEvent({
    time: new Date(0),
    podUid: 'u1',
    containerId: 'c1',
    memcg: '/kubepods/podu1/c1',
    pid: 42,
    comm: 'stress',
    source: 'kmsg',
  });
  events.onEvent({
    time: new Date(0),
    podUid: 'u1',
    containerId: 'c1',
    memcg: '/kubepods/podu1/c1',
    pid: 43,
    comm: 'stress',
    source: 'kmsg',
  });
  assert.deepEqual(raised[0], {
    kind: 'Pod',
    name: 'web',
    reason: 'OOMKilling',
    fieldPath: 'spec.containers{app}',
    message: 'Memory cgroup out of memory: Killed process 42 (stress) in container app',
  });
  assert.deepEqual(events.counts(), [
    { podUid: 'u1', namespace: 'ns', pod: 'web', container: 'app', id: '/kubepods/podu1/c1', count: 2 },
  ]);
});

it('raises SystemOOM on the Node for a victim outside every pod, and counts nothing', () => {
  const { events, raised } = harness();
  events.onEvent({ time: new Date(0), memcg: '/system.slice/x.service', pid: 7, comm: 'daemon', source: 'kmsg' });
  assert.deepEqual(raised, [
    {
      kind: 'Node',
      name: 'node-a',
      reason: 'SystemOOM',
      message: 'System OOM encountered, victim process: daemon, pid: 7',
    },
  ]);
  assert.deepEqual(events.counts(), []);
});

it('a kill in a pod that is no longer desired raises nothing', () => {
  const { events, raised } = harness();
  events.onEvent({
    time: new Date(0),
    podUid: 'gone',
    containerId: 'c9',
    memcg: '/kubepods/podgone/c9',
    pid: 1,
    comm: 'x',
    source: 'memory.events',
  });
  assert.deepEqual(raised, []);
  assert.deepEqual(events.counts(), []);
});
