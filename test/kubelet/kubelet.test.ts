import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import type { PodUpdate } from '../../src/podconfig/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { createGenericPLEG, createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';

function pod(uid: string): Pod {
  return { metadata: { name: `p-${uid}`, namespace: 'default', uid, annotations: { 'kubernetes.io/config.source': 'file' } }, spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'a', image: 'x' }] } } as Pod;
}

class Updates implements AsyncIterable<PodUpdate> {
  private queue: PodUpdate[] = [];
  private wake: (() => void) | undefined;
  push(u: PodUpdate) { this.queue.push(u); this.wake?.(); }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      while (this.queue.length) yield this.queue.shift()!;
      await new Promise<void>((r) => { this.wake = r; });
    }
  }
}

async function until(what: string, fn: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function setup(maxPods = 110) {
  const runtime = new FakeRuntime();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({ runtime, cache, relistPeriodMs: 20 });
  const statusManager = createStatusManager();
  const kubelet = new Kubelet({
    nodeName: 'n', hostIP: '192.0.2.1', rootDir: mkdtempSync(join(tmpdir(), 'kts-kubelet-')), maxPods, syncFrequencyMs: 60_000,
    runtime, pleg, cache, statusManager, sources: new Set(['file']), housekeepingPeriodMs: 30, syncPeriodMs: 20,
  });
  const updates = new Updates();
  const done = kubelet.run(updates);
  return { runtime, kubelet, updates, statusManager, stop: async () => { kubelet.stop(); await done; } };
}

test('ADD syncs the pod, REMOVE kills it with its grace period', async () => {
  const { runtime, updates, statusManager, stop } = setup();
  updates.push({ op: 'ADD', pods: [pod('a')], source: 'file' });
  await until('synced', () => runtime.synced.includes('a'));
  assert.equal(statusManager.getPodStatus('a')?.phase, 'Pending');
  runtime.setContainer('a', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('a')?.phase === 'Running');
  updates.push({ op: 'REMOVE', pods: [pod('a')], source: 'file' });
  await until('killed', () => runtime.killed.some((k) => k.uid === 'a'));
  assert.equal(runtime.killed.find((k) => k.uid === 'a')?.grace, 2);
  await stop();
});

test('housekeeping kills orphans only once every source has been seen', async () => {
  const { runtime, updates, stop } = setup();
  runtime.setContainer('orphan', 'c9', 'running');
  runtime.pods[0]!.sandboxes.push({ id: 's9', ready: true, attempt: 0, createdAt: 1n });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(runtime.killed.length, 0, 'sources not ready: nothing is killed (adoption)');
  updates.push({ op: 'ADD', pods: [pod('b')], source: 'file' });
  await until('orphan killed', () => runtime.killed.some((k) => k.uid === 'orphan'));
  assert.ok(!runtime.killed.some((k) => k.uid === 'b'), 'desired pod untouched');
  await stop();
});

test('admission rejects pods beyond maxPods with OutOfpods', async () => {
  const { runtime, updates, statusManager, stop } = setup(1);
  updates.push({ op: 'ADD', pods: [pod('x'), pod('y')], source: 'file' });
  await until('first synced', () => runtime.synced.includes('x'));
  await until('second rejected', () => statusManager.getPodStatus('y')?.reason === 'OutOfpods');
  assert.equal(statusManager.getPodStatus('y')?.phase, 'Failed');
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!runtime.synced.includes('y'));
  await stop();
});
