import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, Container, Pod, Probe } from '../../src/api/types.js';
import { ResultsCache } from '../../src/prober/results.js';
import { ProbeWorker, type WorkerContext } from '../../src/prober/worker.js';
import {
  decodeHealthCheckRequest,
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  encodeHealthCheckResponse,
} from '../../src/prober/grpc.js';
import type { ProbeReply, ProbeType } from '../../src/prober/types.js';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [] } } as unknown as Pod;

function setup(kind: ProbeType, spec: Probe, container: Partial<Container> = {}) {
  const replies: ProbeReply[] = [];
  let status: ApiContainerStatus = {
    name: 'c',
    containerID: 'containerd://id1',
    state: { running: { startedAt: new Date(0) } },
  } as ApiContainerStatus;
  const startup = new Set<string>();
  const ctx: WorkerContext = {
    latest: () => ({ pod, containers: [status], podIP: '10.0.0.1' }),
    startupSucceeded: (id) => startup.has(id),
    now: () => 100_000,
  };
  const results = new ResultsCache(kind);
  const changes: string[] = [];
  results.onUpdate((u) => changes.push(`${u.containerId}=${u.result}`));
  const prober = { probe: async () => replies.shift() ?? { outcome: 'success' as const, output: '' } };
  const w = new ProbeWorker(
    ctx,
    { podUid: 'u1', container: { name: 'c', image: 'x', ...container } as Container, probeType: kind, spec },
    prober,
    results,
  );
  return {
    w,
    results,
    changes,
    replies,
    startup,
    setStatus: (s: ApiContainerStatus) => {
      status = s;
    },
  };
}

const fail: ProbeReply = { outcome: 'failure', output: 'no' };
const ok: ProbeReply = { outcome: 'success', output: '' };

test('failureThreshold consecutive failures flip liveness, then the worker holds until a new container', async () => {
  const t = setup('liveness', { failureThreshold: 2 });
  t.replies.push(fail, ok, fail, fail, fail);
  for (let i = 0; i < 4; i++) await t.w.doProbe();
  assert.deepEqual(t.changes, ['id1=success', 'id1=failure']);
  await t.w.doProbe(); // on hold: the last reply stays queued
  assert.equal(t.replies.length, 1);
  t.setStatus({
    name: 'c',
    containerID: 'containerd://id2',
    state: { running: { startedAt: new Date(0) } },
  } as ApiContainerStatus);
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), undefined, 'the old container is forgotten');
  assert.equal(t.results.get('id2'), 'success');
});

test('readiness starts failed, needs successThreshold successes, and is failed while not running', async () => {
  const t = setup('readiness', { successThreshold: 2 });
  t.replies.push(ok, ok);
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), 'failure');
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), 'success');
  t.setStatus({
    name: 'c',
    containerID: 'containerd://id1',
    state: { terminated: { exitCode: 1 } },
  } as ApiContainerStatus);
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), 'failure');
});

test('liveness waits for the startup probe and for initialDelaySeconds; errors change nothing', async () => {
  const t = setup('liveness', { failureThreshold: 1, initialDelaySeconds: 0 }, { startupProbe: {} });
  t.replies.push(fail);
  await t.w.doProbe();
  assert.equal(t.replies.length, 1, 'not probed before startup succeeded');
  t.startup.add('id1');
  t.replies.unshift({ outcome: 'unknown', output: 'boom' });
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), 'success');
  await t.w.doProbe();
  assert.equal(t.results.get('id1'), 'failure');
  const d = setup('readiness', { initialDelaySeconds: 1000 });
  d.replies.push(ok);
  await d.w.doProbe();
  assert.equal(d.replies.length, 1, 'not probed during initialDelaySeconds');
});

test('grpc health messages round-trip', () => {
  assert.equal(decodeHealthCheckRequest(encodeHealthCheckRequest('svc.a')), 'svc.a');
  assert.equal(decodeHealthCheckRequest(encodeHealthCheckRequest('')), '');
  for (const s of [0, 1, 2, 3, 300]) assert.equal(decodeHealthCheckResponse(encodeHealthCheckResponse(s)), s);
});
