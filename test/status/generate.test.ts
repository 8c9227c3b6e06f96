import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import type { ContainerRuntimeStatus, ContainerWaiting, PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { apiTime, generateAPIPodStatus, rejectedPodStatus, type GenerateInput } from '../../src/status/index.js';
import { podQOSClass } from '../../src/util/pod-resources.js';
import { STAGES, diffStage } from './lifecycle-table.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(NOW.getTime() + s * 1000);

function pod(restartPolicy: string, names = ['a'], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: { restartPolicy, containers: names.map((n) => ({ name: n, image: 'busybox' })), ...extra },
  } as Pod;
}

function ctr(
  name: string,
  state: ContainerRuntimeStatus['state'],
  { exitCode = 0, restartCount = 0, ...opts }: Partial<ContainerRuntimeStatus> = {},
): ContainerRuntimeStatus {
  return {
    id: `${name}-${restartCount}`,
    name,
    state,
    exitCode,
    restartCount,
    createdAt: at(restartCount * 10),
    startedAt: at(restartCount * 10 + 1),
    finishedAt: state === 'exited' ? at(restartCount * 10 + 5) : undefined,
    image: 'busybox',
    imageRef: 'sha256:abc',
    reason: '',
    message: '',
    hash: 'h',
    podSandboxId: 's',
    ...opts,
  };
}

function runtime(
  containers: ContainerRuntimeStatus[],
  sandbox: 'ready' | 'notready' | 'none' = 'ready',
): PodRuntimeStatus {
  return {
    uid: 'u',
    name: 'p',
    namespace: 'default',
    ips: sandbox === 'none' ? [] : ['10.0.0.5'],
    timestamp: NOW,
    containerStatuses: containers,
    sandboxStatuses:
      sandbox === 'none'
        ? []
        : [
            {
              id: 's',
              ready: sandbox === 'ready',
              attempt: 0,
              createdAt: 0n,
              ip: '10.0.0.5',
              additionalIps: [],
              hostNetwork: false,
            },
          ],
  };
}

function gen(p: Pod, rt: PodRuntimeStatus, extra: Partial<GenerateInput> = {}) {
  return generateAPIPodStatus({ pod: p, runtime: rt, waiting: new Map(), hostIP: '192.0.2.1', now: NOW, ...extra });
}

const cond = (s: ApiPodStatus, type: string) => s.conditions!.find((c) => c.type === type)!;

// ---- a pod's life, as the table says (shared with the e2e test) --------------------------------

function lifecyclePod(restartPolicy: string): Pod {
  return pod(restartPolicy, ['app'], { initContainers: [{ name: 'init', image: 'busybox' }] });
}

const initDone = ctr('init', 'exited', { reason: 'Completed' });
const lifeTable: {
  stage: keyof typeof STAGES;
  policy: string;
  rt: PodRuntimeStatus;
  waiting?: Map<string, ContainerWaiting>;
  terminal?: boolean;
}[] = [
  { stage: 'pending', policy: 'Always', rt: runtime([], 'none') },
  { stage: 'initRunning', policy: 'Always', rt: runtime([ctr('init', 'running')]) },
  { stage: 'initDone', policy: 'Always', rt: runtime([initDone]) },
  { stage: 'running', policy: 'Always', rt: runtime([initDone, ctr('app', 'running')]) },
  {
    stage: 'crashLooping',
    policy: 'Always',
    rt: runtime([
      initDone,
      ctr('app', 'exited', { exitCode: 1, reason: 'Error' }),
      ctr('app', 'exited', { exitCode: 1, restartCount: 1, reason: 'Error' }),
    ]),
    waiting: new Map([
      ['app', { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=app pod=p_default(u)' }],
    ]),
  },
  {
    stage: 'succeeded',
    policy: 'Never',
    rt: runtime([initDone, ctr('app', 'exited', { reason: 'Completed' })], 'notready'),
    terminal: true,
  },
  {
    stage: 'failed',
    policy: 'Never',
    rt: runtime([initDone, ctr('app', 'exited', { exitCode: 1, reason: 'Error' })], 'notready'),
    terminal: true,
  },
];

for (const row of lifeTable) {
  test(`lifecycle table: ${STAGES[row.stage]!.name}`, () => {
    const s = gen(lifecyclePod(row.policy), row.rt, {
      waiting: row.waiting ?? new Map(),
      podIsTerminal: row.terminal ?? false,
    });
    assert.deepEqual(diffStage(s, STAGES[row.stage]!), []);
  });
}

test('lifecycle: statuses carried from stage to stage keep transition times and startTime', () => {
  const p = lifecyclePod('Never');
  let prev: ApiPodStatus | undefined;
  const seen: ApiPodStatus[] = [];
  const steps = [
    runtime([], 'none'),
    runtime([ctr('init', 'running')]),
    runtime([initDone]),
    runtime([initDone, ctr('app', 'running')]),
    runtime([initDone, ctr('app', 'exited', { reason: 'Completed' })], 'notready'),
  ];
  steps.forEach((rt, i) => {
    prev = generateAPIPodStatus({
      pod: p,
      runtime: rt,
      waiting: new Map(),
      previous: prev,
      hostIP: '192.0.2.1',
      now: at(i),
      podIsTerminal: i === steps.length - 1,
    });
    seen.push(prev);
  });
  assert.deepEqual(
    seen.map((s) => s.phase),
    ['Pending', 'Pending', 'Pending', 'Running', 'Succeeded'],
  );
  assert.equal(seen.at(-1)!.startTime!.getTime(), NOW.getTime(), 'startTime is the first observation');
  assert.equal(
    cond(seen.at(-1)!, 'PodScheduled').lastTransitionTime!.getTime(),
    NOW.getTime(),
    'PodScheduled never changed',
  );
  assert.equal(
    cond(seen.at(-1)!, 'Initialized').lastTransitionTime!.getTime(),
    at(2).getTime(),
    'Initialized became True at step 2',
  );
  assert.equal(cond(seen[3]!, 'Ready').lastTransitionTime!.getTime(), at(3).getTime());
  assert.equal(cond(seen.at(-1)!, 'Ready').lastTransitionTime!.getTime(), at(4).getTime());
  assert.equal(cond(seen.at(-1)!, 'PodReadyToStartContainers').lastTransitionTime!.getTime(), at(4).getTime());
});

// ---- phase rules through generateAPIPodStatus ------------------------------------------------

test('phase under each restartPolicy when containers have exited', () => {
  const ok = [ctr('a', 'exited')];
  const bad = [ctr('a', 'exited', { exitCode: 1 })];
  assert.equal(gen(pod('Always'), runtime(ok)).phase, 'Running', 'Always: restarting, still Running');
  assert.equal(gen(pod('OnFailure'), runtime(ok)).phase, 'Succeeded');
  assert.equal(gen(pod('OnFailure'), runtime(bad)).phase, 'Running');
  assert.equal(gen(pod('Never'), runtime(ok)).phase, 'Succeeded');
  assert.equal(gen(pod('Never'), runtime(bad)).phase, 'Failed');
  assert.equal(
    gen(pod('Always'), runtime(bad), { podIsTerminal: true }).phase,
    'Failed',
    'a terminal pod: exit codes decide',
  );
  const t = gen(pod('Never'), runtime(bad)).containerStatuses![0]!.state!.terminated!;
  assert.equal(t.exitCode, 1);
  assert.equal(t.reason, 'Error');
  assert.equal(gen(pod('Never'), runtime(ok)).containerStatuses![0]!.state!.terminated!.reason, 'Completed');
});

test('OOMKilled and the termination message pass through from the runtime', () => {
  const s = gen(
    pod('Never'),
    runtime([ctr('a', 'exited', { exitCode: 137, reason: 'OOMKilled', message: 'out of memory' })]),
  );
  const t = s.containerStatuses![0]!.state!.terminated!;
  assert.equal(t.reason, 'OOMKilled');
  assert.equal(t.message, 'out of memory');
  assert.equal(t.exitCode, 137);
  assert.equal(t.containerID, 'containerd://a-0');
  assert.equal(s.phase, 'Failed');
});

test('a terminal phase never goes back (three-way merge), reason and message carry over', () => {
  const failed: ApiPodStatus = { phase: 'Failed', reason: 'Evicted', message: 'The node was low on memory.' };
  const s = gen(pod('Always'), runtime([ctr('a', 'running')]), { previous: failed });
  assert.equal(s.phase, 'Failed');
  assert.equal(s.reason, 'Evicted');
  assert.equal(s.message, 'The node was low on memory.');
  const apiTerminal = pod('Always');
  apiTerminal.status = { phase: 'Succeeded' };
  assert.equal(gen(apiTerminal, runtime([ctr('a', 'running')])).phase, 'Succeeded');
  const s2 = gen(pod('Always'), runtime([ctr('a', 'running')]), { previous: { phase: 'Pending', reason: 'X' } });
  assert.equal(s2.reason, undefined, 'reason belongs to the phase it came with');
});

test('a DisruptionTarget condition set at eviction is kept', () => {
  const prev: ApiPodStatus = {
    phase: 'Failed',
    conditions: [
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message: 'm',
        lastTransitionTime: NOW,
      },
    ],
  };
  const s = gen(pod('Always'), runtime([ctr('a', 'exited', { exitCode: 137 })]), { previous: prev });
  assert.deepEqual(
    s.conditions!.map((c) => c.type),
    ['DisruptionTarget', 'PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
  );
});

// ---- container statuses -----------------------------------------------------------------------

test('a running pod: every field of the container status', () => {
  const s = gen(pod('Always', ['b', 'a']), runtime([ctr('a', 'running'), ctr('b', 'running')]));
  assert.equal(s.phase, 'Running');
  assert.deepEqual(
    s.containerStatuses!.map((c) => c.name),
    ['a', 'b'],
    'sorted by name as upstream',
  );
  const a = s.containerStatuses![0]!;
  assert.deepEqual(JSON.parse(JSON.stringify(a)), {
    name: 'a',
    state: { running: { startedAt: '2026-01-01T00:00:01Z' } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: 'busybox',
    imageID: 'sha256:abc',
    containerID: 'containerd://a-0',
    started: true,
  });
  assert.equal(s.podIP, '10.0.0.5');
  assert.deepEqual(s.podIPs, [{ ip: '10.0.0.5' }]);
  assert.equal(s.hostIP, '192.0.2.1');
  assert.deepEqual(s.hostIPs, [{ ip: '192.0.2.1' }]);
  assert.equal(s.qosClass, 'BestEffort');
  assert.equal(cond(s, 'Ready').status, 'True');
});

test('status JSON: upstream field order, RFC 3339 second timestamps, lastProbeTime null', () => {
  const s = gen(pod('Always'), runtime([ctr('a', 'running')]), { now: new Date('2026-01-01T00:00:00.789Z') });
  const json = JSON.parse(JSON.stringify(s));
  assert.deepEqual(Object.keys(json), [
    'phase',
    'conditions',
    'hostIP',
    'hostIPs',
    'podIP',
    'podIPs',
    'startTime',
    'containerStatuses',
    'qosClass',
  ]);
  assert.equal(json.startTime, '2026-01-01T00:00:00Z');
  assert.deepEqual(json.conditions[0], {
    type: 'PodReadyToStartContainers',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });
  const t = JSON.parse(
    JSON.stringify(gen(pod('Never'), runtime([ctr('a', 'exited', { exitCode: 2 })])).containerStatuses![0]!.state),
  );
  assert.deepEqual(t, {
    terminated: {
      exitCode: 2,
      reason: 'Error',
      startedAt: '2026-01-01T00:00:01Z',
      finishedAt: '2026-01-01T00:00:05Z',
      containerID: 'containerd://a-0',
    },
  });
});

test('a container in back-off is waiting with the death as lastState', () => {
  const s = gen(pod('Always'), runtime([ctr('a', 'exited', { exitCode: 2, restartCount: 3 })]), {
    waiting: new Map([['a', { reason: 'CrashLoopBackOff', message: 'back-off 40s' }]]),
  });
  const c = s.containerStatuses![0]!;
  assert.deepEqual(c.state, { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } });
  assert.equal(c.lastState!.terminated!.exitCode, 2);
  assert.equal(c.restartCount, 3);
  assert.equal(c.ready, false);
  assert.equal(c.started, false);
  assert.equal(s.phase, 'Running');
});

test('a waiting reason is shown only for a container that will be started again', () => {
  const w = new Map([['a', { reason: 'CrashLoopBackOff', message: 'm' }]]);
  const never = gen(pod('Never'), runtime([ctr('a', 'exited', { exitCode: 2 })]), { waiting: w });
  assert.ok(never.containerStatuses![0]!.state!.terminated, 'restartPolicy Never: stays terminated');
  const onFailureOk = gen(pod('OnFailure'), runtime([ctr('a', 'exited')]), { waiting: w });
  assert.ok(onFailureOk.containerStatuses![0]!.state!.terminated, 'OnFailure after success: stays terminated');
  const deleted = pod('Always');
  deleted.metadata!.deletionTimestamp = NOW;
  assert.ok(
    gen(deleted, runtime([ctr('a', 'exited', { exitCode: 2 })]), { waiting: w }).containerStatuses![0]!.state!
      .terminated,
    'deleted: never restarted',
  );
});

test('restarted container shows the previous instance as lastState; only two instances count', () => {
  const s = gen(
    pod('Always'),
    runtime([
      ctr('a', 'exited', { exitCode: 137 }),
      ctr('a', 'exited', { exitCode: 1, restartCount: 1 }),
      ctr('a', 'running', { restartCount: 2 }),
    ]),
  );
  const c = s.containerStatuses![0]!;
  assert.ok(c.state!.running);
  assert.equal(c.restartCount, 2);
  assert.equal(c.lastState!.terminated!.exitCode, 1);
  assert.equal(c.containerID, 'containerd://a-2');
});

test('image pull failures show as waiting; a created container waits without reason', () => {
  const s = gen(pod('Always'), runtime([]), {
    waiting: new Map([['a', { reason: 'ErrImagePull', message: 'not found' }]]),
  });
  assert.deepEqual(s.containerStatuses![0]!.state, { waiting: { reason: 'ErrImagePull', message: 'not found' } });
  assert.equal(s.phase, 'Pending');
  assert.deepEqual(gen(pod('Always'), runtime([ctr('a', 'created')])).containerStatuses![0]!.state, { waiting: {} });
  assert.deepEqual(gen(pod('Always'), runtime([])).containerStatuses![0]!.state, {
    waiting: { reason: 'ContainerCreating' },
  });
});

test('a container that vanished while running is reported terminated/unknown, not Pending', () => {
  const first = gen(pod('Always'), runtime([ctr('a', 'running')]));
  const s = gen(pod('Always'), runtime([]), { previous: first });
  const c = s.containerStatuses![0]!;
  assert.equal(c.lastState!.terminated!.reason, 'ContainerStatusUnknown');
  assert.equal(c.lastState!.terminated!.exitCode, 137);
  assert.equal(c.restartCount, 1);
  assert.equal(s.phase, 'Running');
  // An old terminated status survives its container's garbage collection.
  const done = gen(pod('Never'), runtime([ctr('a', 'exited', { exitCode: 3 })]));
  const later = gen(pod('Never'), runtime([]), { previous: done });
  assert.equal(later.containerStatuses![0]!.state!.terminated!.exitCode, 3);
  assert.equal(later.phase, 'Failed');
});

test('probes: started waits for the startup probe, ready for the readiness probe', () => {
  const p = pod('Always', ['a', 'b', 'c']);
  p.spec!.containers[0]!.readinessProbe = { exec: { command: ['true'] } };
  p.spec!.containers[1]!.startupProbe = { exec: { command: ['true'] } };
  const rt = runtime([ctr('a', 'running'), ctr('b', 'running'), ctr('c', 'running')]);
  const results = { ready: new Map<string, boolean>(), started: new Map<string, boolean>() };
  const probes = { readiness: (id: string) => results.ready.get(id), startup: (id: string) => results.started.get(id) };
  let s = gen(p, rt, { probes });
  assert.deepEqual(
    s.containerStatuses!.map((c) => [c.name, c.started, c.ready]),
    [
      ['a', true, false],
      ['b', false, false],
      ['c', true, true],
    ],
  );
  assert.equal(cond(s, 'ContainersReady').message, 'containers with unready status: [a b]');
  results.ready.set('a-0', true);
  results.started.set('b-0', true);
  s = gen(p, rt, { probes });
  assert.deepEqual(
    s.containerStatuses!.map((c) => [c.name, c.started, c.ready]),
    [
      ['a', true, true],
      ['b', true, true],
      ['c', true, true],
    ],
  );
  assert.equal(cond(s, 'Ready').status, 'True');
  assert.deepEqual(
    gen(p, rt).containerStatuses!.map((c) => c.ready),
    [true, true, true],
    'no prober: probes count as passed',
  );
});

test('readiness gates: Ready waits for the gate condition', () => {
  const p = pod('Always', ['a'], { readinessGates: [{ conditionType: 'example.com/lb' }] });
  const rt = runtime([ctr('a', 'running')]);
  assert.equal(
    cond(gen(p, rt), 'Ready').message,
    'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
  );
  assert.equal(cond(gen(p, rt), 'Ready').reason, 'ReadinessGatesNotReady');
  assert.equal(cond(gen(p, rt), 'ContainersReady').status, 'True');
  p.status = { conditions: [{ type: 'example.com/lb', status: 'True' }] };
  const s = gen(p, rt);
  assert.equal(cond(s, 'Ready').status, 'True');
  assert.equal(s.conditions![0]!.type, 'example.com/lb', 'conditions not owned by the kubelet are kept');
});

test('sidecars: started sidecar initializes the pod, is counted in ContainersReady, and keeps it Running', () => {
  const p = pod('Always', ['app'], { initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always' }] });
  let s = gen(p, runtime([ctr('side', 'running')]));
  assert.equal(s.phase, 'Pending', 'sidecar up, app not started');
  assert.equal(cond(s, 'Initialized').status, 'True');
  assert.equal(s.initContainerStatuses![0]!.started, true);
  assert.equal(s.initContainerStatuses![0]!.ready, true);
  s = gen(p, runtime([ctr('side', 'running'), ctr('app', 'running')]));
  assert.equal(s.phase, 'Running');
  assert.equal(cond(s, 'ContainersReady').status, 'True');
  s = gen(p, runtime([ctr('side', 'exited', { exitCode: 1 }), ctr('app', 'running')]), {
    waiting: new Map([['side', { reason: 'CrashLoopBackOff', message: '' }]]),
  });
  assert.equal(s.phase, 'Running', 'a restarting sidecar keeps an initialized pod Running');
  assert.equal(cond(s, 'Initialized').status, 'True');
  assert.equal(cond(s, 'ContainersReady').message, 'containers with unready status: [side]');
  s = gen(p, runtime([ctr('side', 'exited', { exitCode: 137 }), ctr('app', 'exited')], 'notready'), {
    podIsTerminal: true,
  });
  assert.equal(s.phase, 'Succeeded', 'completed app, sidecar stopped: the pod succeeded');
});

test('init container failing under restartPolicy Never fails the pod', () => {
  const p = pod('Never', ['app'], { initContainers: [{ name: 'init', image: 'busybox' }] });
  const s = gen(p, runtime([ctr('init', 'exited', { exitCode: 3 })]));
  assert.equal(s.phase, 'Failed');
  assert.equal(cond(s, 'Initialized').status, 'False');
  assert.equal(cond(s, 'Ready').reason, 'PodFailed');
  const retried = gen(
    pod('Always', ['app'], { initContainers: [{ name: 'init', image: 'busybox' }] }),
    runtime([ctr('init', 'exited', { exitCode: 3 })]),
    { waiting: new Map([['init', { reason: 'CrashLoopBackOff', message: '' }]]) },
  );
  assert.equal(retried.phase, 'Pending');
  assert.equal(retried.initContainerStatuses![0]!.state!.waiting!.reason, 'CrashLoopBackOff');
});

// ---- IPs, QoS, rejection ------------------------------------------------------------------------

test('a hostNetwork pod reports the node IP as its pod IP', () => {
  const rt = runtime([ctr('a', 'running')]);
  rt.ips = [];
  rt.sandboxStatuses[0] = { ...rt.sandboxStatuses[0]!, ip: '', hostNetwork: true };
  const s = gen(pod('Always', ['a'], { hostNetwork: true }), rt);
  assert.equal(s.podIP, '192.0.2.1');
  assert.deepEqual(s.podIPs, [{ ip: '192.0.2.1' }]);
  assert.equal(cond(s, 'PodReadyToStartContainers').status, 'True');
});

test('pod IPs: the node family first; kept once the sandbox is gone', () => {
  const rt = runtime([ctr('a', 'running')]);
  rt.ips = ['fd00::5', '10.0.0.5', '10.0.0.6'];
  assert.deepEqual(gen(pod('Always'), rt).podIPs, [{ ip: '10.0.0.5' }, { ip: 'fd00::5' }]);
  assert.deepEqual(gen(pod('Always'), rt, { hostIP: 'fd00::1' }).podIPs, [{ ip: 'fd00::5' }, { ip: '10.0.0.5' }]);
  const first = gen(pod('Always'), runtime([ctr('a', 'running')]));
  assert.equal(gen(pod('Always'), runtime([ctr('a', 'exited')], 'none'), { previous: first }).podIP, '10.0.0.5');
});

test('PodReadyToStartContainers: False without a ready sandbox, or with two ready ones', () => {
  assert.equal(cond(gen(pod('Always'), runtime([], 'none')), 'PodReadyToStartContainers').status, 'False');
  assert.equal(cond(gen(pod('Always'), runtime([], 'notready')), 'PodReadyToStartContainers').status, 'False');
  const two = runtime([]);
  two.sandboxStatuses.push({ ...two.sandboxStatuses[0]!, id: 's2' });
  assert.equal(cond(gen(pod('Always'), two), 'PodReadyToStartContainers').status, 'False');
});

test('qosClass', () => {
  assert.equal(podQOSClass(pod('Always')), 'BestEffort');
  const g = pod('Always');
  g.spec!.containers[0]!.resources = { limits: { cpu: '100m', memory: '64Mi' } };
  assert.equal(podQOSClass(g), 'Guaranteed');
  g.spec!.containers[0]!.resources = { requests: { cpu: '50m' }, limits: { cpu: '100m', memory: '64Mi' } };
  assert.equal(podQOSClass(g), 'Burstable');
});

test('a rejected pod: Failed, upstream reason, "Pod was rejected: " message, no containers', () => {
  const s = rejectedPodStatus(
    pod('Always'),
    'OutOfmemory',
    "Node didn't have enough resource: memory, requested: 1, used: 0, capacity: 0",
    NOW,
  );
  assert.deepEqual(JSON.parse(JSON.stringify(s)), {
    phase: 'Failed',
    message: "Pod was rejected: Node didn't have enough resource: memory, requested: 1, used: 0, capacity: 0",
    reason: 'OutOfmemory',
    startTime: '2026-01-01T00:00:00Z',
    qosClass: 'BestEffort',
  });
});

test('an evicted pod whose containers then exit 0 stays Failed/Evicted (a terminal phase is never replaced)', () => {
  const p = pod('Always');
  const evicted = {
    ...gen(p, runtime([ctr('a', 'running')])),
    phase: 'Failed',
    reason: 'Evicted',
    message: 'The node was low on resource: memory.',
  };
  const after = gen(p, runtime([ctr('a', 'exited')], 'notready'), { previous: evicted, podIsTerminal: true });
  assert.equal(after.phase, 'Failed');
  assert.equal(after.reason, 'Evicted');
  assert.equal(after.message, 'The node was low on resource: memory.');
});

// ---- pod sync handlers (the active deadline) and where startTime comes from ------------------

/** A pod sync handler that counts its calls and evicts when told to. */
function evictor(evict: boolean) {
  const h = {
    calls: 0,
    shouldEvict: () => {
      h.calls++;
      return evict
        ? {
            evict: true,
            reason: 'DeadlineExceeded',
            message: 'Pod was active on the node longer than the specified deadline',
          }
        : { evict: false };
    },
  };
  return h;
}

test('a pod sync handler that evicts turns a running pod Failed with its reason and message (upstream generateAPIPodStatus)', () => {
  const s = gen(pod('Always'), runtime([ctr('a', 'running')]), { podSyncHandlers: [evictor(false), evictor(true)] });
  assert.deepEqual(
    [s.phase, s.reason, s.message],
    ['Failed', 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline'],
  );
  assert.equal(cond(s, 'Ready').reason, 'PodFailed');
  assert.equal(
    gen(pod('Always'), runtime([ctr('a', 'running')]), { podSyncHandlers: [evictor(false)] }).phase,
    'Running',
  );
});

test("a phase already terminal (ours or the API's) is kept and the pod sync handlers are not asked again", () => {
  const h = evictor(true);
  const succeeded = gen(pod('Never'), runtime([ctr('a', 'exited')], 'notready'), {
    previous: { phase: 'Succeeded' },
    podSyncHandlers: [h],
  });
  assert.deepEqual([succeeded.phase, succeeded.reason], ['Succeeded', undefined]);
  const apiFailed = pod('Always');
  apiFailed.status = { phase: 'Failed', reason: 'Evicted' };
  assert.equal(
    gen(apiFailed, runtime([ctr('a', 'exited', { exitCode: 1 })]), { podSyncHandlers: [h] }).reason,
    'Evicted',
  );
  assert.equal(h.calls, 0, 'no second event for a pod already terminal');
});

test("startTime: the one we reported, else the API's, else the oldest ready sandbox's creation, else now", () => {
  const sandboxAt = (createdAt: bigint, ready: boolean, id: string) => ({
    id,
    ready,
    attempt: 0,
    createdAt,
    ip: '10.0.0.5',
    additionalIps: [],
    hostNetwork: false,
  });
  const rt = runtime([ctr('a', 'running')]);
  rt.sandboxStatuses = [
    sandboxAt(BigInt(at(-60).getTime()) * 1_000_000n + 123n, true, 'new'),
    sandboxAt(BigInt(at(-3600).getTime()) * 1_000_000n, false, 'old'),
  ];
  const json = (s: ApiPodStatus) => JSON.parse(JSON.stringify(s)).startTime;
  assert.equal(
    json(gen(pod('Always'), rt)),
    '2025-12-31T23:59:00Z',
    'the ready sandbox (a stopped one ended an earlier run)',
  );
  assert.equal(
    json(gen(pod('Always'), rt, { previous: { phase: 'Running', startTime: apiTime(at(-5)) } })),
    '2025-12-31T23:59:55Z',
  );
  const fromApi = pod('Always');
  fromApi.status = { phase: 'Running', startTime: '2025-12-31T23:00:00Z' as unknown as Date };
  assert.equal(json(gen(fromApi, rt)), '2025-12-31T23:00:00Z', 'the API status (a JSON string) survives our restarts');
  assert.equal(
    json(gen(pod('Always'), runtime([ctr('a', 'running')]))),
    '2026-01-01T00:00:00Z',
    'a sandbox without a creation time: now',
  );
  assert.equal(json(gen(pod('Always'), runtime([], 'none'))), '2026-01-01T00:00:00Z');
});

// upstream generateAPIPodStatus: ephemeral containers are converted as regular ones into
// ephemeralContainerStatuses, and getPhase and the conditions leave them out.
test('ephemeral containers: their own statuses, never the phase, Ready or a restart count', () => {
  const p = pod('Never', ['a'], {
    ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'a' }],
  });
  const none = gen(p, runtime([ctr('a', 'running')]));
  assert.equal(none.ephemeralContainerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  const running = gen(p, runtime([ctr('a', 'running'), ctr('debug', 'running')]));
  assert.equal(running.phase, 'Running');
  assert.ok(running.ephemeralContainerStatuses?.[0]?.state?.running);
  assert.equal(running.ephemeralContainerStatuses?.[0]?.containerID, 'containerd://debug-0');
  const done = gen(p, runtime([ctr('a', 'running'), ctr('debug', 'exited', { exitCode: 1, reason: 'Error' })]));
  assert.equal(done.phase, 'Running', 'an exited debug container does not end the pod');
  assert.equal(cond(done, 'Ready').status, 'True');
  assert.equal(done.ephemeralContainerStatuses?.[0]?.state?.terminated?.exitCode, 1);
  assert.equal(done.ephemeralContainerStatuses?.[0]?.restartCount, 0);
  const appDone = gen(p, runtime([ctr('a', 'exited'), ctr('debug', 'running')]));
  assert.equal(appDone.phase, 'Succeeded', 'a running debug container does not keep the pod Running');
  assert.equal(gen(pod('Never'), runtime([ctr('a', 'running')])).ephemeralContainerStatuses, undefined);
});

test('resize conditions carry the pod generation (KEP-5067), after the type', () => {
  const p = pod('Always');
  p.metadata!.generation = 3;
  const s = gen(p, runtime([ctr('a', 'running')]), {
    resizeConditions: [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', message: 'later' }],
  });
  const c = cond(s, 'PodResizePending');
  assert.deepEqual(Object.keys(c).slice(0, 2), ['type', 'observedGeneration']);
  assert.equal(c.observedGeneration, 3);
  assert.equal(c.reason, 'Deferred');
});

// upstream convertToAPIContainerStatuses with convertContainerStatusUser (SupplementalGroupsPolicy,
// GA in 1.35): the newest instance's identity as the runtime reports it, last in the field order.
test('containerStatuses[].user: from the runtime when it reports one (containerd 2.x), absent otherwise', () => {
  const linux = { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] };
  const s = gen(
    pod('Always', ['a', 'b', 'c']),
    runtime([
      ctr('a', 'running', { user: { linux } }),
      ctr('b', 'running'),
      ctr('c', 'exited', { restartCount: 1, user: {} }),
      ctr('c', 'exited', { restartCount: 0, user: { linux: { uid: 1, gid: 1, supplementalGroups: [] } } }),
    ]),
  );
  const [a, b, c] = s.containerStatuses!;
  assert.deepEqual(a!.user, { linux });
  assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(a))).slice(-2), ['started', 'user']);
  assert.equal(b!.user, undefined, 'containerd 1.6/1.7 report no user');
  assert.deepEqual(c!.user, {}, "the newest instance's: a user without a Linux part");
});
