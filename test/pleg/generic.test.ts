import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGenericPLEG, createPodStatusCache, type PodLifecycleEvent } from '../../src/pleg/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { ManualClock } from '../fakes/manual-clock.js';
import type { RawRelistSource, SubscribeContainerEvents } from '../../src/pleg/index.js';
import type { ContainerEvent } from '../../src/cri/types.js';

test('relist emits events, inspects only changed pods and fills the cache', async () => {
  const rt = new FakeRuntime();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({ ...rt.plegOptions(), cache });
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));

  rt.setContainer('u1', 'c1', 'running');
  await pleg.relist();
  assert.deepEqual(
    events.map((e) => `${e.id}/${e.data}/${e.type}`),
    ['u1/c1/ContainerStarted'],
  );
  assert.equal(cache.get('u1')?.status?.containerStatuses[0]?.state, 'running');

  events.length = 0;
  await pleg.relist();
  assert.equal(events.length, 0, 'no change, no event');

  rt.setContainer('u1', 'c1', 'exited');
  rt.setContainer('u2', 'c2', 'created');
  await pleg.relist();
  assert.deepEqual(
    events.map((e) => `${e.id}/${e.type}`),
    ['u1/ContainerDied'],
    'ContainerChanged is not emitted',
  );
  assert.ok(cache.get('u2'), 'a changed pod is still inspected');

  events.length = 0;
  rt.setContainer('u1', 'c1', undefined);
  await pleg.relist();
  assert.deepEqual(
    events.map((e) => e.type),
    ['ContainerRemoved'],
  );
});

test('a failed inspection is retried on the next relist', async () => {
  const rt = new FakeRuntime();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({ ...rt.plegOptions(), cache });
  rt.setContainer('u1', 'c1', 'running');
  rt.failStatus.add('u1');
  await pleg.relist();
  assert.ok(cache.get('u1')?.error);
  rt.failStatus.clear();
  await pleg.relist();
  assert.equal(cache.get('u1')?.error, undefined);
  assert.equal(cache.get('u1')?.status?.containerStatuses.length, 1);
});

test('getNewerThan waits for the next relist', async () => {
  const rt = new FakeRuntime();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({ ...rt.plegOptions(), cache });
  await pleg.relist();
  const t = Date.now() + 1;
  let resolved = false;
  const p = cache.getNewerThan('u9', t).then((v) => {
    resolved = true;
    return v;
  });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(resolved, false);
  await pleg.relist();
  const v = await p;
  assert.equal(v.status, undefined);
  assert.ok(v.modified > t - 1);
});

/** A PLEG on a manual clock whose cgroup exit trigger the test fires by hand (`exit(cid)`). */
function plegWithFakeExits(
  rt: FakeRuntime,
  source: RawRelistSource,
  clock: ManualClock,
  subscribeContainerEvents?: SubscribeContainerEvents,
) {
  let onExit!: (podUid: string, cid: string) => void;
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({
    ...rt.plegOptions(),
    source,
    cache,
    clock,
    relistPeriodMs: 60_000,
    subscribeContainerEvents,
    createExitWatcher: (cb) => {
      onExit = cb;
      return { track: async () => true, untrack: () => undefined, close: () => undefined } as never;
    },
  });
  return { pleg, cache, exit: (cid: string) => onExit('u1', cid) };
}

/**
 * A cgroup says the container's last process left; containerd records the exit only ~50 ms later
 * (bench/pleg-runtimes.ts). The PLEG asks ContainerStatus for just that container every 5 ms and
 * relists its pod (upstream relistPod) the moment the runtime reports the exit: no relist loop
 * while the runtime says running, no event before the runtime agrees (the cache never runs ahead
 * of the runtime), no node-wide list on the path, and one ContainerDied only.
 */
test('a cgroup exit is confirmed by per-container status calls, then its pod is relisted', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let exitReported = false;
  let statusCalls = 0;
  let lists = 0;
  const source = {
    listRaw: () => {
      lists++;
      return rt.listRaw();
    },
    containerExited: async (id: string) => {
      statusCalls++;
      assert.equal(id, 'c1');
      return exitReported;
    },
  };
  const { pleg, exit, cache } = plegWithFakeExits(rt, source, clock);
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));
  rt.setContainer('u1', 'c1', 'running');
  pleg.start();
  await clock.advance(0);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ContainerStarted'],
  );
  const listsBefore = lists;

  exit('c1');
  await clock.advance(40); // the runtime still says running: status calls only
  assert.ok(statusCalls >= 5, `polled ${statusCalls} times in 40 ms`);
  assert.equal(lists, listsBefore, 'no relist until the runtime reports the exit');
  assert.equal(events.length, 1);

  rt.setContainer('u1', 'c1', 'exited');
  exitReported = true;
  await clock.advance(5);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ContainerStarted', 'ContainerDied'],
  );
  assert.equal(lists, listsBefore, 'the pod alone was relisted');
  assert.equal(cache.get('u1')?.status?.containerStatuses[0]?.state, 'exited', 'the cache holds the exit first');
  const calls = statusCalls;
  await clock.advance(100);
  assert.equal(statusCalls, calls, 'polling stops once confirmed');
  await pleg.relist();
  assert.equal(lists, listsBefore + 1);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ContainerStarted', 'ContainerDied'],
    'the full relist does not send ContainerDied again',
  );
  rt.setContainer('u1', 'c1', undefined);
  await pleg.relist();
  assert.deepEqual(
    events.map((e) => e.type),
    ['ContainerStarted', 'ContainerDied', 'ContainerRemoved'],
  );
  pleg.stop();
});

test('an unconfirmed cgroup exit is left to the periodic relist after 2 s', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let statusCalls = 0;
  const source = {
    listRaw: () => rt.listRaw(),
    containerExited: async () => {
      statusCalls++;
      return false;
    },
  };
  const { pleg, exit } = plegWithFakeExits(rt, source, clock);
  rt.setContainer('u1', 'c1', 'running');
  pleg.start();
  await clock.advance(0);
  exit('c1');
  await clock.advance(2100);
  const calls = statusCalls;
  assert.ok(calls > 100 && calls < 500, `${calls} status calls`);
  await clock.advance(1000);
  assert.equal(statusCalls, calls, 'gave up: the periodic relist will see the exit');
  pleg.stop();
});

test('a mass exit is confirmed a few containers per round, not one call per container every 5 ms', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  const perRound: number[] = [];
  let inRound = 0;
  const source = {
    listRaw: () => rt.listRaw(),
    containerExited: async () => {
      inRound++;
      return false;
    },
  };
  const { pleg, exit } = plegWithFakeExits(rt, source, clock);
  pleg.start();
  await clock.advance(0);
  for (let i = 0; i < 30; i++) exit(`c${i}`);
  await clock.advance(0); // the first round runs at once
  assert.ok(inRound <= 8, `first round: ${inRound}`);
  for (let r = 0; r < 5; r++) {
    inRound = 0;
    await clock.advance(5);
    perRound.push(inRound);
  }
  assert.ok(
    perRound.every((n) => n <= 8),
    `calls per round: ${perRound}`,
  );
  pleg.stop();
});

/**
 * A pod relist and a full relist inspect the same pod at once (upstream serialises them under
 * relistLock): the full relist, started before the exit and answered after the pod relist, must
 * not put its older "running" back into the cache, and the exit is sent once.
 */
test('an older full-relist inspection never replaces a newer pod relist', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let exitReported = false;
  const { pleg, exit, cache } = plegWithFakeExits(
    rt,
    { listRaw: () => rt.listRaw(), containerExited: async () => exitReported },
    clock,
  );
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));
  rt.setContainer('u1', 'c1', 'running');
  rt.setContainer('u1', 'c2', 'running');
  pleg.start();
  await clock.advance(0);
  // A full relist lists now (c2 has exited: u1 gets inspected) and reads u1's status late, before c1's exit.
  rt.setContainer('u1', 'c2', 'exited');
  const getPodStatus = rt.getPodStatus.bind(rt);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const stale = getPodStatus('u1', 'pod-u1', 'default');
  rt.getPodStatus = async () => {
    rt.getPodStatus = getPodStatus;
    await gate;
    return stale;
  };
  const full = pleg.relist();
  await clock.advance(1);
  rt.setContainer('u1', 'c1', 'exited');
  exitReported = true;
  exit('c1');
  await clock.advance(5);
  const died = () =>
    events
      .filter((e) => e.type === 'ContainerDied')
      .map((e) => e.data)
      .sort();
  assert.deepEqual(died(), ['c1', 'c2'], 'the pod relist sent both exits it saw');
  release();
  await full;
  assert.equal(
    cache.get('u1')?.status?.containerStatuses.find((c) => c.id === 'c1')?.state,
    'exited',
    'the older inspection was not written over the newer one',
  );
  assert.deepEqual(died(), ['c1', 'c2'], 'the full relist sent c2 no second time');
  await pleg.relist();
  assert.deepEqual(died(), ['c1', 'c2'], 'nor c1');
  pleg.stop();
});

test('an exit in a pod the PLEG has not seen yet relists the node', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let lists = 0;
  const { pleg, exit } = plegWithFakeExits(
    rt,
    {
      listRaw: () => {
        lists++;
        return rt.listRaw();
      },
      containerExited: async () => true,
    },
    clock,
  );
  pleg.start();
  await clock.advance(0);
  const before = lists;
  exit('c9'); // pod u1 is unknown: no name/namespace to inspect it by
  await clock.advance(0);
  assert.equal(lists, before + 1);
  pleg.stop();
});

/**
 * With the runtime's CRI events flowing, its stop event arrives with its first report of the
 * exit: the per-container status calls would only load the runtime. They wait 250 ms for the
 * event, and confirm the exit themselves only when it does not come (containerd#7318).
 */
test('while CRI events flow, a cgroup exit waits for the stop event before asking ContainerStatus', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let statusCalls = 0;
  const source = {
    listRaw: () => rt.listRaw(),
    containerExited: async (id: string) => {
      statusCalls++;
      return rt.pods[0]!.containers.find((c) => c.id === id)?.state === 'exited';
    },
  };
  let send!: (e: ContainerEvent) => void;
  const subscribe: SubscribeContainerEvents = (onEvent) => {
    send = onEvent;
    return { cancel: () => undefined };
  };
  const { pleg, exit } = plegWithFakeExits(rt, source, clock, subscribe);
  const died: string[] = [];
  pleg.watch((e) => e.type === 'ContainerDied' && died.push(e.data));
  rt.setContainer('u1', 'c1', 'running');
  rt.setContainer('u1', 'c2', 'running');
  pleg.start();
  await clock.advance(0);
  const stop = (id: string): ContainerEvent => ({
    containerId: id,
    type: 'CONTAINER_STOPPED_EVENT',
    createdAt: 1n,
    containersStatuses: [],
    podSandboxStatus: { id: 's1', metadata: { name: 'pod-u1', uid: 'u1', namespace: 'default', attempt: 0 } } as never,
  });
  send({ ...stop('c0'), type: 'CONTAINER_CREATED_EVENT' }); // the stream is active
  await clock.advance(0);

  exit('c1');
  await clock.advance(100);
  rt.setContainer('u1', 'c1', 'exited');
  send(stop('c1'));
  await clock.advance(300);
  assert.deepEqual(died, ['c1']);
  assert.equal(statusCalls, 0, 'the event came within the grace: no status call');

  exit('c2'); // and its event never comes
  rt.setContainer('u1', 'c2', 'exited');
  await clock.advance(240);
  assert.equal(statusCalls, 0);
  await clock.advance(20);
  assert.ok(statusCalls >= 1);
  assert.deepEqual(died, ['c1', 'c2']);
  pleg.stop();
});

/** The statuses a containerd 1.7/2.x stop event carries: every container of the sandbox. */
function stopEvent(at: number, exited: string, running: string[]): ContainerEvent {
  const status = (id: string, state: 'CONTAINER_RUNNING' | 'CONTAINER_EXITED') => ({
    id,
    metadata: { name: id, attempt: 0 },
    state,
    createdAt: 1n,
    startedAt: 1n,
    finishedAt: state === 'CONTAINER_EXITED' ? BigInt(at) * 1_000_000n : 0n,
    exitCode: state === 'CONTAINER_EXITED' ? 1 : 0,
    image: 'img',
    imageRef: 'sha256:x',
    reason: '',
    message: '',
    labels: { 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.container.name': id },
    annotations: {},
    logPath: '',
  });
  return {
    containerId: exited,
    type: 'CONTAINER_STOPPED_EVENT',
    createdAt: BigInt(at + 1) * 1_000_000n,
    containersStatuses: [status(exited, 'CONTAINER_EXITED'), ...running.map((id) => status(id, 'CONTAINER_RUNNING'))],
    podSandboxStatus: {
      id: 's',
      state: 'SANDBOX_READY',
      metadata: { name: 'pod-u1', uid: 'u1', namespace: 'default', attempt: 0 },
    } as never,
  };
}

/** A PLEG with CRI events flowing, over a pod u1 (sandbox s) running c1 and c2; counts pod inspections. */
async function plegWithEvents() {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  rt.setSandbox('u1', 's', true);
  rt.setContainer('u1', 'c1', 'running');
  rt.setContainer('u1', 'c2', 'running');
  let send!: (e: ContainerEvent) => void;
  const subscribe: SubscribeContainerEvents = (onEvent) => {
    send = onEvent;
    return { cancel: () => undefined };
  };
  const { pleg, cache } = plegWithFakeExits(rt, { listRaw: () => rt.listRaw() }, clock, subscribe);
  const inspected: string[] = [];
  const getPodStatus = rt.getPodStatus.bind(rt);
  rt.getPodStatus = (uid, ...rest) => (inspected.push(uid), getPodStatus(uid, ...rest));
  const died: string[] = [];
  /** At each ContainerDied: the inspections so far, and the cache's stamp and state of the container. */
  const atDeath: { inspections: number; modified?: number; state?: string }[] = [];
  pleg.watch((e) => {
    if (e.type !== 'ContainerDied') return;
    died.push(e.data);
    const entry = cache.get(e.id);
    const state = entry?.status?.containerStatuses.find((c) => c.id === e.data)?.state;
    atDeath.push({ inspections: inspected.length, modified: entry?.modified, state });
  });
  pleg.start();
  await clock.advance(0);
  inspected.length = 0;
  return { clock, rt, pleg, cache, send: (e: ContainerEvent) => send(e), inspected, died, atDeath };
}

/**
 * A stop event carries the runtime's statuses of every container of the sandbox (upstream's
 * evented PLEG writes them to its cache): ContainerDied goes out at once, the cache holding the
 * runtime's exit stamped with the event's time, and no inspection round trip on the way.
 */
test("a stop event's statuses are written into the cache and ContainerDied sent without inspecting", async () => {
  const { clock, rt, pleg, cache, send, inspected, died, atDeath } = await plegWithEvents();
  const at = clock.now() + 3;
  await clock.advance(5);
  rt.setContainer('u1', 'c1', 'exited');
  send(stopEvent(at, 'c1', ['c2']));
  await clock.advance(0);
  assert.deepEqual(died, ['c1']);
  assert.deepEqual(
    atDeath,
    [{ inspections: 0, modified: at, state: 'exited' }],
    'no round trip before ContainerDied; the exit stamped with the time the runtime reports',
  );
  assert.deepEqual(inspected, ['u1'], 'then the pod relist, for a pod worker that synced since');
  assert.deepEqual(
    cache
      .get('u1')
      ?.status?.containerStatuses.map((c) => `${c.id}:${c.state}`)
      .sort(),
    ['c1:exited', 'c2:running'],
  );
  await pleg.relist();
  assert.deepEqual(died, ['c1'], 'the full relist does not send it again');
  pleg.stop();
});

/**
 * Stop events that make no claim past the cached status (an exit from before the last relist, a
 * sandbox that is not the pod's newest or not ready, no exit time): written all the same, as of
 * the cached status they were made from, so a pod worker that synced since waits for a newer one.
 */
const asOfCache: [string, (e: ContainerEvent, at: number) => ContainerEvent][] = [
  ['from before the cached status', (e, at) => stopEvent(at - 10, 'c1', ['c2'])],
  ["of a sandbox that is not the pod's newest", (e) => sandboxed(e, { id: 'an-older-sandbox' })],
  ['of a sandbox that is not ready (a newer one may replace it)', (e) => sandboxed(e, { state: 'SANDBOX_NOTREADY' })],
  [
    'without the exit time',
    (e) => ({ ...e, containersStatuses: e.containersStatuses.map((c) => ({ ...c, finishedAt: 0n })) }),
  ],
];

function sandboxed(e: ContainerEvent, change: object): ContainerEvent {
  return { ...e, podSandboxStatus: { ...e.podSandboxStatus!, ...change } };
}

for (const [name, change] of asOfCache) {
  test(`a stop event ${name} is written as of the cached status`, async () => {
    const { clock, rt, pleg, cache, send, died, atDeath } = await plegWithEvents();
    const before = cache.get('u1')!.modified;
    await clock.advance(5);
    rt.setContainer('u1', 'c1', 'exited');
    send(change(stopEvent(clock.now(), 'c1', ['c2']), before));
    await clock.advance(0);
    assert.deepEqual(died, ['c1']);
    assert.deepEqual(atDeath, [{ inspections: 0, modified: before, state: 'exited' }]);
    pleg.stop();
  });
}

test('a stop event without a sandbox relists the node', async () => {
  const { clock, rt, pleg, send, inspected, died } = await plegWithEvents();
  await clock.advance(5);
  rt.setContainer('u1', 'c1', 'exited');
  send({ ...stopEvent(clock.now(), 'c1', ['c2']), podSandboxStatus: undefined });
  await clock.advance(0);
  assert.deepEqual(inspected, ['u1']);
  assert.deepEqual(died, ['c1']);
  pleg.stop();
});

/**
 * A full relist listed the pod before the runtime recorded the exit, and its inspection lands
 * after the stop event was written: it is newer, but a container never runs again once it
 * exited, so the cache keeps the exit that ContainerDied announced.
 */
test('an inspection answered before the exit was recorded does not take the exit back', async () => {
  const { clock, rt, pleg, cache, send, died } = await plegWithEvents();
  rt.setContainer('u1', 'c2', 'exited'); // the relist will inspect u1 for c2's exit
  const stale = await rt.getPodStatus('u1', 'pod-u1', 'default'); // c1 still running
  const getPodStatus = rt.getPodStatus.bind(rt);
  const held: (() => void)[] = [];
  rt.getPodStatus = async (...args) => {
    const fresh = await getPodStatus(...args);
    const first = held.length === 0;
    await new Promise<void>((r) => held.push(r));
    return first ? stale : fresh;
  };
  await clock.advance(5);
  const full = pleg.relist(); // lists, then inspects u1: answered with `stale`, held
  await clock.advance(1);
  rt.setContainer('u1', 'c1', 'exited');
  send(stopEvent(clock.now() - 3, 'c1', [])); // the exit came before that relist started
  await clock.advance(0);
  assert.equal(died[0], 'c1');
  held[0]!(); // the relist's older answer lands before the pod relist's: newer than the patch
  await full;
  const state = (id: string) => cache.get('u1')?.status?.containerStatuses.find((c) => c.id === id)?.state;
  assert.equal(state('c1'), 'exited', 'the exit ContainerDied announced stays');
  held[1]!();
  await clock.advance(0);
  assert.deepEqual(died.sort(), ['c1', 'c2']);
  pleg.stop();
});

/**
 * containerd 1.6 has no events: the ContainerStatus that confirms a cgroup exit is the runtime's
 * report, written into the cache as of the cached status, with no pod inspection after it.
 */
test('the ContainerStatus that confirms a cgroup exit is written into the cache', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  rt.setSandbox('u1', 's', true);
  rt.setContainer('u1', 'c1', 'running');
  rt.setContainer('u1', 'c2', 'running');
  let exited = false;
  const report = stopEvent(0, 'c1', []).containersStatuses[0]!;
  const source = { listRaw: () => rt.listRaw(), containerExited: async () => (exited ? report : false) };
  const { pleg, cache, exit } = plegWithFakeExits(rt, source, clock);
  let inspections = 0;
  const atDeath: string[] = [];
  pleg.watch((e) => {
    const entry = cache.get(e.id);
    const states = entry?.status?.containerStatuses.map((c) => `${c.id}:${c.state}`).join(',');
    if (e.type === 'ContainerDied') atDeath.push(`${e.data} after ${inspections} @${entry?.modified}: ${states}`);
  });
  pleg.start();
  await clock.advance(0);
  const before = cache.get('u1')!.modified;
  const getPodStatus = rt.getPodStatus.bind(rt);
  rt.getPodStatus = (...args) => (inspections++, getPodStatus(...args));
  exit('c1');
  await clock.advance(10);
  assert.deepEqual(atDeath, []);
  exited = true;
  await clock.advance(5);
  assert.deepEqual(atDeath, [`c1 after 0 @${before}: c1:exited,c2:running`]);
  pleg.stop();
});

/** FakeRuntime's getPodStatus, counted. */
function countStatusReads(rt: FakeRuntime): () => number {
  let reads = 0;
  const read = rt.getPodStatus.bind(rt);
  rt.getPodStatus = (...args) => {
    reads++;
    return read(...args);
  };
  return () => reads;
}

/** The containers of each ContainerDied the PLEG sends, in order. */
function diedEvents(pleg: { watch(l: (e: PodLifecycleEvent) => void): unknown }): string[] {
  const died: string[] = [];
  pleg.watch((e) => e.type === 'ContainerDied' && died.push(e.data));
  return died;
}

/** A raw source over `rt` whose exit confirmations answer `exited`; both kinds of call counted. */
function countingSource(rt: FakeRuntime, exited: boolean) {
  const counts = { lists: 0, statusCalls: 0 };
  const source = {
    listRaw: () => {
      counts.lists++;
      return rt.listRaw();
    },
    containerExited: async () => {
      counts.statusCalls++;
      return exited;
    },
  };
  return { source, counts };
}

/**
 * A kill by the kubelet (issue 30: a 100-pod delete on containerd 1.6 polled ContainerStatus ~3
 * times per pod for exits the kill itself waits for, then relisted the pod): the exits of a pod
 * being stopped wait for the kill's own status read, which the PLEG caches and sends
 * ContainerDied from. No status call, no pod relist, no node list, one ContainerDied.
 */
test('the exits of a pod the kubelet stops are settled by the status its kill reads after', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  const { source, counts } = countingSource(rt, true);
  const { pleg, exit, cache } = plegWithFakeExits(rt, source, clock);
  const reads = countStatusReads(rt);
  const died = diedEvents(pleg);
  rt.setContainer('u1', 'c1', 'running');
  rt.setSandbox('u1', 's1', true);
  pleg.start();
  await clock.advance(0);
  const before = { lists: counts.lists, reads: reads() };

  pleg.expectPodStop!('u1');
  rt.setContainer('u1', 'c1', 'exited');
  rt.setSandbox('u1', 's1', false);
  exit('c1');
  exit('s1'); // the sandbox's pause container
  await clock.advance(100);
  assert.deepEqual(
    [counts.statusCalls, counts.lists, reads(), died],
    [0, before.lists, before.reads, []],
    'nothing asked yet',
  );

  const status = await rt.getPodStatus('u1', 'pod-u1', 'default');
  status.sandboxStatuses = [
    { id: 's1', ready: false, attempt: 0, createdAt: 1n, ip: '', additionalIps: [], hostNetwork: true },
  ];
  pleg.podStopped!('u1', { status, observed: clock.now() });
  assert.deepEqual(died, ['c1']);
  assert.equal(cache.get('u1')?.status, status, 'the kill’s status is cached');
  await clock.advance(100);
  assert.equal(counts.statusCalls, 0);
  assert.equal(reads(), before.reads + 1, 'the kill’s read only: no pod relist');
  await pleg.relist();
  assert.deepEqual(died, ['c1', 's1'], 'the next relist sends the sandbox’s, and c1’s no second time');
  assert.equal(reads(), before.reads + 1, 'and does not read the pod: the cache shows both changes');
  rt.setContainer('u1', 'c1', undefined);
  await pleg.relist();
  assert.equal(reads(), before.reads + 2, 'a removal the cache does not show is read');
  pleg.stop();
});

test('a kill that ends without a status leaves its exits to the usual confirmation', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  const { source, counts } = countingSource(rt, true);
  const { pleg, exit } = plegWithFakeExits(rt, source, clock);
  const died = diedEvents(pleg);
  rt.setContainer('u1', 'c1', 'running');
  rt.setContainer('u1', 'c2', 'running');
  pleg.start();
  await clock.advance(0);

  // Two kills overlap (a shorter grace period superseded the first): the last one ends it.
  pleg.expectPodStop!('u1');
  pleg.expectPodStop!('u1');
  rt.setContainer('u1', 'c1', 'exited');
  exit('c1');
  pleg.podStopped!('u1');
  await clock.advance(20);
  assert.deepEqual([counts.statusCalls, died], [0, []], 'a kill is still running');
  pleg.podStopped!('u1'); // failed: no status
  await clock.advance(5);
  assert.equal(counts.statusCalls, 1);
  assert.deepEqual(died, ['c1']);

  rt.setContainer('u1', 'c2', 'exited');
  exit('c2');
  await clock.advance(5);
  assert.deepEqual(died, ['c1', 'c2'], 'later exits are confirmed at once');
  pleg.stop();
});

test('a relist does not inspect a pod whose cached status was observed after it started', async () => {
  const clock = new ManualClock();
  const rt = new FakeRuntime();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding = false;
  const source = {
    listRaw: async () => {
      const lists = rt.listRaw();
      if (holding) await held;
      return lists;
    },
  };
  const { pleg, cache } = plegWithFakeExits(rt, source, clock);
  const died = diedEvents(pleg);
  rt.setContainer('u1', 'c1', 'running');
  pleg.start();
  await clock.advance(0);
  const reads = countStatusReads(rt);

  pleg.expectPodStop!('u1');
  rt.setContainer('u1', 'c1', 'exited');
  holding = true;
  const relist = pleg.relist(); // lists now, answered after the kill's read
  await clock.advance(1);
  const status = await rt.getPodStatus('u1', 'pod-u1', 'default');
  pleg.podStopped!('u1', { status, observed: clock.now() });
  release();
  await relist;
  assert.equal(reads(), 1, 'only the kill’s own read');
  assert.equal(cache.get('u1')?.status, status);
  assert.deepEqual(died, ['c1']);
  pleg.stop();
});

/** A stop event while the kubelet kills the pod is written; the pod's read is left to the kill. */
test('a stop event during a kill is written without the pod relist after it', async () => {
  const { clock, rt, pleg, send, inspected, died } = await plegWithEvents();
  pleg.expectPodStop!('u1');
  await clock.advance(5);
  rt.setContainer('u1', 'c1', 'exited');
  send(stopEvent(clock.now(), 'c1', ['c2']));
  await clock.advance(0);
  assert.deepEqual(died, ['c1']);
  assert.deepEqual(inspected, []);
  pleg.stop();
});
