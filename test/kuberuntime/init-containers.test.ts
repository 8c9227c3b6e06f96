/** computeInitContainerActions / computePodActions with sidecars (restartable init containers), table-driven. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { computeInitContainerActions } from '../../src/kuberuntime/init-containers.js';
import { computePodActions } from '../../src/kuberuntime/pod-actions.js';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { container, cstatus, makePod, podStatus, sandbox } from './helpers.js';

const side = container('side', { restartPolicy: 'Always' });
const side2 = container('side2', { restartPolicy: 'Always' });
const init = container('init', { command: ['true'] });
const app = container('app');
const ready = [sandbox('sb1')];

interface Case {
  name: string;
  pod: Pod;
  status: PodRuntimeStatus;
  probes?: { failure?: Record<string, 'LivenessProbe' | 'StartupProbe'>; started?: Record<string, boolean> };
  want: { toStart: number[]; initialized: boolean; killPod?: boolean; kill?: string[] };
}

const cases: Case[] = [
  {
    name: 'nothing ran: the first init container (a sidecar)',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, []),
    want: { toStart: [0], initialized: false },
  },
  {
    name: 'the sidecar runs: the next init container starts',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, [cstatus('side', 'running', { spec: side })]),
    want: { toStart: [1], initialized: false },
  },
  {
    name: 'the sidecar is created but not started: start it again',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, [cstatus('side', 'created', { spec: side })]),
    want: { toStart: [0], initialized: false },
  },
  {
    name: 'a sidecar with a startup probe waits for it before the next init container',
    pod: makePod({
      initContainers: [
        container('side', { restartPolicy: 'Always', startupProbe: { exec: { command: ['true'] } } }),
        init,
      ],
      containers: [app],
    }),
    status: podStatus(ready, [
      cstatus('side', 'running', {
        id: 'side-1',
        spec: container('side', { restartPolicy: 'Always', startupProbe: { exec: { command: ['true'] } } }),
      }),
    ]),
    probes: { started: {} },
    want: { toStart: [], initialized: false },
  },
  {
    name: 'the regular init container finished, sidecar still running: initialized',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, [cstatus('init', 'exited', { spec: init }), cstatus('side', 'running', { spec: side })]),
    want: { toStart: [], initialized: true },
  },
  {
    name: 'the last init container is a running sidecar: initialized',
    pod: makePod({ initContainers: [init, side], containers: [app] }),
    status: podStatus(ready, [cstatus('side', 'running', { spec: side }), cstatus('init', 'exited', { spec: init })]),
    want: { toStart: [], initialized: true },
  },
  {
    name: 'after initialization an exited sidecar is restarted, the regular init container is not',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, [
      cstatus('app', 'running', { spec: app }),
      cstatus('side', 'exited', { spec: side, exitCode: 1 }),
    ]),
    want: { toStart: [0], initialized: true },
  },
  {
    name: 'after initialization a sidecar whose status is gone is started again',
    pod: makePod({ initContainers: [side, init, side2], containers: [app] }),
    status: podStatus(ready, [cstatus('app', 'running', { spec: app }), cstatus('side2', 'running', { spec: side2 })]),
    want: { toStart: [0], initialized: true },
  },
  {
    name: 'a sidecar with a changed spec is killed and restarted',
    pod: makePod({ initContainers: [side, init], containers: [app] }),
    status: podStatus(ready, [cstatus('app', 'running', { spec: app }), cstatus('side', 'running', { hash: 'stale' })]),
    want: { toStart: [0], initialized: true, kill: ['side:SpecChanged'] },
  },
  {
    name: 'a sidecar failing its liveness probe is killed and restarted',
    pod: makePod({
      initContainers: [container('side', { restartPolicy: 'Always', livenessProbe: { exec: { command: ['x'] } } })],
      containers: [app],
    }),
    status: podStatus(ready, [
      cstatus('app', 'running', { spec: app }),
      cstatus('side', 'running', {
        id: 'side-9',
        spec: container('side', { restartPolicy: 'Always', livenessProbe: { exec: { command: ['x'] } } }),
      }),
    ]),
    probes: { failure: { 'side-9': 'LivenessProbe' } },
    want: { toStart: [0], initialized: true, kill: ['side:LivenessProbe'] },
  },
  {
    name: 'a failed regular init container under Never kills the pod; sidecars are not restarted',
    pod: { ...makePod({ initContainers: [side, init], containers: [app], restartPolicy: 'Never' }) },
    status: podStatus(ready, [
      cstatus('init', 'exited', { spec: init, exitCode: 2 }),
      cstatus('side', 'running', { spec: side }),
    ]),
    want: { toStart: [], initialized: false, killPod: true },
  },
  {
    name: 'a failed regular init container under OnFailure is retried',
    pod: makePod({ initContainers: [side, init], containers: [app], restartPolicy: 'OnFailure' }),
    status: podStatus(ready, [
      cstatus('init', 'exited', { spec: init, exitCode: 2 }),
      cstatus('side', 'running', { spec: side }),
    ]),
    want: { toStart: [1], initialized: false },
  },
  {
    name: 'an init container in unknown state is killed before a retry',
    pod: makePod({ initContainers: [init], containers: [app] }),
    status: podStatus(ready, [cstatus('init', 'unknown', { spec: init })]),
    want: { toStart: [0], initialized: false, kill: ['init:Unknown'] },
  },
];

describe('computeInitContainerActions (upstream, SidecarContainers)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const got = computeInitContainerActions(c.pod, c.status, {
        probeFailure: (id) => c.probes?.failure?.[id],
        ...(c.probes?.started ? { startupProbeSucceeded: (id: string) => c.probes!.started![id] } : {}),
      });
      assert.deepEqual(got.toStart, c.want.toStart, 'toStart');
      assert.equal(got.initialized, c.want.initialized, 'initialized');
      assert.equal(got.killPod, c.want.killPod ?? false, 'killPod');
      assert.deepEqual(
        got.toKill.map((k) => `${k.container.name}:${k.reason}`),
        c.want.kill ?? [],
        'toKill',
      );
    });
  }
});

describe('computePodActions with sidecars', () => {
  it('sidecar restart and app start in one sync once initialized', () => {
    const pod = makePod({ initContainers: [side, init], containers: [app, container('b')] });
    const a = computePodActions(
      pod,
      podStatus(ready, [cstatus('app', 'running', { spec: app }), cstatus('side', 'exited', { spec: side })]),
    );
    assert.deepEqual(a.initContainersToStart, [0]);
    assert.deepEqual(a.containersToStart, [1]);
    assert.ok(a.backOff.has('side'), 'the sidecar restart is subject to crash-loop back-off');
  });

  it('when every regular container is done (Never), the pod is killed and sidecars stay down', () => {
    const pod = makePod({ initContainers: [side], containers: [app], restartPolicy: 'Never' });
    const a = computePodActions(
      pod,
      podStatus(ready, [cstatus('app', 'exited', { spec: app }), cstatus('side', 'running', { spec: side })]),
    );
    assert.equal(a.killPod, true);
    assert.deepEqual(a.initContainersToStart, []);
  });

  it('a new sandbox starts over at the first init container', () => {
    const pod = makePod({ initContainers: [side, init], containers: [app] });
    const a = computePodActions(
      pod,
      podStatus([sandbox('sb1', { ready: false })], [cstatus('app', 'exited', { spec: app, exitCode: 1 })]),
    );
    assert.equal(a.createSandbox, true);
    assert.deepEqual(a.initContainersToStart, [0]);
  });
});
