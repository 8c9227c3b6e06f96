/**
 * The pod status cache's GetNewerThan (upstream kubecontainer.cache): a waiter resolves when its
 * own pod's entry is newer than asked, or when a relist's updateTime passes its minimum; other
 * pods' entries never resolve it. Waiters are kept per pod (issue 30: a set() used to scan every
 * waiting worker of the node).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { createPodStatusCache } from '../../src/pleg/index.js';

const status = (uid: string): PodRuntimeStatus => ({
  uid,
  name: `p-${uid}`,
  namespace: 'default',
  ips: [],
  sandboxStatuses: [],
  containerStatuses: [],
  timestamp: new Date(0),
});

/** Whether a promise has settled after the microtasks queued so far ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

test('set() resolves only the waiters of its own pod, newer than their minimum', async () => {
  const cache = createPodStatusCache();
  const a = cache.getNewerThan('a', 10);
  const b = cache.getNewerThan('b', 10);
  cache.set('a', status('a'), undefined, 5); // not newer than 10
  assert.equal(await settled(a), false);
  cache.set('a', status('a'), undefined, 11);
  assert.equal((await a).status?.uid, 'a');
  assert.equal((await a).modified, 11);
  assert.equal(await settled(b), false, "a's entry must not resolve b's waiter");
});

test('updateTime resolves every waiter whose minimum it passes, with the global time', async () => {
  const cache = createPodStatusCache();
  const waiters = Array.from({ length: 250 }, (_, i) => cache.getNewerThan(`p${i}`, i < 100 ? 10 : 30));
  cache.updateTime(20);
  const first = await Promise.all(waiters.slice(0, 100));
  assert.ok(first.every((e) => e.status === undefined && e.modified === 20));
  assert.equal(await settled(waiters[100]!), false);
  cache.updateTime(31);
  assert.ok((await Promise.all(waiters.slice(100))).every((e) => e.modified === 31));
});

test('an aborted wait resolves with what the cache holds and is forgotten', async () => {
  const cache = createPodStatusCache();
  cache.set('a', status('a'), undefined, 3);
  const ac = new AbortController();
  const a = cache.getNewerThan('a', 10, ac.signal);
  const again = cache.getNewerThan('a', 10);
  ac.abort();
  assert.equal((await a).modified, 3);
  assert.equal(await settled(again), false, 'the other waiter of the pod still waits');
  cache.set('a', status('a'), undefined, 12);
  assert.equal((await again).modified, 12);
});

test('a status already newer than asked is returned at once', async () => {
  const cache = createPodStatusCache();
  cache.set('a', status('a'), undefined, 7);
  assert.equal((await cache.getNewerThan('a', 6)).modified, 7);
});
