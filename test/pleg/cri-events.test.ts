import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createGenericPLEG,
  createPodStatusCache,
  type PodLifecycleEvent,
  type SubscribeContainerEvents,
} from '../../src/pleg/index.js';
import { CriError } from '../../src/errors.js';
import type { ContainerEvent } from '../../src/cri/types.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

/** A GetContainerEvents double: the test pushes events or fails the stream. */
function fakeStream() {
  const subs: { onEvent: (e: ContainerEvent) => void; onError: (err: CriError) => void; cancelled: boolean }[] = [];
  const subscribe: SubscribeContainerEvents = (onEvent, onError) => {
    const s = { onEvent, onError, cancelled: false };
    subs.push(s);
    return {
      cancel: () => {
        s.cancelled = true;
      },
    };
  };
  const last = () => subs[subs.length - 1]!;
  const stopped = (id: string): ContainerEvent => ({
    containerId: id,
    type: 'CONTAINER_STOPPED_EVENT',
    createdAt: 1n,
    containersStatuses: [],
  });
  return { subs, subscribe, last, stopped };
}

const HOUR = 3_600_000;
const until = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A PLEG on the fake stream (periodic relist an hour away) whose node-wide lists are counted. */
function countingPleg(rt: FakeRuntime, stream: ReturnType<typeof fakeStream>) {
  const counter = { lists: 0 };
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({
    ...rt.plegOptions(),
    source: {
      listRaw: () => {
        counter.lists++;
        return rt.listRaw();
      },
    },
    cache,
    relistPeriodMs: HOUR,
    subscribeContainerEvents: stream.subscribe,
  });
  return { pleg, cache, counter };
}

/** Started, with container c1 of pod u1 running and its ContainerStarted received. */
async function withRunningC1(t: { after(fn: () => void): void }) {
  const rt = new FakeRuntime();
  const stream = fakeStream();
  const { pleg, cache, counter } = countingPleg(rt, stream);
  t.after(() => pleg.stop());
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));
  rt.setContainer('u1', 'c1', 'running');
  pleg.start();
  await until(() => events.length === 1);
  return { rt, stream, pleg, events, cache, counter };
}

const sandboxOf = (uid: string) =>
  ({ id: `s-${uid}`, metadata: { name: `pod-${uid}`, uid, namespace: 'default', attempt: 0 } }) as never;

test('a CRI container event triggers a relist at once (periodic relist an hour away)', async (t) => {
  const { rt, stream, pleg, events } = await withRunningC1(t);
  assert.equal(pleg.criEventsState?.(), 'connecting');

  rt.setContainer('u1', 'c1', 'exited');
  stream.last().onEvent(stream.stopped('c1'));
  await until(() => events.some((e) => e.type === 'ContainerDied'));
  assert.equal(pleg.criEventsState?.(), 'active');
  assert.equal(stream.subs.length, 1);
});

test('Unimplemented (containerd 1.6) turns CRI events off for good; the periodic relist goes on', async (t) => {
  const rt = new FakeRuntime();
  const stream = fakeStream();
  const pleg = createGenericPLEG({
    ...rt.plegOptions(),
    cache: createPodStatusCache(),
    relistPeriodMs: 20,
    subscribeContainerEvents: stream.subscribe,
  });
  t.after(() => pleg.stop());
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));
  pleg.start();
  const unimplemented = new CriError(
    'KTS_ERR_CRI_UNIMPLEMENTED',
    'GetContainerEvents',
    'UNIMPLEMENTED: not implemented',
    { grpcCode: 12 },
  );
  stream.last().onError(unimplemented);
  assert.equal(pleg.criEventsState?.(), 'unsupported');
  rt.setContainer('u1', 'c1', 'running');
  await until(() => events.length === 1);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(stream.subs.length, 1, 'no resubscription after Unimplemented');
});

test('a failed stream resubscribes with back-off, and stop() cancels it', async () => {
  const rt = new FakeRuntime();
  const stream = fakeStream();
  const timers: { fn: () => void; ms: number }[] = [];
  const clock = {
    now: () => Date.now(),
    setTimeout: (fn: () => void, ms: number) => {
      timers.push({ fn, ms });
      return { cancel() {} };
    },
  };
  const pleg = createGenericPLEG({
    ...rt.plegOptions(),
    cache: createPodStatusCache(),
    clock,
    subscribeContainerEvents: stream.subscribe,
  });
  pleg.start();
  const unavailable = () =>
    new CriError('KTS_ERR_CRI_UNAVAILABLE', 'GetContainerEvents', 'UNAVAILABLE: runtime restarting', { grpcCode: 14 });
  stream.last().onError(unavailable());
  assert.equal(pleg.criEventsState?.(), 'retrying');
  const retry1 = timers.at(-1)!;
  assert.equal(retry1.ms, 1000);
  retry1.fn();
  assert.equal(stream.subs.length, 2);
  stream.last().onError(unavailable());
  assert.equal(timers.at(-1)!.ms, 2000, 'back-off doubles');
  pleg.stop();
  timers.at(-1)!.fn();
  assert.equal(stream.subs.length, 2, 'no resubscription after stop');
  assert.equal(pleg.criEventsState?.(), 'stopped');
});

/**
 * upstream evented.go processCRIEvents (after 1.35): a CONTAINER_STOPPED_EVENT asks for a relist of the
 * event's pod (RequestRelist(podUID) → relistPod), not of the node. Ours: the pod is inspected,
 * ContainerDied sent with the runtime's exit already in the cache, and no node-wide list is made.
 */
test('a stop event relists only its pod; the next full relist sends no second ContainerDied', async (t) => {
  const { rt, stream, pleg, events, cache, counter } = await withRunningC1(t);
  const listsBefore = counter.lists;

  rt.setContainer('u1', 'c1', 'exited');
  stream.last().onEvent({ ...stream.stopped('c1'), podSandboxStatus: sandboxOf('u1') });
  await until(() => events.some((e) => e.type === 'ContainerDied'));
  assert.equal(counter.lists, listsBefore, 'no node-wide list');
  assert.equal(cache.get('u1')?.status?.containerStatuses[0]?.state, 'exited');

  await pleg.relist();
  assert.deepEqual(
    events.map((e) => `${e.data}/${e.type}`),
    ['c1/ContainerStarted', 'c1/ContainerDied'],
  );
});

test('a stop event for a pod the PLEG has not seen, or without a sandbox, relists the node', async (t) => {
  const rt = new FakeRuntime();
  const stream = fakeStream();
  const { pleg, counter } = countingPleg(rt, stream);
  t.after(() => pleg.stop());
  pleg.start();
  await until(() => counter.lists === 1);
  stream.last().onEvent({ ...stream.stopped('c9'), podSandboxStatus: sandboxOf('u9') });
  await until(() => counter.lists === 2);
  stream.last().onEvent(stream.stopped('c9'));
  await until(() => counter.lists === 3);
});
