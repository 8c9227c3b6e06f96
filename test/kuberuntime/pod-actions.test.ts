import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { Backoff } from '../../src/util/backoff.js';
import {
  computePodActions,
  restartBackOffKey,
  type PodActionsOptions,
  type ProbeFailure,
} from '../../src/kuberuntime/pod-actions.js';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { FakeClock, container, cstatus, makePod, podStatus, sandbox } from './helpers.js';

interface Expect {
  killPod: boolean;
  createSandbox: boolean;
  attempt?: number;
  sandboxId?: string;
  start?: number[];
  nextInit?: number;
  /** container name:reason of containersToKill */
  kill?: string[];
}

interface Case {
  name: string;
  pod: Pod;
  status: PodRuntimeStatus;
  opts?: PodActionsOptions;
  want: Expect;
}

const a = container('a');
const b = container('b');
const ready = [sandbox('sb1')];
const running = [cstatus('a', 'running', { id: 'ca' }), cstatus('b', 'running', { id: 'cb' })];
const probe = (id: string, r: ProbeFailure) => ({ probeFailure: (x: string) => (x === id ? r : undefined) });

const cases: Case[] = [
  {
    name: 'no sandbox: create one (attempt 0) and start every container',
    pod: makePod(),
    status: podStatus([], []),
    want: { killPod: true, createSandbox: true, attempt: 0, sandboxId: '', start: [0, 1] },
  },
  {
    name: 'sandbox not ready: recreate with the next attempt',
    pod: makePod(),
    status: podStatus([sandbox('sb1', { ready: false, attempt: 2 })], running),
    want: { killPod: true, createSandbox: true, attempt: 3, sandboxId: 'sb1', start: [0, 1] },
  },
  {
    name: 'two ready sandboxes: reconcile in a new one',
    pod: makePod(),
    status: podStatus([sandbox('sb2', { attempt: 1 }), sandbox('sb1')], running),
    want: { killPod: true, createSandbox: true, attempt: 2, sandboxId: 'sb2', start: [0, 1] },
  },
  {
    name: 'attempt follows the newest sandbox, not the highest attempt seen (upstream PodSandboxChanged)',
    pod: makePod(),
    status: podStatus(
      [
        sandbox('sb-new', { ready: false, attempt: 1, createdAt: 9n }),
        sandbox('sb-old', { ready: false, attempt: 4, createdAt: 1n }),
      ],
      running,
    ),
    want: { killPod: true, createSandbox: true, attempt: 2, sandboxId: 'sb-new', start: [0, 1] },
  },
  {
    name: 'an unchanged sandbox reports its own attempt',
    pod: makePod(),
    status: podStatus(
      [
        sandbox('sb-new', { attempt: 1, createdAt: 9n }),
        sandbox('sb-old', { ready: false, attempt: 4, createdAt: 1n }),
      ],
      running,
    ),
    want: { killPod: false, createSandbox: false, attempt: 1, sandboxId: 'sb-new', start: [] },
  },
  {
    name: 'hostNetwork turned on: new sandbox in the node network namespace',
    pod: makePod({ hostNetwork: true }),
    status: podStatus(ready, running),
    want: { killPod: true, createSandbox: true, attempt: 1, sandboxId: '', start: [0, 1] },
  },
  {
    name: 'hostNetwork turned off: new sandbox in a pod network namespace',
    pod: makePod(),
    status: podStatus([sandbox('sb1', { hostNetwork: true, ip: '' })], running),
    want: { killPod: true, createSandbox: true, attempt: 1, sandboxId: '', start: [0, 1] },
  },
  {
    name: 'pod-network sandbox without an IP: recreate',
    pod: makePod(),
    status: podStatus([sandbox('sb1', { ip: '' })], running),
    want: { killPod: true, createSandbox: true, attempt: 1, sandboxId: 'sb1', start: [0, 1] },
  },
  {
    name: 'host-network sandbox without an IP is fine',
    pod: makePod({ hostNetwork: true }),
    status: podStatus([sandbox('sb1', { hostNetwork: true, ip: '' })], running),
    want: { killPod: false, createSandbox: false, attempt: 0, sandboxId: 'sb1', start: [] },
  },
  {
    name: 'everything running with matching hashes: nothing to do',
    pod: makePod(),
    status: podStatus(ready, running),
    want: { killPod: false, createSandbox: false, sandboxId: 'sb1', start: [], kill: [] },
  },
  {
    name: 'spec hash changed: kill and restart that container',
    pod: makePod({ containers: [container('a', { image: 'busybox:1.37' }), b] }),
    status: podStatus(ready, running),
    want: { killPod: false, createSandbox: false, start: [0], kill: ['a:SpecChanged'] },
  },
  {
    name: 'spec hash changed under restartPolicy Never: still restarted',
    pod: makePod({ restartPolicy: 'Never', containers: [a, container('b', { image: 'busybox:1.37' })] }),
    status: podStatus(ready, running),
    want: { killPod: false, createSandbox: false, start: [1], kill: ['b:SpecChanged'] },
  },
  {
    name: 'Always, exit 0: restart',
    pod: makePod({ restartPolicy: 'Always' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 0 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [0] },
  },
  {
    name: 'Always, exit 1: restart',
    pod: makePod({ restartPolicy: 'Always' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 1 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [0] },
  },
  {
    name: 'OnFailure, exit 0: leave it, the other container keeps the pod',
    pod: makePod({ restartPolicy: 'OnFailure' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 0 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [] },
  },
  {
    name: 'OnFailure, exit 2: restart',
    pod: makePod({ restartPolicy: 'OnFailure' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 2 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [0] },
  },
  {
    name: 'Never, exit 1: not restarted',
    pod: makePod({ restartPolicy: 'Never' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 1 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [] },
  },
  {
    name: 'Never, all exited: kill the pod (stop the sandbox)',
    pod: makePod({ restartPolicy: 'Never' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 0 }), cstatus('b', 'exited', { exitCode: 1 })]),
    want: { killPod: true, createSandbox: false, start: [] },
  },
  {
    name: 'OnFailure, all succeeded: kill the pod',
    pod: makePod({ restartPolicy: 'OnFailure' }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 0 }), cstatus('b', 'exited', { exitCode: 0 })]),
    want: { killPod: true, createSandbox: false, start: [] },
  },
  {
    name: 'created but never started: start again',
    pod: makePod(),
    status: podStatus(ready, [cstatus('a', 'created'), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [0], kill: [] },
  },
  {
    name: 'unknown state: kill it before starting a new one',
    pod: makePod(),
    status: podStatus(ready, [cstatus('a', 'unknown', { id: 'cu' }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [0], kill: ['a:Unknown'] },
  },
  {
    name: 'running container not in the spec: kill it',
    pod: makePod({ containers: [a] }),
    status: podStatus(ready, [cstatus('a', 'running'), cstatus('old', 'running')]),
    want: { killPod: false, createSandbox: false, start: [], kill: ['old:NotInSpec'] },
  },
  {
    name: 'an older running instance of the same name: kill it',
    pod: makePod({ containers: [a] }),
    status: podStatus(ready, [cstatus('a', 'running', { id: 'new' }), cstatus('a', 'running', { id: 'old' })]),
    want: { killPod: false, createSandbox: false, start: [], kill: ['a:Duplicate'] },
  },
  {
    name: 'liveness failure under Always: kill and restart',
    pod: makePod(),
    status: podStatus(ready, running),
    opts: probe('ca', 'LivenessProbe'),
    want: { killPod: false, createSandbox: false, start: [0], kill: ['a:LivenessProbe'] },
  },
  {
    name: 'startup failure under Never: kill without restart',
    pod: makePod({ restartPolicy: 'Never' }),
    status: podStatus(ready, running),
    opts: probe('cb', 'StartupProbe'),
    want: { killPod: false, createSandbox: false, start: [], kill: ['b:StartupProbe'] },
  },
  {
    name: 'dead sandbox, Never, containers already ran: no new sandbox, just clean up',
    pod: makePod({ restartPolicy: 'Never' }),
    status: podStatus(
      [sandbox('sb1', { ready: false })],
      [cstatus('a', 'exited', { exitCode: 0 }), cstatus('b', 'exited', { exitCode: 0 })],
    ),
    want: { killPod: true, createSandbox: false, start: [] },
  },
  {
    name: 'dead sandbox, Never, nothing ever ran: retry the sandbox',
    pod: makePod({ restartPolicy: 'Never' }),
    status: podStatus([sandbox('sb1', { ready: false })], []),
    want: { killPod: true, createSandbox: true, attempt: 1, start: [0, 1] },
  },
  {
    name: 'dead sandbox, OnFailure: only the failed container starts again',
    pod: makePod({ restartPolicy: 'OnFailure' }),
    status: podStatus(
      [sandbox('sb1', { ready: false })],
      [cstatus('a', 'exited', { exitCode: 0 }), cstatus('b', 'exited', { exitCode: 3 })],
    ),
    want: { killPod: true, createSandbox: true, attempt: 1, start: [1] },
  },
  {
    name: 'dead sandbox, OnFailure, all succeeded: no new sandbox',
    pod: makePod({ restartPolicy: 'OnFailure' }),
    status: podStatus([sandbox('sb1', { ready: false })], [cstatus('a', 'exited'), cstatus('b', 'exited')]),
    want: { killPod: true, createSandbox: false, start: [] },
  },
  {
    name: 'pod being deleted: exited containers are not restarted',
    pod: makePod({ deleting: true }),
    status: podStatus(ready, [cstatus('a', 'exited', { exitCode: 1 }), running[1]!]),
    want: { killPod: false, createSandbox: false, start: [] },
  },
];

const inits = [container('init1', { command: ['true'] }), container('init2', { command: ['true'] })];
const initCases: Case[] = [
  {
    name: 'init: new pod starts the first init container only',
    pod: makePod({ initContainers: inits }),
    status: podStatus([], []),
    want: { killPod: true, createSandbox: true, start: [], nextInit: 0 },
  },
  {
    name: 'init: none ran yet in a ready sandbox → init1',
    pod: makePod({ initContainers: inits }),
    status: podStatus(ready, []),
    want: { killPod: false, createSandbox: false, start: [], nextInit: 0 },
  },
  {
    name: 'init: init1 succeeded → init2',
    pod: makePod({ initContainers: inits }),
    status: podStatus(ready, [cstatus('init1', 'exited', { spec: inits[0] })]),
    want: { killPod: false, createSandbox: false, start: [], nextInit: 1 },
  },
  {
    name: 'init: init2 running → wait',
    pod: makePod({ initContainers: inits }),
    status: podStatus(ready, [
      cstatus('init2', 'running', { spec: inits[1] }),
      cstatus('init1', 'exited', { spec: inits[0] }),
    ]),
    want: { killPod: false, createSandbox: false, start: [] },
  },
  {
    name: 'init: all succeeded → regular containers',
    pod: makePod({ initContainers: inits }),
    status: podStatus(ready, [
      cstatus('init2', 'exited', { spec: inits[1] }),
      cstatus('init1', 'exited', { spec: inits[0] }),
    ]),
    want: { killPod: false, createSandbox: false, start: [0, 1] },
  },
  {
    name: 'init: init1 failed under Always → retry init1',
    pod: makePod({ initContainers: inits }),
    status: podStatus(ready, [cstatus('init1', 'exited', { exitCode: 1, spec: inits[0] })]),
    want: { killPod: false, createSandbox: false, start: [], nextInit: 0 },
  },
  {
    name: 'init: init2 failed under Never → kill the pod',
    pod: makePod({ initContainers: inits, restartPolicy: 'Never' }),
    status: podStatus(ready, [
      cstatus('init2', 'exited', { exitCode: 1, spec: inits[1] }),
      cstatus('init1', 'exited', { spec: inits[0] }),
    ]),
    want: { killPod: true, createSandbox: false, start: [] },
  },
  {
    name: 'init: sandbox recreated → initialization starts over at init1',
    pod: makePod({ initContainers: inits }),
    status: podStatus(
      [sandbox('sb1', { ready: false })],
      [cstatus('a', 'exited', { exitCode: 1 }), cstatus('init2', 'exited', { spec: inits[1] })],
    ),
    want: { killPod: true, createSandbox: true, attempt: 1, start: [], nextInit: 0 },
  },
];

function check(c: Case): void {
  const got = computePodActions(c.pod, c.status, c.opts);
  assert.equal(got.killPod, c.want.killPod, 'killPod');
  assert.equal(got.createSandbox, c.want.createSandbox, 'createSandbox');
  if (c.want.attempt !== undefined) assert.equal(got.attempt, c.want.attempt, 'attempt');
  if (c.want.sandboxId !== undefined) assert.equal(got.sandboxId, c.want.sandboxId, 'sandboxId');
  if (c.want.start !== undefined) assert.deepEqual(got.containersToStart, c.want.start, 'containersToStart');
  assert.equal(got.initContainersToStart[0], c.want.nextInit, 'initContainersToStart[0]');
  if (c.want.kill !== undefined)
    assert.deepEqual(
      got.containersToKill.map((k) => `${k.name}:${k.reason}`).sort(),
      [...c.want.kill].sort(),
      'containersToKill',
    );
}

describe('computePodActions', () => {
  for (const c of [...cases, ...initCases]) it(c.name, () => check(c));

  it('messages say why a container is killed', () => {
    const got = computePodActions(
      makePod({ containers: [container('a', { image: 'busybox:1.37' }), b] }),
      podStatus(ready, running),
    );
    assert.equal(got.containersToKill[0]!.message, 'Container a definition changed, will be restarted');
    assert.equal(got.containersToKill[0]!.id, 'ca');
  });

  it('is pure: the same inputs give the same actions and nothing is mutated', () => {
    const pod = makePod();
    const status = podStatus(ready, [cstatus('a', 'exited', { exitCode: 1 }), running[1]!]);
    const before = structuredClone(status);
    const podBefore = structuredClone(pod);
    const x = computePodActions(pod, status);
    const y = computePodActions(pod, status);
    assert.deepEqual(x, y);
    assert.deepEqual(status, before);
    assert.deepEqual(pod, podBefore);
  });
});

describe('computePodActions back-off', () => {
  const pod = makePod();
  const finishedAt = 5_000_000;
  const status = podStatus(ready, [cstatus('a', 'exited', { exitCode: 1, finishedAt }), running[1]!]);
  const key = restartBackOffKey(pod, container('a'));

  it('first restart of a crashed container is immediate (no back-off entry yet)', () => {
    const clock = new FakeClock(finishedAt + 100);
    const got = computePodActions(pod, status, { backOff: new Backoff(clock) });
    assert.deepEqual(got.containersToStart, [0]);
    assert.deepEqual(got.backOff.get('a'), { key, since: finishedAt, inBackOff: false, message: '' });
  });

  it('within the delay after a recorded restart: CrashLoopBackOff with upstream message', () => {
    const clock = new FakeClock(finishedAt - 1000);
    const backOff = new Backoff(clock);
    backOff.next(key, finishedAt - 1000);
    clock.t = finishedAt + 9_000;
    const got = computePodActions(pod, status, { backOff });
    // Still "to start": SyncPod turns the back-off into the waiting reason.
    assert.deepEqual(got.containersToStart, [0]);
    const b = got.backOff.get('a')!;
    assert.equal(b.inBackOff, true);
    assert.equal(b.message, 'back-off 10s restarting failed container=a pod=web_default(uid-1234)');
  });

  it('after the delay the container may restart', () => {
    const clock = new FakeClock(finishedAt - 1000);
    const backOff = new Backoff(clock);
    backOff.next(key, finishedAt - 1000);
    clock.t = finishedAt + 10_000;
    assert.equal(computePodActions(pod, status, { backOff }).backOff.get('a')!.inBackOff, false);
  });

  it('a changed spec has its own back-off key', () => {
    const changed = makePod({ containers: [container('a', { image: 'busybox:1.37' }), b] });
    assert.notEqual(restartBackOffKey(changed, changed.spec!.containers[0]!), key);
  });

  it('no previous exited instance: no back-off entry', () => {
    const got = computePodActions(pod, podStatus([], []), { backOff: new Backoff(new FakeClock()) });
    assert.equal(got.backOff.size, 0);
  });
});
