/**
 * Run-once (upstream pkg/kubelet/runonce.go) on a clock the test moves: the first update of the
 * sources, the 1 s manifest delay, upstream's retry schedule, and the outcome per pod read from
 * the status the Kubelet reports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import type { PodUpdate } from '../../src/podconfig/types.js';
import {
  formatRunOnce,
  RunOnce,
  runOnceManifestDelayMs,
  runOnceMaxRetries,
  type RunOnceResult,
} from '../../src/kubelet/run-once.js';
import { ManualClock, settle } from '../fakes/manual-clock.js';

function pod(name: string, containers = ['bar'], init: string[] = []): Pod {
  return {
    metadata: { name, namespace: 'new', uid: `uid-${name}` },
    spec: {
      containers: containers.map((c) => ({ name: c, image: 'busybox' })),
      initContainers: init.map((c) => ({ name: c, image: 'busybox' })),
    },
  } as Pod;
}

const running = (...names: string[]): ApiPodStatus =>
  ({ phase: 'Running', containerStatuses: names.map((name) => ({ name, state: { running: {} } })) }) as ApiPodStatus;
const waiting = (name: string, reason: string, message = ''): ApiPodStatus =>
  ({
    phase: 'Pending',
    containerStatuses: [{ name, state: { waiting: { reason, ...(message ? { message } : {}) } } }],
  }) as ApiPodStatus;

/** Pushes updates to the tap by hand. */
function source() {
  const queue: PodUpdate[] = [];
  let wake: (() => void) | undefined;
  return {
    push(u: PodUpdate) {
      queue.push(u);
      wake?.();
    },
    async *updates(): AsyncGenerator<PodUpdate> {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
}

/**
 * Runs run-once over one ADD of `pods`, each pod's status given per check (the n-th look at it,
 * from 0); records when each check happened. Time moves until every pod has its result.
 */
async function runOnce(pods: Pod[], statusAt: (uid: string, check: number) => ApiPodStatus | undefined) {
  const clock = new ManualClock(0);
  const checks = new Map<string, number[]>();
  const once = new RunOnce({
    clock,
    status: (uid) => {
      const times = checks.get(uid) ?? [];
      checks.set(uid, [...times, clock.now()]);
      return statusAt(uid, times.length);
    },
  });
  const src = source();
  const forwarded: PodUpdate[] = [];
  void (async () => {
    for await (const u of once.tap(src.updates())) forwarded.push(u);
  })();
  src.push({ op: 'ADD', pods, source: 'file' });
  let results: RunOnceResult[] | undefined;
  void once.run().then((r) => (results = r));
  for (let i = 0; i < 100 && !results; i++) await clock.advance(60_000);
  assert.ok(results, 'run-once ended');
  return { results, checks, forwarded };
}

// upstream pkg/kubelet/runonce_test.go TestRunOnce: one pod "foo" whose container "bar" runs is started
// (results[0].Err nil, results[0].Pod.Name foo); the other rows are the outcomes upstream's runOnce and
// runPod produce (runonce.go), read here from the status the Kubelet reports.
const cases: {
  name: string;
  pod: Pod;
  status: (check: number) => ApiPodStatus | undefined;
  ok: boolean;
  rejected?: boolean;
  message: RegExp | string;
  checks: number;
}[] = [
  {
    name: 'TestRunOnce: every container runs',
    pod: pod('foo'),
    status: () => running('bar'),
    ok: true,
    message: 'running',
    checks: 1,
  },
  {
    name: 'not synced yet, then running on the third check',
    pod: pod('foo'),
    status: (n) => (n < 2 ? undefined : running('bar')),
    ok: true,
    message: 'running',
    checks: 3,
  },
  {
    name: 'one container of two runs: not started yet',
    pod: pod('two', ['a', 'b']),
    status: (n) => (n < 1 ? running('a') : running('a', 'b')),
    ok: true,
    message: 'running',
    checks: 2,
  },
  {
    name: 'rejected at admission: reported, not a failure (RunPodResult{pod, nil})',
    pod: pod('big'),
    status: () =>
      ({
        phase: 'Failed',
        reason: 'OutOfcpu',
        message: "Pod was rejected: Node didn't have enough resource: cpu",
      }) as ApiPodStatus,
    ok: true,
    rejected: true,
    message: "OutOfcpu: Node didn't have enough resource: cpu",
    checks: 1,
  },
  {
    name: 'sync error ErrImagePull: fails at once',
    pod: pod('img'),
    status: () => waiting('bar', 'ErrImagePull', 'not found'),
    ok: false,
    message: 'container bar: ErrImagePull: not found',
    checks: 1,
  },
  {
    name: 'ImagePullBackOff follows an ErrImagePull: fails',
    pod: pod('img'),
    status: () => waiting('bar', 'ImagePullBackOff'),
    ok: false,
    message: 'container bar: ImagePullBackOff',
    checks: 1,
  },
  {
    name: 'CreateContainerConfigError: fails',
    pod: pod('cfg'),
    status: () => waiting('bar', 'CreateContainerConfigError', 'secret "s" not found'),
    ok: false,
    message: /CreateContainerConfigError/,
    checks: 1,
  },
  {
    name: 'CrashLoopBackOff is no sync error: keeps waiting',
    pod: pod('crash'),
    status: (n) => (n < 4 ? waiting('bar', 'CrashLoopBackOff') : running('bar')),
    ok: true,
    message: 'running',
    checks: 5,
  },
  {
    name: 'init containers still running: keeps waiting',
    pod: pod('init', ['bar'], ['setup']),
    status: (n) =>
      n < 2
        ? ({
            phase: 'Pending',
            initContainerStatuses: [{ name: 'setup', state: { running: {} } }],
            containerStatuses: [{ name: 'bar', state: { waiting: { reason: 'PodInitializing' } } }],
          } as ApiPodStatus)
        : running('bar'),
    ok: true,
    message: 'running',
    checks: 3,
  },
  {
    name: 'a failing init container: fails',
    pod: pod('init', ['bar'], ['setup']),
    status: () =>
      ({
        phase: 'Pending',
        initContainerStatuses: [{ name: 'setup', state: { waiting: { reason: 'RunContainerError' } } }],
      }) as ApiPodStatus,
    ok: false,
    message: 'container setup: RunContainerError',
    checks: 1,
  },
  {
    name: 'terminal Succeeded: started',
    pod: pod('job'),
    status: () => ({ phase: 'Succeeded' }) as ApiPodStatus,
    ok: true,
    message: 'succeeded',
    checks: 1,
  },
  {
    name: 'terminal Failed: fails',
    pod: pod('job'),
    status: () => ({ phase: 'Failed', reason: 'Error' }) as ApiPodStatus,
    ok: false,
    message: 'failed: Error',
    checks: 1,
  },
  {
    name: 'never running: timeout error after runOnceMaxRetries',
    pod: pod('slow'),
    status: () => waiting('bar', 'ContainerCreating'),
    ok: false,
    message: 'timeout error: containers not running after 10 retries (container bar: ContainerCreating)',
    checks: runOnceMaxRetries + 1,
  },
];

for (const c of cases) {
  test(`runOnce: ${c.name}`, async () => {
    const { results, checks } = await runOnce([c.pod], (_uid, n) => c.status(n));
    assert.equal(results.length, 1);
    const [r] = results;
    assert.equal(r!.pod, `new/${c.pod.metadata!.name}`);
    assert.equal(r!.ok, c.ok, r!.message);
    assert.equal(r!.rejected ?? false, c.rejected ?? false);
    if (typeof c.message === 'string') assert.equal(r!.message, c.message);
    else assert.match(r!.message, c.message);
    assert.equal(checks.get(c.pod.metadata!.uid!)!.length, c.checks);
  });
}

test('retry schedule: checks at once, then after 1 s, 2 s, 4 s, … doubling (runOnceRetryDelay, runOnceRetryDelayBackoff); the 11th check is the last', async () => {
  const { checks } = await runOnce([pod('slow')], () => undefined);
  const times = checks.get('uid-slow')!;
  assert.deepEqual(
    times,
    [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023].map((s) => s * 1000),
  );
});

test('several pods are waited for side by side; results in name order', async () => {
  const { results, checks } = await runOnce([pod('b'), pod('a'), pod('c')], (uid, n) =>
    uid === 'uid-c' ? waiting('bar', 'ErrImagePull') : n < 3 ? undefined : running('bar'),
  );
  assert.deepEqual(
    results.map((r) => [r.pod, r.ok]),
    [
      ['new/a', true],
      ['new/b', true],
      ['new/c', false],
    ],
  );
  assert.deepEqual(checks.get('uid-a'), [0, 1000, 3000, 7000]);
});

test('only the first update counts (upstream reads one update); every update still reaches the Kubelet', async () => {
  const clock = new ManualClock(0);
  const once = new RunOnce({ clock, status: () => running('bar') });
  const src = source();
  const forwarded: PodUpdate[] = [];
  void (async () => {
    for await (const u of once.tap(src.updates())) forwarded.push(u);
  })();
  const first: PodUpdate = { op: 'ADD', pods: [pod('first')], source: 'file' };
  const second: PodUpdate = { op: 'ADD', pods: [pod('second')], source: 'http' };
  src.push(first);
  src.push(second);
  await settle();
  assert.deepEqual(forwarded, [first, second], 'forwarded unchanged, in order');
  const results = await once.run();
  assert.deepEqual(
    results.map((r) => r.pod),
    ['new/first'],
  );
});

test('the first update may hold no pods (a source with none): nothing to run, no failure', async () => {
  const clock = new ManualClock(0);
  const once = new RunOnce({ clock, status: () => undefined });
  const src = source();
  void (async () => {
    for await (const _ of once.tap(src.updates()));
  })();
  src.push({ op: 'ADD', pods: [], source: 'file' });
  const results = await once.run();
  assert.deepEqual(results, []);
  assert.equal(formatRunOnce(results).code, 0);
});

test('no update within 5 s (upstream runOnceManifestDelay: 1 s): one failed result, the run fails', async () => {
  assert.equal(runOnceManifestDelayMs, 5000);
  const clock = new ManualClock(0);
  const once = new RunOnce({ clock, status: () => undefined });
  let results: RunOnceResult[] | undefined;
  void once.run().then((r) => (results = r));
  await clock.advance(runOnceManifestDelayMs - 1);
  assert.equal(results, undefined);
  await clock.advance(1);
  assert.deepEqual(results, [{ pod: '(sources)', ok: false, message: 'no pod manifest update after 5000 ms' }]);
  assert.equal(formatRunOnce(results!).code, 1);
});

test('formatRunOnce: one line per pod, a summary; exit 1 only when an admitted pod failed', () => {
  const rejected: RunOnceResult = { pod: 'd/big', ok: true, rejected: true, message: 'OutOfcpu: no room' };
  const good: RunOnceResult = { pod: 'd/web', ok: true, message: 'running' };
  const bad: RunOnceResult = { pod: 'd/bad', ok: false, message: 'container c: ErrImagePull: nope' };
  assert.deepEqual(formatRunOnce([good, rejected]), {
    text: 'ok d/web: running\nrejected d/big: OutOfcpu: no room\nrunonce: 1 pod(s) running; 1 rejected at admission: d/big\n',
    code: 0,
  });
  assert.deepEqual(formatRunOnce([bad, good]), {
    text: 'FAILED d/bad: container c: ErrImagePull: nope\nok d/web: running\nrunonce: 1 of 2 pod(s) failed: d/bad\n',
    code: 1,
  });
});
