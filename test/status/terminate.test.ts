/**
 * terminatedPodStatus, as upstream's status manager TerminatePod: the cases of
 * pkg/kubelet/status/status_manager_test.go TestTerminatePod, TestTerminatePodWaiting and
 * TestTerminatePod_DefaultUnknownStatus (container states), and the terminal phase it gives
 * every pod that is not static.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, ApiPodStatus, Container, Pod } from '../../src/api/types.js';
import { terminatedPodStatus } from '../../src/status/index.js';

const waiting = (name: string): ApiContainerStatus => ({ name, state: { waiting: {} } }) as ApiContainerStatus;
const ranBefore = (name: string): ApiContainerStatus =>
  ({ name, state: { waiting: {} }, lastState: { terminated: { exitCode: 0 } } }) as ApiContainerStatus;
const running = (name: string, started?: boolean): ApiContainerStatus =>
  ({ name, state: { running: {} }, ...(started === undefined ? {} : { started }) }) as ApiContainerStatus;
const exited = (name: string, exitCode: number): ApiContainerStatus =>
  ({ name, state: { terminated: { exitCode } } }) as ApiContainerStatus;
/** `s` with upstream's ContainerStatusUnknown state, everything else kept. */
const unknown = (s: ApiContainerStatus): ApiContainerStatus => ({
  ...s,
  state: {
    terminated: {
      reason: 'ContainerStatusUnknown',
      message: 'The container could not be located when the pod was terminated',
      exitCode: 137,
    },
  },
});

function pod(opts: { init?: Container[]; regular?: string[]; static?: boolean } = {}): Pod {
  return {
    metadata: {
      name: 'p',
      namespace: 'ns',
      uid: 'u',
      annotations: opts.static ? { 'kubernetes.io/config.source': 'file' } : { 'kubernetes.io/config.source': 'api' },
    },
    spec: {
      initContainers: opts.init ?? [],
      containers: (opts.regular ?? ['a']).map((name) => ({ name, image: 'x' })),
    },
  } as Pod;
}

const init = (name: string, restartPolicy?: string): Container => ({ name, image: 'x', restartPolicy }) as Container;

interface Case {
  name: string;
  pod: Pod;
  status: ApiPodStatus;
  want: ApiPodStatus;
}

const cases: Case[] = [
  {
    name: 'TestTerminatePodWaiting: no init containers, a regular container that never started → unknown; Pending → Failed',
    pod: pod({ regular: ['a', 'b'] }),
    status: { phase: 'Pending', containerStatuses: [waiting('a'), exited('b', 0)] },
    want: { phase: 'Failed', containerStatuses: [unknown(waiting('a')), exited('b', 0)] },
  },
  {
    name: 'TestTerminatePod: Running → Failed; terminated states are kept as they are',
    pod: pod({ regular: ['a', 'b'] }),
    status: { phase: 'Running', containerStatuses: [exited('a', 0), running('b')] },
    want: { phase: 'Failed', containerStatuses: [exited('a', 0), unknown(running('b'))] },
  },
  {
    name: 'already terminal: Succeeded stays Succeeded',
    pod: pod(),
    status: { phase: 'Succeeded', containerStatuses: [exited('a', 0)] },
    want: { phase: 'Succeeded', containerStatuses: [exited('a', 0)] },
  },
  {
    name: 'TestTerminatePod_DefaultUnknownStatus: not initialized (last init waiting): regular containers stay waiting, the init containers that tried are unknown',
    pod: pod({ init: [init('i1'), init('i2'), init('i3')] }),
    status: {
      phase: 'Pending',
      initContainerStatuses: [exited('i1', 0), running('i2'), waiting('i3')],
      containerStatuses: [waiting('a')],
    },
    want: {
      phase: 'Failed',
      initContainerStatuses: [exited('i1', 0), unknown(running('i2')), waiting('i3')],
      containerStatuses: [waiting('a')],
    },
  },
  {
    name: 'TestTerminatePod_DefaultUnknownStatus: every init container waiting: the first is marked all the same',
    pod: pod({ init: [init('i1'), init('i2')] }),
    status: {
      phase: 'Pending',
      initContainerStatuses: [waiting('i1'), waiting('i2')],
      containerStatuses: [waiting('a')],
    },
    want: {
      phase: 'Failed',
      initContainerStatuses: [unknown(waiting('i1')), waiting('i2')],
      containerStatuses: [waiting('a')],
    },
  },
  {
    name: 'initialized by the last init container exiting 0: a regular container waiting → unknown',
    pod: pod({ init: [init('i1')] }),
    status: { phase: 'Pending', initContainerStatuses: [exited('i1', 0)], containerStatuses: [waiting('a')] },
    want: { phase: 'Failed', initContainerStatuses: [exited('i1', 0)], containerStatuses: [unknown(waiting('a'))] },
  },
  {
    name: 'initialized because a regular container ran before (lastState): it is marked unknown',
    pod: pod({ init: [init('i1')] }),
    status: { phase: 'Running', initContainerStatuses: [waiting('i1')], containerStatuses: [ranBefore('a')] },
    want: {
      phase: 'Failed',
      initContainerStatuses: [unknown(waiting('i1'))],
      containerStatuses: [unknown(ranBefore('a'))],
    },
  },
  {
    name: 'a sidecar last that runs and has started initializes the pod',
    pod: pod({ init: [init('side', 'Always')] }),
    status: { phase: 'Pending', initContainerStatuses: [running('side', true)], containerStatuses: [waiting('a')] },
    want: {
      phase: 'Failed',
      initContainerStatuses: [unknown(running('side', true))],
      containerStatuses: [unknown(waiting('a'))],
    },
  },
  {
    name: 'a sidecar last that runs but has not started: not initialized',
    pod: pod({ init: [init('side', 'Always')] }),
    status: { phase: 'Pending', initContainerStatuses: [running('side', false)], containerStatuses: [waiting('a')] },
    want: {
      phase: 'Failed',
      initContainerStatuses: [unknown(running('side', false))],
      containerStatuses: [waiting('a')],
    },
  },
  {
    name: 'a static pod keeps its phase (upstream TODO #116484); its states are still defaulted',
    pod: pod({ static: true }),
    status: { phase: 'Pending', containerStatuses: [waiting('a')] },
    want: { phase: 'Pending', containerStatuses: [unknown(waiting('a'))] },
  },
];

for (const c of cases) {
  test(c.name, () => {
    const before = structuredClone(c.status);
    assert.deepEqual(terminatedPodStatus(c.pod, c.status), c.want);
    assert.deepEqual(c.status, before, 'the input status is not changed');
  });
}
