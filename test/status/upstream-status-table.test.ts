/**
 * Status generation, case by case as upstream's tables: the kubelet-owned conditions
 * (pkg/kubelet/status/generate_test.go), generateAPIPodStatus and convertToAPIContainerStatuses
 * (pkg/kubelet/kubelet_pods_test.go, kubelet_test.go). The phase tables are in phase.test.ts.
 *
 * Not mirrored: rows behind alpha feature gates (RestartAllContainersOnContainerExits,
 * ContainerRestartRules, InPlacePodVerticalScaling / pod-level resources, ImageVolumeWithDigest,
 * the InsecureUserID conditions), the `nil` container-status rows (Go's nil slice: our statuses
 * are always a list), readiness in Test_generateAPIPodStatus (their fake prober marks every
 * container ready; probes are tested in generate.test.ts), and the Reason/Message upstream's
 * newest PodReadyToStartContainers carries (only its status is checked here).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, ApiPodStatus, Container, Pod, PodCondition } from '../../src/api/types.js';
import type { ContainerRuntimeStatus, ContainerWaiting, PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { generateAPIPodStatus, type GenerateInput } from '../../src/status/index.js';
import {
  containersReadyCondition,
  podInitializedCondition,
  podReadyCondition,
  podReadyToStartContainersCondition,
} from '../../src/status/conditions.js';
import { convertToAPIContainerStatuses } from '../../src/status/container-statuses.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const T0 = new Date('2025-12-31T00:00:00Z');

// ---- builders ---------------------------------------------------------------------------------

type State = 'running' | 'created' | 'exited' | 'unknown';

/** A runtime container; `age` orders instances of one name (0 = newest). */
function ctr(
  name: string,
  state: State,
  { exitCode = 0, age = 0, ...opts }: Partial<ContainerRuntimeStatus> & { age?: number } = {},
): ContainerRuntimeStatus {
  const createdAt = new Date(NOW.getTime() - 1000 * (age + 1));
  return {
    id: `${name}-${age}`,
    name,
    state,
    exitCode,
    restartCount: 0,
    createdAt,
    startedAt: createdAt,
    finishedAt: state === 'exited' ? createdAt : undefined,
    image: 'img',
    imageRef: 'sha256:img',
    reason: '',
    message: '',
    hash: 'h',
    podSandboxId: 's',
    ...opts,
  };
}

/** The runtime's view: the newest sandbox first; 'none' = no sandbox at all. */
function runtime(
  containers: ContainerRuntimeStatus[],
  sandbox: 'ready' | 'notready' | 'none' = 'ready',
  ips: string[] = [],
): PodRuntimeStatus {
  return {
    uid: 'u',
    name: 'p',
    namespace: 'ns',
    ips,
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
              ip: '10.0.0.10',
              additionalIps: [],
              hostNetwork: false,
            },
          ],
  };
}

function pod(spec: Partial<NonNullable<Pod['spec']>>, extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name: 'my-pod', namespace: 'ns', uid: 'u' },
    spec: { containers: [], ...spec },
    ...extra,
  } as Pod;
}
const named = (...names: string[]): Container[] => names.map((name) => ({ name, image: 'img' }));
const sidecar = (name: string): Container => ({ name, image: 'img', restartPolicy: 'Always' });
const desiredState = { nodeName: 'machine', restartPolicy: 'Always', containers: named('containerA', 'containerB') };

// upstream's container status helpers
const st = (name: string, s: Partial<ApiContainerStatus>): ApiContainerStatus => ({
  name,
  image: 'img',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: {},
  lastState: {},
  ...s,
});
const runningState = (n: string) => st(n, { state: { running: {} } });
const waitingState = (n: string) => st(n, { state: { waiting: {} } });
const succeededState = (n: string) => st(n, { state: { terminated: { exitCode: 0 } } });
const failedState = (n: string, restartCount = 0) => st(n, { state: { terminated: { exitCode: -1 } }, restartCount });
const readyStatus = (n: string) => st(n, { ready: true });
const notReadyStatus = (n: string) => st(n, { ready: false });
const startedStatus = (n: string, started: boolean) => st(n, { started });

function gen(p: Pod, rt: PodRuntimeStatus, extra: Partial<GenerateInput> = {}): ApiPodStatus {
  return generateAPIPodStatus({
    pod: p,
    runtime: rt,
    waiting: new Map(),
    hostIP: '127.0.0.1',
    hostIPs: ['127.0.0.1', '::1'],
    now: NOW,
    ...extra,
  });
}

/** A condition as upstream's getPodCondition(type, status, reason, message): empty fields left out. */
function cond(type: string, status: string, reason = '', message = ''): Record<string, string> {
  return { type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}
const strip = (c: { type: string; status: string; reason?: string; message?: string }) =>
  cond(c.type, c.status, c.reason, c.message);

/** A container status reduced to what upstream's tables compare. */
function summary(s: ApiContainerStatus | undefined): string {
  if (!s) return 'missing';
  const one = (x: ApiContainerStatus['state']) =>
    x?.running
      ? 'running'
      : x?.terminated
        ? `terminated(${x.terminated.exitCode}${x.terminated.reason ? `,${x.terminated.reason}` : ''})`
        : x?.waiting
          ? `waiting(${x.waiting.reason ?? ''})`
          : '-';
  return `${one(s.state)} last=${one(s.lastState)} restarts=${s.restartCount}`;
}
const byName = (list: readonly ApiContainerStatus[] | undefined) =>
  Object.fromEntries((list ?? []).map((s) => [s.name, summary(s)]));

// ---- conditions (pkg/kubelet/status/generate_test.go) ---------------------------------------

describe('ContainersReady', () => {
  // upstream pkg/kubelet/status/generate_test.go TestGenerateContainersReadyCondition
  const rows: Array<[string, Partial<NonNullable<Pod['spec']>>, ApiContainerStatus[], string, Record<string, string>]> =
    [
      ['no containers', {}, [], 'Running', cond('ContainersReady', 'True')],
      [
        'one unknown',
        { containers: named('1234') },
        [],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unknown status: [1234]'),
      ],
      [
        'all ready',
        { containers: named('1234', '5678') },
        [readyStatus('1234'), readyStatus('5678')],
        'Running',
        cond('ContainersReady', 'True'),
      ],
      [
        'one unknown of two',
        { containers: named('1234', '5678') },
        [readyStatus('1234')],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unknown status: [5678]'),
      ],
      [
        'one unready',
        { containers: named('1234', '5678') },
        [readyStatus('1234'), notReadyStatus('5678')],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unready status: [5678]'),
      ],
      [
        'succeeded',
        { containers: named('1234') },
        [notReadyStatus('1234')],
        'Succeeded',
        cond('ContainersReady', 'False', 'PodCompleted'),
      ],
      [
        'sidecar unknown',
        { initContainers: [sidecar('restartable-init-1')], containers: named('regular-1') },
        [readyStatus('regular-1')],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unknown status: [restartable-init-1]'),
      ],
      [
        'sidecars ready',
        {
          initContainers: [sidecar('restartable-init-1'), sidecar('restartable-init-2')],
          containers: named('regular-1'),
        },
        [readyStatus('restartable-init-1'), readyStatus('restartable-init-2'), readyStatus('regular-1')],
        'Running',
        cond('ContainersReady', 'True'),
      ],
      [
        'second sidecar unknown',
        {
          initContainers: [sidecar('restartable-init-1'), sidecar('restartable-init-2')],
          containers: named('regular-1'),
        },
        [readyStatus('restartable-init-1'), readyStatus('regular-1')],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unknown status: [restartable-init-2]'),
      ],
      [
        'second sidecar unready',
        {
          initContainers: [sidecar('restartable-init-1'), sidecar('restartable-init-2')],
          containers: named('regular-1'),
        },
        [readyStatus('restartable-init-1'), notReadyStatus('restartable-init-2'), readyStatus('regular-1')],
        'Running',
        cond('ContainersReady', 'False', 'ContainersNotReady', 'containers with unready status: [restartable-init-2]'),
      ],
    ];
  for (const [name, spec, statuses, phase, want] of rows) {
    it(name, () => assert.deepEqual(strip(containersReadyCondition(pod(spec), statuses, phase as never)), want));
  }
});

describe('Ready', () => {
  // upstream pkg/kubelet/status/generate_test.go TestGeneratePodReadyCondition
  const gate = (...types: string[]) => types.map((conditionType) => ({ conditionType }));
  const c = (type: string, status: string) => ({ type, status }) as PodCondition;
  const rows: Array<
    [string, Partial<NonNullable<Pod['spec']>>, PodCondition[], ApiContainerStatus[], string, Record<string, string>]
  > = [
    ['no containers', {}, [], [], 'Running', cond('Ready', 'True')],
    [
      'one unknown',
      { containers: named('1234') },
      [],
      [],
      'Running',
      cond('Ready', 'False', 'ContainersNotReady', 'containers with unknown status: [1234]'),
    ],
    [
      'all ready',
      { containers: named('1234', '5678') },
      [],
      [readyStatus('1234'), readyStatus('5678')],
      'Running',
      cond('Ready', 'True'),
    ],
    [
      'one unknown of two',
      { containers: named('1234', '5678') },
      [],
      [readyStatus('1234')],
      'Running',
      cond('Ready', 'False', 'ContainersNotReady', 'containers with unknown status: [5678]'),
    ],
    [
      'one unready',
      { containers: named('1234', '5678') },
      [],
      [readyStatus('1234'), notReadyStatus('5678')],
      'Running',
      cond('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [5678]'),
    ],
    [
      'succeeded',
      { containers: named('1234') },
      [],
      [notReadyStatus('1234')],
      'Succeeded',
      cond('Ready', 'False', 'PodCompleted'),
    ],
    [
      'gate without its condition',
      { readinessGates: gate('gate1') },
      [],
      [],
      'Running',
      cond(
        'Ready',
        'False',
        'ReadinessGatesNotReady',
        'corresponding condition of pod readiness gate "gate1" does not exist.',
      ),
    ],
    [
      'gate False',
      { readinessGates: gate('gate1') },
      [c('gate1', 'False')],
      [],
      'Running',
      cond(
        'Ready',
        'False',
        'ReadinessGatesNotReady',
        'the status of pod readiness gate "gate1" is not "True", but False',
      ),
    ],
    ['gate True', { readinessGates: gate('gate1') }, [c('gate1', 'True')], [], 'Running', cond('Ready', 'True')],
    [
      'second gate missing',
      { readinessGates: gate('gate1', 'gate2') },
      [c('gate1', 'True')],
      [],
      'Running',
      cond(
        'Ready',
        'False',
        'ReadinessGatesNotReady',
        'corresponding condition of pod readiness gate "gate2" does not exist.',
      ),
    ],
    [
      'second gate False',
      { readinessGates: gate('gate1', 'gate2') },
      [c('gate1', 'True'), c('gate2', 'False')],
      [],
      'Running',
      cond(
        'Ready',
        'False',
        'ReadinessGatesNotReady',
        'the status of pod readiness gate "gate2" is not "True", but False',
      ),
    ],
    [
      'both gates True',
      { readinessGates: gate('gate1', 'gate2') },
      [c('gate1', 'True'), c('gate2', 'True')],
      [],
      'Running',
      cond('Ready', 'True'),
    ],
    [
      'gate True, container unready',
      { containers: named('1234'), readinessGates: gate('gate1') },
      [c('gate1', 'True')],
      [notReadyStatus('1234')],
      'Running',
      cond('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [1234]'),
    ],
  ];
  for (const [name, spec, conditions, statuses, phase, want] of rows) {
    it(name, () => assert.deepEqual(strip(podReadyCondition(pod(spec), conditions, statuses, phase as never)), want));
  }
});

describe('Initialized', () => {
  // upstream pkg/kubelet/status/generate_test.go TestGeneratePodInitializedCondition (type, status, reason)
  const none = {};
  const one = { initContainers: named('1234'), containers: named('regular') };
  const two = { initContainers: named('1234', '5678'), containers: named('regular') };
  const oneSidecar = { initContainers: [sidecar('1234')], containers: named('regular') };
  const rows: Array<[string, Partial<NonNullable<Pod['spec']>>, ApiContainerStatus[], string, string, string]> = [
    ['no init containers', none, [], 'Running', 'True', ''],
    ['init container unknown', one, [], 'Running', 'False', 'ContainersNotInitialized'],
    ['both init containers done', two, [readyStatus('1234'), readyStatus('5678')], 'Running', 'True', ''],
    ['second init container unknown', two, [readyStatus('1234')], 'Running', 'False', 'ContainersNotInitialized'],
    [
      'second init container not done',
      two,
      [readyStatus('1234'), notReadyStatus('5678')],
      'Running',
      'False',
      'ContainersNotInitialized',
    ],
    ['succeeded pod', one, [readyStatus('1234')], 'Succeeded', 'True', 'PodCompleted'],
    ['sidecar not started', oneSidecar, [startedStatus('1234', false)], 'Pending', 'False', 'ContainersNotInitialized'],
    ['sidecar started', oneSidecar, [startedStatus('1234', true)], 'Running', 'True', ''],
    [
      'sidecar restarting after a regular container ran',
      oneSidecar,
      [startedStatus('1234', false), runningState('regular')],
      'Running',
      'True',
      '',
    ],
    [
      'init container waiting again after a regular container ran',
      one,
      [waitingState('1234'), st('regular', { state: { terminated: { exitCode: 0 } } })],
      'Running',
      'True',
      '',
    ],
  ];
  for (const [name, spec, statuses, phase, status, reason] of rows) {
    it(name, () => {
      const c = podInitializedCondition(pod(spec), statuses, phase as never);
      assert.deepEqual([c.type, c.status, c.reason ?? ''], ['Initialized', status, reason]);
    });
  }
});

describe('PodReadyToStartContainers', () => {
  // upstream pkg/kubelet/status/generate_test.go TestGeneratePodReadyToStartContainersCondition (status)
  const sandbox = (ready: boolean, ip: string, hostNetwork = false, id = 's') => ({
    id,
    ready,
    attempt: 0,
    createdAt: 0n,
    ip,
    additionalIps: [],
    hostNetwork,
  });
  const rows: Array<[string, Pod, PodRuntimeStatus['sandboxStatuses'], string]> = [
    ['empty pod status', pod({}), [], 'False'],
    ['sandbox not ready', pod({}), [sandbox(false, '')], 'False'],
    [
      'two ready sandboxes',
      pod({}),
      [sandbox(true, '10.0.0.10', false, 'a'), sandbox(true, '10.0.0.11', false, 'b')],
      'False',
    ],
    [
      'ready, but the network namespace mode changed',
      pod({ hostNetwork: true }),
      [sandbox(true, '10.0.0.10')],
      'False',
    ],
    ['ready without an IP', pod({}), [sandbox(true, '')], 'False'],
    ['ready with an IP', pod({}), [sandbox(true, '10.0.0.10')], 'True'],
  ];
  for (const [name, p, sandboxes, want] of rows) {
    it(name, () =>
      assert.equal(podReadyToStartContainersCondition(p, { ...runtime([]), sandboxStatuses: sandboxes }).status, want),
    );
  }
});

// ---- generateAPIPodStatus (pkg/kubelet/kubelet_pods_test.go, kubelet_test.go) ----------------

describe('generateAPIPodStatus', () => {
  // upstream pkg/kubelet/kubelet_pods_test.go Test_generateAPIPodStatus
  const unknownLast = (restarts: number) =>
    `waiting(ContainerCreating) last=terminated(137,ContainerStatusUnknown) restarts=${restarts}`;
  const deletedPod = (status: ApiPodStatus) =>
    pod(desiredState, { metadata: { name: 'my-pod', namespace: 'ns', uid: 'u', deletionTimestamp: NOW }, status });
  const running2 = [runningState('containerA'), runningState('containerB')];
  interface Row {
    name: string;
    pod: Pod;
    rt: PodRuntimeStatus;
    previous?: ApiPodStatus;
    terminal?: boolean;
    phase: string;
    reason?: string;
    message?: string;
    containers: Record<string, string>;
    conditions?: Record<string, Record<string, string>>;
    readyToStart?: string;
  }
  const terminalConds = (reasonOf: 'PodFailed' | 'PodCompleted') => ({
    Initialized:
      reasonOf === 'PodCompleted' ? cond('Initialized', 'True', 'PodCompleted') : cond('Initialized', 'True'),
    Ready: cond('Ready', 'False', reasonOf),
    ContainersReady: cond('ContainersReady', 'False', reasonOf),
    PodScheduled: cond('PodScheduled', 'True'),
  });
  const rows: Row[] = [
    {
      name: 'pod disruption condition is copied over and the phase is set to failed when deleted',
      pod: deletedPod({ containerStatuses: running2 }),
      rt: runtime([]),
      previous: {
        containerStatuses: running2,
        conditions: [{ type: 'DisruptionTarget', status: 'True', lastTransitionTime: T0 } as PodCondition],
      },
      terminal: true,
      phase: 'Failed',
      containers: { containerA: unknownLast(0), containerB: unknownLast(0) },
      conditions: { ...terminalConds('PodFailed'), DisruptionTarget: cond('DisruptionTarget', 'True') },
      readyToStart: 'True',
    },
    {
      name: 'current status ready, with previous statuses and deletion',
      pod: deletedPod({ containerStatuses: running2 }),
      rt: runtime([]),
      previous: { containerStatuses: running2 },
      phase: 'Running',
      containers: { containerA: unknownLast(0), containerB: unknownLast(0) },
      readyToStart: 'True',
    },
    {
      name: 'current status ready, with previous statuses and no deletion',
      pod: pod(desiredState, { status: { containerStatuses: running2 } }),
      rt: runtime([]),
      previous: { containerStatuses: running2 },
      phase: 'Running',
      containers: { containerA: unknownLast(1), containerB: unknownLast(1) },
      readyToStart: 'True',
    },
    {
      name: 'terminal phase cannot be changed (apiserver previous is succeeded)',
      pod: pod(desiredState, { status: { phase: 'Succeeded', containerStatuses: running2 } }),
      rt: runtime([], 'none'),
      previous: { containerStatuses: running2 },
      phase: 'Succeeded',
      containers: { containerA: unknownLast(1), containerB: unknownLast(1) },
      conditions: terminalConds('PodCompleted'),
      readyToStart: 'False',
    },
    {
      name: 'terminal phase from previous status must remain terminal, restartAlways',
      pod: pod(desiredState, { status: { phase: 'Running', containerStatuses: running2 } }),
      rt: runtime([], 'none'),
      previous: { phase: 'Succeeded', containerStatuses: running2, reason: 'Test', message: 'test' },
      phase: 'Succeeded',
      reason: 'Test',
      message: 'test',
      containers: { containerA: unknownLast(1), containerB: unknownLast(1) },
      conditions: terminalConds('PodCompleted'),
      readyToStart: 'False',
    },
    {
      name: 'terminal phase from previous status must remain terminal, restartNever',
      pod: pod(
        { ...desiredState, restartPolicy: 'Never' },
        { status: { phase: 'Running', containerStatuses: running2 } },
      ),
      rt: runtime([], 'none'),
      previous: {
        phase: 'Succeeded',
        containerStatuses: [succeededState('containerA'), succeededState('containerB')],
        reason: 'Test',
        message: 'test',
      },
      phase: 'Succeeded',
      reason: 'Test',
      message: 'test',
      containers: { containerA: 'terminated(0) last=- restarts=0', containerB: 'terminated(0) last=- restarts=0' },
      conditions: terminalConds('PodCompleted'),
      readyToStart: 'False',
    },
    {
      name: 'running can revert to pending',
      pod: pod(desiredState, { status: { phase: 'Running', containerStatuses: running2 } }),
      rt: runtime([]),
      previous: { containerStatuses: [waitingState('containerA'), waitingState('containerB')] },
      phase: 'Pending',
      containers: {
        containerA: 'waiting(ContainerCreating) last=- restarts=0',
        containerB: 'waiting(ContainerCreating) last=- restarts=0',
      },
      readyToStart: 'True',
    },
    {
      name: "reason and message are preserved when phase doesn't change",
      pod: pod(desiredState, {
        status: { phase: 'Running', containerStatuses: [waitingState('containerA'), waitingState('containerB')] },
      }),
      rt: runtime([ctr('containerB', 'running')]),
      previous: {
        phase: 'Pending',
        reason: 'Test',
        message: 'test',
        containerStatuses: [waitingState('containerA'), runningState('containerB')],
      },
      phase: 'Pending',
      reason: 'Test',
      message: 'test',
      containers: {
        containerA: 'waiting(ContainerCreating) last=- restarts=0',
        containerB: 'running last=- restarts=0',
      },
    },
    {
      name: 'reason and message are cleared when phase changes',
      pod: pod(desiredState, {
        status: { phase: 'Pending', containerStatuses: [waitingState('containerA'), waitingState('containerB')] },
      }),
      rt: runtime([ctr('containerA', 'running'), ctr('containerB', 'running')]),
      previous: { phase: 'Pending', reason: 'Test', message: 'test', containerStatuses: running2 },
      phase: 'Running',
      containers: { containerA: 'running last=- restarts=0', containerB: 'running last=- restarts=0' },
    },
    {
      // upstream generateAPIPodStatus: oldPodStatus is the status manager's, else pod.Status.
      name: 'without a status of ours, the API status is the previous one (restart counts, start time, transition times)',
      pod: pod(desiredState, {
        status: {
          phase: 'Running',
          startTime: '2025-12-31T00:00:00Z' as unknown as Date,
          containerStatuses: running2,
          conditions: [
            {
              type: 'PodScheduled',
              status: 'True',
              lastTransitionTime: '2025-12-31T00:00:00Z' as unknown as Date,
            } as PodCondition,
          ],
        },
      }),
      rt: runtime([]),
      phase: 'Running',
      containers: { containerA: unknownLast(1), containerB: unknownLast(1) },
    },
  ];
  for (const r of rows) {
    it(r.name, () => {
      const s = gen(r.pod, r.rt, { previous: r.previous, podIsTerminal: r.terminal ?? false });
      assert.equal(s.phase, r.phase);
      assert.equal(s.reason, r.reason);
      assert.equal(s.message, r.message);
      assert.deepEqual(byName(s.containerStatuses), r.containers);
      for (const [type, want] of Object.entries(r.conditions ?? {})) {
        const c = s.conditions!.find((x) => x.type === type);
        assert.ok(c, `condition ${type}`);
        assert.deepEqual(strip(c), want, type);
      }
      if (r.readyToStart)
        assert.equal(s.conditions!.find((c) => c.type === 'PodReadyToStartContainers')!.status, r.readyToStart);
      if (!r.previous && r.pod.status?.startTime) {
        assert.equal(s.startTime!.getTime(), T0.getTime(), 'startTime from the API');
        assert.equal(s.conditions!.find((c) => c.type === 'PodScheduled')!.lastTransitionTime!.getTime(), T0.getTime());
      }
    });
  }

  it('container statuses are sorted by name, whatever order the runtime gives', () => {
    // upstream pkg/kubelet/kubelet_test.go TestGenerateAPIPodStatusWithSortedContainers
    const names = Array.from({ length: 10 }, (_, i) => `${i}container`);
    const shuffled: ContainerRuntimeStatus[] = [];
    names.forEach((n, i) => (i % 2 === 0 ? shuffled.push(ctr(n, 'running')) : shuffled.unshift(ctr(n, 'running'))));
    const p = pod({ containers: named(...names) });
    for (let i = 0; i < 5; i++)
      assert.deepEqual(
        gen(p, runtime(shuffled)).containerStatuses!.map((s) => s.name),
        names,
      );
  });
});

describe('generateAPIPodStatus with start failures (reason cache)', () => {
  // upstream pkg/kubelet/kubelet_test.go TestGenerateAPIPodStatusWithReasonCache: the same table
  // for regular and for init containers, under restartPolicy OnFailure.
  const reasons = (...names: string[]) =>
    new Map<string, ContainerWaiting>(names.map((n) => [n, { reason: 'test-error', message: '' }]));
  const rows: Array<{
    name: string;
    containers: string[];
    rt: ContainerRuntimeStatus[];
    waiting: Map<string, ContainerWaiting>;
    old: ApiContainerStatus[];
    want: (initReason: string) => Record<string, string>;
  }> = [
    {
      name: 'no history: waiting, with the last termination from the old status',
      containers: ['without-old-record', 'with-old-record'],
      rt: [],
      waiting: new Map(),
      old: [{ name: 'with-old-record', lastState: { terminated: { exitCode: 0 } } } as ApiContainerStatus],
      want: (r) => ({
        'without-old-record': `waiting(${r}) last=- restarts=0`,
        'with-old-record': `waiting(${r}) last=terminated(0) restarts=0`,
      }),
    },
    {
      name: 'running: the latest termination is the last state',
      containers: ['running'],
      rt: [ctr('running', 'running'), ctr('running', 'exited', { exitCode: 1, age: 1, reason: 'Error' })],
      waiting: new Map(),
      old: [],
      want: () => ({ running: 'running last=terminated(1,Error) restarts=0' }),
    },
    {
      name: 'terminated: a start failure shows as waiting unless the container will not restart',
      containers: ['without-reason', 'with-reason', 'succeed'],
      rt: [
        ctr('without-reason', 'exited', { exitCode: 1 }),
        ctr('with-reason', 'exited', { exitCode: 2, age: 1 }),
        ctr('without-reason', 'exited', { exitCode: 3, age: 2 }),
        ctr('with-reason', 'exited', { exitCode: 4, age: 3 }),
        ctr('succeed', 'exited', { age: 4 }),
        ctr('succeed', 'exited', { exitCode: 5, age: 5 }),
      ],
      waiting: reasons('with-reason', 'succeed'),
      old: [],
      want: () => ({
        'without-reason': 'terminated(1,Error) last=terminated(3,Error) restarts=0',
        'with-reason': 'waiting(test-error) last=terminated(2,Error) restarts=0',
        succeed: 'terminated(0,Completed) last=terminated(5,Error) restarts=0',
      }),
    },
  ];
  for (const r of rows) {
    it(`${r.name} (containers)`, () => {
      const p = pod(
        { restartPolicy: 'OnFailure', containers: named(...r.containers) },
        { status: { containerStatuses: r.old } },
      );
      assert.deepEqual(
        byName(gen(p, runtime(r.rt), { waiting: r.waiting }).containerStatuses),
        r.want('ContainerCreating'),
      );
    });
    it(`${r.name} (init containers)`, () => {
      const p = pod(
        { restartPolicy: 'OnFailure', initContainers: named(...r.containers), containers: [] },
        { status: { initContainerStatuses: r.old } },
      );
      assert.deepEqual(
        byName(gen(p, runtime(r.rt), { waiting: r.waiting }).initContainerStatuses),
        r.want('PodInitializing'),
      );
    });
  }
});

describe('generateAPIPodStatus under each restart policy', () => {
  // upstream pkg/kubelet/kubelet_test.go TestGenerateAPIPodStatusWithDifferentRestartPolicies
  const rt = runtime([
    ctr('succeed', 'exited'),
    ctr('failed', 'exited', { exitCode: 1, age: 1 }),
    ctr('succeed', 'exited', { exitCode: 2, age: 2 }),
    ctr('failed', 'exited', { exitCode: 3, age: 3 }),
  ]);
  const waiting = new Map<string, ContainerWaiting>([
    ['succeed', { reason: 'test-error', message: '' }],
    ['failed', { reason: 'test-error', message: '' }],
  ]);
  const T = (code: number) => `terminated(${code},${code === 0 ? 'Completed' : 'Error'})`;
  const rows: Array<[string, Record<string, string>, Record<string, string>?]> = [
    ['Never', { succeed: `${T(0)} last=${T(2)} restarts=0`, failed: `${T(1)} last=${T(3)} restarts=0` }],
    [
      'OnFailure',
      { succeed: `${T(0)} last=${T(2)} restarts=0`, failed: `waiting(test-error) last=${T(1)} restarts=0` },
    ],
    [
      'Always',
      { succeed: `waiting(test-error) last=${T(0)} restarts=0`, failed: `waiting(test-error) last=${T(1)} restarts=0` },
      // An init container that exited 0 is not restarted, even under Always.
      { succeed: `${T(0)} last=${T(2)} restarts=0`, failed: `waiting(test-error) last=${T(1)} restarts=0` },
    ],
  ];
  for (const [policy, want, wantInit] of rows) {
    it(policy, () => {
      assert.deepEqual(
        byName(
          gen(pod({ restartPolicy: policy, containers: named('succeed', 'failed') }), rt, { waiting })
            .containerStatuses,
        ),
        want,
      );
      assert.deepEqual(
        byName(
          gen(pod({ restartPolicy: policy, initContainers: named('succeed', 'failed'), containers: [] }), rt, {
            waiting,
          }).initContainerStatuses,
        ),
        wantInit ?? want,
      );
    });
  }
});

describe('convertToAPIContainerStatuses', () => {
  // upstream pkg/kubelet/kubelet_pods_test.go TestConvertToAPIContainerStatuses (rows without feature gates)
  const withInit = {
    nodeName: 'machine',
    restartPolicy: 'Always',
    initContainers: named('init-1'),
    containers: named('containerA'),
  };
  const withSidecar = {
    nodeName: 'machine',
    restartPolicy: 'Always',
    initContainers: [sidecar('sidecar-1')],
    containers: named('containerA'),
  };
  const rows: Array<{
    name: string;
    pod: Pod;
    rt: PodRuntimeStatus;
    previous: ApiContainerStatus[];
    init?: boolean;
    want: Record<string, string>;
  }> = [
    {
      name: 'no current status, with previous statuses and deletion',
      pod: pod(desiredState, { metadata: { name: 'my-pod', namespace: 'ns', uid: 'u', deletionTimestamp: NOW } }),
      rt: runtime([]),
      previous: [runningState('containerA'), runningState('containerB')],
      want: {
        containerA: 'waiting(ContainerCreating) last=terminated(137,ContainerStatusUnknown) restarts=0',
        containerB: 'waiting(ContainerCreating) last=terminated(137,ContainerStatusUnknown) restarts=0',
      },
    },
    {
      name: 'no current status, with previous statuses and no deletion',
      pod: pod(desiredState),
      rt: runtime([]),
      previous: [runningState('containerA'), runningState('containerB')],
      want: {
        containerA: 'waiting(ContainerCreating) last=terminated(137,ContainerStatusUnknown) restarts=1',
        containerB: 'waiting(ContainerCreating) last=terminated(137,ContainerStatusUnknown) restarts=1',
      },
    },
    {
      name: 'no current status, keeping previous restartCount',
      pod: pod(desiredState),
      rt: runtime([]),
      previous: [failedState('containerA', 5), failedState('containerB', 5)],
      want: { containerA: 'terminated(-1) last=- restarts=5', containerB: 'terminated(-1) last=- restarts=5' },
    },
    {
      name: 'init container status lost from the runtime after the pod initialized: exited normally',
      pod: pod(withInit),
      rt: runtime([ctr('containerA', 'running')]),
      previous: [],
      init: true,
      want: { 'init-1': 'terminated(0,Completed) last=- restarts=0' },
    },
    {
      name: 'sidecar status lost from the runtime after the pod initialized: waiting',
      pod: pod(withSidecar),
      rt: runtime([ctr('containerA', 'running')]),
      previous: [],
      init: true,
      want: { 'sidecar-1': 'waiting(PodInitializing) last=- restarts=0' },
    },
  ];
  for (const r of rows) {
    it(r.name, () => {
      const containers = (r.init ? r.pod.spec!.initContainers : r.pod.spec!.containers) ?? [];
      const got = convertToAPIContainerStatuses({
        pod: r.pod,
        runtime: r.rt,
        previous: r.previous,
        containers,
        isInit: r.init === true,
        waiting: new Map(),
      });
      assert.deepEqual(byName(got), r.want);
    });
  }

  it('the lost init container reads as upstream words it', () => {
    const got = convertToAPIContainerStatuses({
      pod: pod(withInit),
      runtime: runtime([ctr('containerA', 'created')]),
      previous: [],
      containers: named('init-1'),
      isInit: true,
      waiting: new Map(),
    });
    assert.equal(
      got[0]!.state!.terminated!.message,
      'Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally',
    );
  });

  it('an init container lost before any regular container was created still waits', () => {
    const got = convertToAPIContainerStatuses({
      pod: pod(withInit),
      runtime: runtime([]),
      previous: [],
      containers: named('init-1'),
      isInit: true,
      waiting: new Map(),
    });
    assert.equal(summary(got[0]), 'waiting(PodInitializing) last=- restarts=0');
  });
});

describe('pod IPs', () => {
  // upstream pkg/kubelet/kubelet_pods_test.go TestGenerateAPIPodStatusPodIPs and TestSortPodIPs
  // ("Badly-formatted IPs from CRI" not mirrored: CRI IPs are taken as given).
  const rows: Array<[string, string, string[], string[]]> = [
    ['Simple', '', ['10.0.0.1'], ['10.0.0.1']],
    ['Dual-stack', '', ['10.0.0.1', 'fd01::1234'], ['10.0.0.1', 'fd01::1234']],
    ['Dual-stack with explicit node IP', '192.168.1.1', ['10.0.0.1', 'fd01::1234'], ['10.0.0.1', 'fd01::1234']],
    ['Dual-stack with CRI returning wrong family first', '', ['fd01::1234', '10.0.0.1'], ['10.0.0.1', 'fd01::1234']],
    [
      'Dual-stack with explicit node IP with CRI returning wrong family first',
      '192.168.1.1',
      ['fd01::1234', '10.0.0.1'],
      ['10.0.0.1', 'fd01::1234'],
    ],
    ['Dual-stack with IPv6 node IP', 'fd00::5678', ['10.0.0.1', 'fd01::1234'], ['fd01::1234', '10.0.0.1']],
    [
      'Dual-stack with IPv6 node IP, other CRI order',
      'fd00::5678',
      ['fd01::1234', '10.0.0.1'],
      ['fd01::1234', '10.0.0.1'],
    ],
    ['No Pod IP matching Node IP', 'fd00::5678', ['10.0.0.1'], ['10.0.0.1']],
    ['No Pod IP matching (unspecified) Node IP', '', ['fd01::1234'], ['fd01::1234']],
    ['Multiple IPv4 IPs', '', ['10.0.0.1', '10.0.0.2', '10.0.0.3'], ['10.0.0.1']],
    [
      'Multiple Dual-Stack IPs',
      '',
      ['10.0.0.1', '10.0.0.2', 'fd01::1234', '10.0.0.3', 'fd01::5678'],
      ['10.0.0.1', 'fd01::1234'],
    ],
  ];
  for (const [name, nodeIP, cri, want] of rows) {
    it(name, () => {
      const s = gen(pod({ containers: named('c') }), runtime([], 'ready', cri), {
        hostIP: nodeIP,
        hostIPs: nodeIP ? [nodeIP] : [],
      });
      assert.deepEqual(
        s.podIPs!.map((p) => p.ip),
        want,
      );
      assert.equal(s.podIP, want[0]);
    });
  }

  // upstream pkg/kubelet/kubelet_pods_test.go TestGenerateAPIPodStatusHostNetworkPodIPs
  const hostRows: Array<[string, string[], string[], string[]]> = [
    ['Simple', ['10.0.0.1'], [], ['10.0.0.1']],
    ['Dual-stack addresses in dual-stack cluster', ['10.0.0.1', 'fd01::1234'], [], ['10.0.0.1', 'fd01::1234']],
    ['CRI PodIPs override NodeAddresses', ['10.0.0.1', 'fd01::1234'], ['192.168.0.1'], ['192.168.0.1', 'fd01::1234']],
    [
      'CRI dual-stack PodIPs override NodeAddresses',
      ['10.0.0.1', 'fd01::1234'],
      ['192.168.0.1', '2001:db8::2'],
      ['192.168.0.1', '2001:db8::2'],
    ],
    [
      'CRI dual-stack PodIPs override NodeAddresses prefer IPv4',
      ['10.0.0.1', 'fd01::1234'],
      ['2001:db8::2', '192.168.0.1'],
      ['192.168.0.1', '2001:db8::2'],
    ],
  ];
  for (const [name, nodeIPs, cri, want] of hostRows) {
    it(`hostNetwork: ${name}`, () => {
      const rt = runtime([], 'ready', cri);
      rt.sandboxStatuses[0] = { ...rt.sandboxStatuses[0]!, ip: '', hostNetwork: true };
      const s = gen(pod({ hostNetwork: true, containers: named('c') }), rt, { hostIP: nodeIPs[0]!, hostIPs: nodeIPs });
      assert.deepEqual(
        s.podIPs!.map((p) => p.ip),
        want,
      );
      if (cri.length === 0) assert.equal(s.hostIP, s.podIPs![0]!.ip);
    });
  }
});
