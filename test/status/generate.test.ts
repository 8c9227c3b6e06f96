import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { generateAPIPodStatus, podQOSClass } from '../../src/status/index.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function pod(restartPolicy: string, names = ['a'], extra: Partial<Pod['spec']> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { restartPolicy, containers: names.map((n) => ({ name: n, image: 'busybox' })), ...extra } } as Pod;
}

function ctr(name: string, state: ContainerRuntimeStatus['state'], exitCode = 0, restartCount = 0, id = `${name}-${restartCount}`): ContainerRuntimeStatus {
  return {
    id, name, state, exitCode, restartCount, createdAt: new Date(NOW.getTime() + restartCount), startedAt: NOW, finishedAt: state === 'exited' ? NOW : undefined,
    image: 'busybox', imageRef: 'sha256:abc', reason: '', message: '', hash: 'h', podSandboxId: 's',
  };
}

function runtime(containers: ContainerRuntimeStatus[], sandboxReady = true): PodRuntimeStatus {
  return {
    uid: 'u', name: 'p', namespace: 'default', ips: ['10.0.0.5'], timestamp: NOW, containerStatuses: containers,
    sandboxStatuses: [{ id: 's', ready: sandboxReady, attempt: 0, createdAt: 0n, ip: '10.0.0.5', additionalIps: [], hostNetwork: false }],
  };
}

function gen(p: Pod, rt: PodRuntimeStatus, waiting = new Map()) {
  return generateAPIPodStatus({ pod: p, runtime: rt, waiting, hostIP: '192.0.2.1', now: NOW });
}

test('phase: Pending with no containers yet, Running when all run', () => {
  assert.equal(gen(pod('Always'), runtime([])).phase, 'Pending');
  const s = gen(pod('Always', ['a', 'b']), runtime([ctr('a', 'running'), ctr('b', 'running')]));
  assert.equal(s.phase, 'Running');
  assert.equal(s.podIP, '10.0.0.5');
  assert.deepEqual(s.podIPs, [{ ip: '10.0.0.5' }]);
  assert.equal(s.hostIP, '192.0.2.1');
  assert.equal(s.containerStatuses![0]!.containerID, 'containerd://a-0');
  assert.equal(s.containerStatuses![0]!.ready, true);
  assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
});

test('phase under each restartPolicy when containers have exited', () => {
  const ok = [ctr('a', 'exited', 0)];
  const bad = [ctr('a', 'exited', 1)];
  assert.equal(gen(pod('Always'), runtime(ok)).phase, 'Running', 'Always: restarting, still Running');
  assert.equal(gen(pod('OnFailure'), runtime(ok)).phase, 'Succeeded');
  assert.equal(gen(pod('OnFailure'), runtime(bad)).phase, 'Running');
  assert.equal(gen(pod('Never'), runtime(ok)).phase, 'Succeeded');
  assert.equal(gen(pod('Never'), runtime(bad)).phase, 'Failed');
  const t = gen(pod('Never'), runtime(bad)).containerStatuses![0]!.state!.terminated!;
  assert.equal(t.exitCode, 1);
  assert.equal(t.reason, 'Error');
  assert.equal(gen(pod('Never'), runtime(ok)).containerStatuses![0]!.state!.terminated!.reason, 'Completed');
});

test('a container in back-off is waiting with the death as lastState', () => {
  const s = gen(pod('Always'), runtime([ctr('a', 'exited', 2, 3)]), new Map([['a', { reason: 'CrashLoopBackOff', message: 'back-off 40s' }]]));
  const c = s.containerStatuses![0]!;
  assert.equal(c.state!.waiting!.reason, 'CrashLoopBackOff');
  assert.equal(c.lastState!.terminated!.exitCode, 2);
  assert.equal(c.restartCount, 3);
  assert.equal(s.phase, 'Running');
});

test('restarted container shows the previous instance as lastState', () => {
  const s = gen(pod('Always'), runtime([ctr('a', 'exited', 137, 0), ctr('a', 'running', 0, 1)]));
  const c = s.containerStatuses![0]!;
  assert.ok(c.state!.running);
  assert.equal(c.restartCount, 1);
  assert.equal(c.lastState!.terminated!.exitCode, 137);
});

test('image pull failures show as waiting', () => {
  const s = gen(pod('Always'), runtime([]), new Map([['a', { reason: 'ErrImagePull', message: 'not found' }]]));
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'ErrImagePull');
  assert.equal(s.phase, 'Pending');
});

test('conditions keep their transition time while unchanged', () => {
  const first = gen(pod('Always'), runtime([ctr('a', 'running')]));
  const later = new Date(NOW.getTime() + 5000);
  const second = generateAPIPodStatus({ pod: pod('Always'), runtime: runtime([ctr('a', 'running')]), waiting: new Map(), previous: first, hostIP: 'x', now: later });
  assert.deepEqual(second.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime, NOW);
  assert.equal(second.startTime, first.startTime);
  const third = generateAPIPodStatus({ pod: pod('Always'), runtime: runtime([ctr('a', 'exited', 1)]), waiting: new Map(), previous: second, hostIP: 'x', now: later });
  assert.deepEqual(third.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime, later);
});

test('qosClass', () => {
  assert.equal(podQOSClass(pod('Always')), 'BestEffort');
  const g = pod('Always');
  g.spec!.containers[0]!.resources = { limits: { cpu: '100m', memory: '64Mi' } };
  assert.equal(podQOSClass(g), 'Guaranteed');
  g.spec!.containers[0]!.resources = { requests: { cpu: '50m' }, limits: { cpu: '100m', memory: '64Mi' } };
  assert.equal(podQOSClass(g), 'Burstable');
});

test('a hostNetwork pod reports the node IP as its pod IP', () => {
  const rt = runtime([ctr('a', 'running')]);
  rt.sandboxStatuses[0] = { ...rt.sandboxStatuses[0]!, ip: '', hostNetwork: true };
  const s = gen(pod('Always', ['a'], { hostNetwork: true }), rt);
  assert.equal(s.podIP, '192.0.2.1');
  assert.deepEqual(s.podIPs, [{ ip: '192.0.2.1' }]);
});
