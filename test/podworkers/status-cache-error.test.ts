/**
 * A pod worker never syncs on a status it does not have (upstream podWorkerLoop: a cache entry
 * holding an error fails the sync with "error determining status" and the pod is retried with
 * back-off). Syncing on an empty status instead would make computePodActions create a second
 * sandbox beside the live one. Also ShouldPodContentBeRemoved (upstream pod_workers.go).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { createPodWorkers, type PodSyncer } from '../../src/podworkers/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';

const pod = (uid: string): Pod =>
  ({
    metadata: { name: `p-${uid}`, namespace: 'default', uid },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'a', image: 'x' }] },
  }) as Pod;
const status = (uid: string): PodRuntimeStatus => ({
  uid,
  name: `p-${uid}`,
  namespace: 'default',
  ips: [],
  sandboxStatuses: [],
  containerStatuses: [],
  timestamp: new Date(),
});
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

function setup() {
  const cache = createPodStatusCache();
  const synced: Array<PodRuntimeStatus | undefined> = [];
  const syncer: PodSyncer = {
    async syncPod(_ctx, _t, _p, s) {
      synced.push(s);
      return { isTerminal: false };
    },
    async syncTerminatingPod() {},
    async syncTerminatingRuntimePod() {},
    async syncTerminatedPod() {},
  };
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000, backOffMs: 20, terminationRetryMs: 20 });
  /** The syncLoop's sync tick (upstream getPodsToSync): retries come back through it. */
  const resync = async (ms = 120) => {
    for (let waited = 0; waited < ms; waited += 10) {
      await tick(10);
      for (const uid of workers.takeDueForSync()) workers.updatePod({ updateType: 'sync', pod: pod(uid) });
    }
  };
  return { cache, synced, workers, resync };
}

test('a cache entry holding an error fails the sync and is retried; the sync runs once a status is read', async () => {
  const { cache, synced, workers, resync } = setup();
  cache.set('a', undefined, new Error('rpc error: DeadlineExceeded'), Date.now() + 1);
  workers.updatePod({ updateType: 'create', pod: pod('a') });
  await resync(); // several 20 ms back-offs, each retried and failed again
  assert.equal(synced.length, 0, 'no sync on an unknown status');
  cache.set('a', status('a'), undefined, Date.now() + 1);
  await resync();
  assert.equal(synced.length, 1);
  assert.equal(synced[0]?.uid, 'a', 'the sync got the status read, not an empty one');
  await workers.idle();
});

test('shouldPodContentBeRemoved: evicted, or deleted and terminated; unknown pods once syncKnownPods has run', async () => {
  const { cache, workers } = setup();
  const t = () => cache.updateTime(Date.now() + 1);
  t();
  assert.equal(workers.shouldPodContentBeRemoved('nobody'), false, 'before the first syncKnownPods');
  workers.updatePod({ updateType: 'create', pod: pod('ev') });
  workers.updatePod({ updateType: 'create', pod: pod('del') });
  workers.updatePod({ updateType: 'create', pod: pod('live') });
  await tick();
  t();
  await workers.terminatePodAbnormally(pod('ev'), { evict: true, reason: 'Evicted' });
  const deleted = {
    ...pod('del'),
    metadata: { ...pod('del').metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 1 },
  } as Pod;
  workers.updatePod({ updateType: 'update', pod: deleted });
  for (let i = 0; i < 20 && !workers.isPodKnownTerminated('del'); i++) {
    await tick();
    t();
  }
  assert.equal(workers.shouldPodContentBeRemoved('ev'), true, 'evicted');
  assert.equal(workers.shouldPodContentBeRemoved('del'), true, 'deleted and terminated');
  assert.equal(workers.shouldPodContentBeRemoved('live'), false);
  workers.syncKnownPods([pod('live'), pod('ev'), deleted]);
  assert.equal(
    workers.shouldPodContentBeRemoved('nobody'),
    true,
    'after syncKnownPods, an unknown pod has nothing to keep',
  );
  await workers.idle();
});

test('a kill during a sync cancels it: the kill starts within milliseconds, and the cancelled sync is no failure', async () => {
  const cache = createPodStatusCache();
  cache.updateTime(Date.now() + 1);
  const calls: string[] = [];
  let syncStarted!: () => void;
  const inSync = new Promise<void>((r) => {
    syncStarted = r;
  });
  let killAt = 0;
  const syncer: PodSyncer = {
    // A sync stuck in a CRI call that honours the signal (as the CRI client bound to it does).
    async syncPod(ctx) {
      calls.push('sync');
      syncStarted();
      await new Promise((_, reject) => {
        const t = setTimeout(() => reject(new Error('sync timed out')), 10_000);
        ctx.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(new Error('cancelled'));
          },
          { once: true },
        );
      });
      return { isTerminal: false };
    },
    async syncTerminatingPod() {
      calls.push(`terminating after ${Date.now() - killAt} ms`);
    },
    async syncTerminatingRuntimePod() {},
    async syncTerminatedPod() {
      calls.push('terminated');
    },
  };
  const workers = createPodWorkers({
    syncer,
    cache,
    resyncIntervalMs: 60_000,
    backOffMs: 60_000,
    terminationRetryMs: 20,
  });
  workers.updatePod({ updateType: 'create', pod: pod('k') });
  await inSync;
  killAt = Date.now();
  workers.updatePod({ updateType: 'kill', pod: pod('k') });
  for (let i = 0; i < 100 && !calls.includes('terminated'); i++) await tick(10);
  assert.equal(calls[0], 'sync');
  const ms = Number(/terminating after (\d+) ms/.exec(calls[1] ?? '')?.[1]);
  assert.ok(ms < 500, `the kill started ${ms} ms after it was asked (not after the sync's 10 s, nor a 60 s back-off)`);
  assert.equal(calls[2], 'terminated');
  await workers.idle();
});
