import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGenericPLEG, createPodStatusCache, type PodLifecycleEvent } from '../../src/pleg/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

test('relist emits events, inspects only changed pods and fills the cache', async () => {
  const rt = new FakeRuntime();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({ ...rt.plegOptions(), cache });
  const events: PodLifecycleEvent[] = [];
  pleg.watch((e) => events.push(e));

  rt.setContainer('u1', 'c1', 'running');
  await pleg.relist();
  assert.deepEqual(events.map((e) => `${e.id}/${e.data}/${e.type}`), ['u1/c1/ContainerStarted']);
  assert.equal(cache.get('u1')?.status?.containerStatuses[0]?.state, 'running');

  events.length = 0;
  await pleg.relist();
  assert.equal(events.length, 0, 'no change, no event');

  rt.setContainer('u1', 'c1', 'exited');
  rt.setContainer('u2', 'c2', 'created');
  await pleg.relist();
  assert.deepEqual(events.map((e) => `${e.id}/${e.type}`), ['u1/ContainerDied'], 'ContainerChanged is not emitted');
  assert.ok(cache.get('u2'), 'a changed pod is still inspected');

  events.length = 0;
  rt.setContainer('u1', 'c1', undefined);
  await pleg.relist();
  assert.deepEqual(events.map((e) => e.type), ['ContainerRemoved']);
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
  const p = cache.getNewerThan('u9', t).then((v) => { resolved = true; return v; });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(resolved, false);
  await pleg.relist();
  const v = await p;
  assert.equal(v.status, undefined);
  assert.ok(v.modified > t - 1);
});
