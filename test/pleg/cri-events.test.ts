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

test('a CRI container event triggers a relist at once (periodic relist an hour away)', async (t) => {
  const rt = new FakeRuntime();
  const stream = fakeStream();
  const pleg = createGenericPLEG({
    ...rt.plegOptions(),
    cache: createPodStatusCache(),
    relistPeriodMs: HOUR,
    subscribeContainerEvents: stream.subscribe,
  });
  t.after(() => pleg.stop());
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));
  rt.setContainer('u1', 'c1', 'running');
  pleg.start();
  await until(() => events.length === 1);
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
