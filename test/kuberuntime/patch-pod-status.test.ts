/**
 * patchPodStatus: the runtime's report of an exit (a CRI stop event's sandbox and containers, or
 * one ContainerStatus) written into the pod's cached status. The result must keep the shape
 * getPodStatus gives, newest first, with every sandbox of the pod: the pod worker acts on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, PodSandboxStatus } from '../../src/cri/types.js';
import { patchPodStatus } from '../../src/kuberuntime/runtime-status.js';
import type { PodRuntimeStatus, RuntimeExitReport } from '../../src/kuberuntime/types.js';
import { cstatus, podStatus, sandbox, UID } from './helpers.js';

const MS = 1_000_000n;

/** The CRI status the runtime reports for a container of ours. */
function cri(id: string, name: string, state: 'running' | 'exited', createdMs = 1000): ContainerStatus {
  return {
    id,
    metadata: { name, attempt: 0 },
    state: state === 'running' ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED',
    createdAt: BigInt(createdMs) * MS,
    startedAt: BigInt(createdMs) * MS,
    finishedAt: state === 'exited' ? 5000n * MS : 0n,
    exitCode: state === 'exited' ? 3 : 0,
    image: 'busybox:1.36',
    imageRef: 'sha256:abc',
    reason: state === 'exited' ? 'Error' : '',
    message: '',
    labels: { 'io.kubernetes.pod.uid': UID, 'io.kubernetes.container.name': name },
    annotations: {},
    logPath: '',
  };
}

function criSandbox(id: string, ready: boolean, ip = '10.0.0.9'): PodSandboxStatus {
  return {
    id,
    metadata: { name: 'web', uid: UID, namespace: 'default', attempt: 1 },
    state: ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
    createdAt: 2n,
    network: { ip, additionalIps: [] },
    networkNamespaceMode: 'POD',
    labels: {},
    annotations: {},
  };
}

/** sb2 is the newest sandbox; sb1's container is an old, exited one. */
function previous(): PodRuntimeStatus {
  const old = { ...cstatus('app', 'exited', { id: 'old' }), podSandboxId: 'sb1' };
  const app = { ...cstatus('app', 'running', { id: 'app' }), podSandboxId: 'sb2', createdAt: new Date(3000) };
  const side = { ...cstatus('side', 'running', { id: 'side' }), podSandboxId: 'sb2', createdAt: new Date(3000) };
  return podStatus([sandbox('sb2', { createdAt: 2n }), sandbox('sb1', { ready: false })], [app, side, old]);
}

const shape = (s: PodRuntimeStatus | undefined) =>
  s && {
    containers: s.containerStatuses.map((c) => `${c.id}:${c.state}@${c.podSandboxId}`),
    sandboxes: s.sandboxStatuses.map((x) => `${x.id}:${x.ready ? 'ready' : 'notready'}`),
    ips: s.ips,
  };

const cases: { name: string; report: RuntimeExitReport; want: ReturnType<typeof shape> }[] = [
  {
    name: 'a stop event replaces its sandbox and all of its containers; the old sandbox stays',
    report: {
      sandbox: criSandbox('sb2', true),
      containers: [cri('app', 'app', 'exited'), cri('side', 'side', 'running')],
    },
    want: {
      containers: ['app:exited@sb2', 'side:running@sb2', 'old:exited@sb1'],
      sandboxes: ['sb2:ready', 'sb1:notready'],
      ips: ['10.0.0.9'],
    },
  },
  {
    name: 'a container the event lists and the status lacks was created since: it comes first',
    report: {
      sandbox: criSandbox('sb2', true),
      containers: [cri('app', 'app', 'exited'), cri('side', 'side', 'running'), cri('new', 'app', 'running', 9000)],
    },
    want: {
      containers: ['new:running@sb2', 'app:exited@sb2', 'side:running@sb2', 'old:exited@sb1'],
      sandboxes: ['sb2:ready', 'sb1:notready'],
      ips: ['10.0.0.9'],
    },
  },
  {
    name: "a container of the event's sandbox that the event no longer lists was removed",
    report: { sandbox: criSandbox('sb2', true), containers: [cri('app', 'app', 'exited')] },
    want: {
      containers: ['app:exited@sb2', 'old:exited@sb1'],
      sandboxes: ['sb2:ready', 'sb1:notready'],
      ips: ['10.0.0.9'],
    },
  },
  {
    name: 'a sandbox the event reports not ready takes the pod IPs away',
    report: {
      sandbox: criSandbox('sb2', false),
      containers: [cri('app', 'app', 'exited'), cri('side', 'side', 'exited')],
    },
    want: {
      containers: ['app:exited@sb2', 'side:exited@sb2', 'old:exited@sb1'],
      sandboxes: ['sb2:notready', 'sb1:notready'],
      ips: [],
    },
  },
  {
    name: 'one ContainerStatus (no sandbox) replaces just that container',
    report: { containers: [cri('side', 'side', 'exited')] },
    want: {
      containers: ['app:running@sb2', 'side:exited@sb2', 'old:exited@sb1'],
      sandboxes: ['sb2:ready', 'sb1:notready'],
      ips: ['10.0.0.5'],
    },
  },
  {
    name: 'a ContainerStatus of a container the status lacks names nothing it can hold',
    report: { containers: [cri('elsewhere', 'app', 'exited')] },
    want: undefined,
  },
  {
    name: 'a container without our labels is not ours',
    report: { sandbox: criSandbox('sb2', true), containers: [{ ...cri('app', 'app', 'exited'), labels: {} }] },
    want: undefined,
  },
];

for (const c of cases) {
  test(`patchPodStatus: ${c.name}`, async () => {
    const got = await patchPodStatus(previous(), c.report, () => 7);
    assert.deepEqual(shape(got), c.want);
    if (got) assert.equal(got.timestamp.getTime(), 7);
  });
}

test('patchPodStatus: the exit is the runtime’s own (code, reason, finishedAt)', async () => {
  const got = await patchPodStatus(previous(), { containers: [cri('app', 'app', 'exited')] }, () => 0);
  const app = got?.containerStatuses.find((c) => c.id === 'app');
  assert.equal(app?.exitCode, 3);
  assert.equal(app?.reason, 'Error');
  assert.equal(app?.finishedAt?.getTime(), 5000);
  assert.equal(app?.name, 'app');
});
