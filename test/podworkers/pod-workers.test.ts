import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createPodWorkers, type PodSyncer, type UpdateType } from '../../src/podworkers/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';

function pod(uid: string, grace = 30): Pod {
  return { metadata: { name: `p-${uid}`, namespace: 'default', uid }, spec: { terminationGracePeriodSeconds: grace, containers: [{ name: 'a', image: 'x' }] } } as Pod;
}

class RecordingSyncer implements PodSyncer {
  calls: string[] = [];
  terminal = false;
  gate: Promise<void> | undefined;
  async syncPod(t: UpdateType, p: Pod) {
    this.calls.push(`sync:${t}:${p.metadata!.uid}`);
    await this.gate;
    return { isTerminal: this.terminal };
  }
  async syncTerminatingPod(p: Pod, _s: unknown, grace: number) { this.calls.push(`terminating:${p.metadata!.uid}:${grace}`); }
  async syncTerminatingRuntimePod(r: { uid: string }) { this.calls.push(`terminating-runtime:${r.uid}`); }
  async syncTerminatedPod(p: Pod) { this.calls.push(`terminated:${p.metadata!.uid}`); }
}

function setup() {
  const cache = createPodStatusCache();
  const syncer = new RecordingSyncer();
  // A fresh cache time so getNewerThan never blocks in these tests.
  const tick = setInterval(() => cache.updateTime(Date.now()), 2);
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000 });
  return { syncer, workers, done: () => clearInterval(tick) };
}

test('create → sync; kill → terminating → terminated with the pod grace period', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('a', 7) });
  await workers.idle();
  workers.updatePod({ updateType: 'kill', pod: pod('a', 7) });
  await workers.idle();
  done();
  assert.deepEqual(syncer.calls, ['sync:create:a', 'terminating:a:7', 'terminated:a']);
  assert.equal(workers.couldHaveRunningContainers('a'), false);
});

test('updates arriving while busy are coalesced and a kill is never overwritten by a sync', async () => {
  const { syncer, workers, done } = setup();
  let release!: () => void;
  syncer.gate = new Promise((r) => { release = r; });
  workers.updatePod({ updateType: 'create', pod: pod('b') });
  await new Promise((r) => setTimeout(r, 20));
  workers.updatePod({ updateType: 'kill', pod: pod('b'), gracePeriodSeconds: 5 });
  workers.updatePod({ updateType: 'sync', pod: pod('b') });
  workers.updatePod({ updateType: 'update', pod: pod('b') });
  release();
  await workers.idle();
  done();
  assert.deepEqual(syncer.calls, ['sync:create:b', 'terminating:b:5', 'terminated:b']);
});

test('the shortest grace period wins', async () => {
  const { syncer, workers, done } = setup();
  let release!: () => void;
  syncer.gate = new Promise((r) => { release = r; });
  workers.updatePod({ updateType: 'create', pod: pod('c', 30) });
  await new Promise((r) => setTimeout(r, 20));
  workers.updatePod({ updateType: 'kill', pod: pod('c', 30), gracePeriodSeconds: 10 });
  workers.updatePod({ updateType: 'kill', pod: pod('c', 30), gracePeriodSeconds: 20 });
  release();
  await workers.idle();
  done();
  assert.ok(syncer.calls.includes('terminating:c:10'));
});

test('a pod reaching a terminal phase is terminated; a later create starts it afresh', async () => {
  const { syncer, workers, done } = setup();
  syncer.terminal = true;
  workers.updatePod({ updateType: 'create', pod: pod('d', 3) });
  await workers.idle();
  assert.deepEqual(syncer.calls, ['sync:create:d', 'terminating:d:3', 'terminated:d']);
  workers.updatePod({ updateType: 'sync', pod: pod('d') });
  await workers.idle();
  assert.equal(syncer.calls.length, 3, 'a finished pod takes no more work');
  syncer.terminal = false;
  workers.updatePod({ updateType: 'create', pod: pod('d') });
  await workers.idle();
  assert.equal(syncer.calls[3], 'sync:create:d', 'a create after termination finished starts a fresh worker');
  done();
});

test('orphans (runtime-only pods) are killed through syncTerminatingRuntimePod', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'kill', runningPod: { uid: 'o', name: 'x', namespace: 'y', containers: [], sandboxes: [] } });
  await workers.idle();
  done();
  assert.deepEqual(syncer.calls, ['terminating-runtime:o']);
  assert.deepEqual([...workers.syncKnownPods([]).keys()], []);
});

test('a kill does not wait for the next relist when a sync is waiting for a fresh status', async () => {
  const cache = createPodStatusCache();
  const syncer = new RecordingSyncer();
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000 });
  cache.updateTime(Date.now());
  workers.updatePod({ updateType: 'create', pod: pod('w', 4) });
  await workers.idle();
  // No relist happens from here on: this sync would wait for one forever...
  workers.updatePod({ updateType: 'sync', pod: pod('w', 4) });
  await new Promise((r) => setTimeout(r, 20));
  // ...and the kill must not.
  workers.updatePod({ updateType: 'kill', pod: pod('w', 4) });
  await Promise.race([workers.idle(), new Promise((_, rej) => setTimeout(() => rej(new Error('kill waited for a relist')), 2000))]);
  assert.deepEqual(syncer.calls, ['sync:create:w', 'terminating:w:4', 'terminated:w']);
});
