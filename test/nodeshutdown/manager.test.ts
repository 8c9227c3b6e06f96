import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import {
  createNodeShutdownManager,
  podPriority,
  shutdownGroups,
  type ShutdownTrigger,
} from '../../src/nodeshutdown/index.js';

const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name, namespace: 'ns', uid: name },
  spec: { containers: [], terminationGracePeriodSeconds: 30, ...spec },
});

test('priority: spec.priority, else the built-in critical classes, else 0', () => {
  assert.equal(podPriority(pod('a', { priority: 5 })), 5);
  assert.equal(podPriority(pod('b', { priorityClassName: 'system-node-critical' })), 2_000_001_000);
  assert.equal(podPriority(pod('c', { priorityClassName: 'system-cluster-critical' })), 2_000_000_000);
  assert.equal(podPriority(pod('d', { priorityClassName: 'custom' })), 0);
  const g = shutdownGroups(
    [pod('a'), pod('b', { priorityClassName: 'system-node-critical' }), pod('c', { priority: 2_000_000_000 })],
    30_000,
    10_000,
  );
  assert.deepEqual(
    g.map((x) => [x.critical, x.budgetMs, x.pods.map((p) => p.metadata!.name)]),
    [
      [false, 20_000, ['a']],
      [true, 10_000, ['b', 'c']],
    ],
  );
});

test('a trigger kills non-critical pods first, then critical ones, each within its budget', async () => {
  let fire: (why: string) => void = () => undefined;
  const trigger: ShutdownTrigger = { start: (cb) => (fire = cb), stop: () => undefined };
  const log: string[] = [];
  const t0 = Date.now();
  const m = createNodeShutdownManager({
    shutdownGracePeriodMs: 1500,
    shutdownGracePeriodCriticalPodsMs: 500,
    trigger,
    activePods: () => [
      pod('crit', { priorityClassName: 'system-node-critical', terminationGracePeriodSeconds: 0 }),
      pod('slow'),
      pod('quick', { terminationGracePeriodSeconds: 0 }),
    ],
    killPod: async (p, grace, message) => {
      log.push(`${p.metadata!.name}:${grace}:${Math.round((Date.now() - t0) / 100)}`);
      assert.match(message, /imminent node shutdown/);
      if (p.metadata!.name === 'slow') await new Promise(() => undefined); // never finishes
    },
  });
  m.start();
  assert.equal(m.shuttingDown(), false);
  assert.equal(m.admit(pod('new')).admit, true);
  fire('test');
  assert.equal(m.shuttingDown(), true);
  assert.deepEqual(m.admit(pod('new')), {
    admit: false,
    reason: 'NodeShutdown',
    message: 'Pod was rejected as the node is shutting down.',
  });
  await m.processShutdownEvent('again: same run');
  const ms = Date.now() - t0;
  // slow's grace is capped at the 1 s non-critical budget; crit starts after that budget ran out.
  assert.deepEqual(
    log.map((l) => l.split(':').slice(0, 2).join(':')),
    ['slow:1', 'quick:0', 'crit:0'],
  );
  assert.ok(Number(log[2]!.split(':')[2]) >= 9, `critical pods after the non-critical budget: ${log.join(' ')}`);
  assert.ok(ms < 1500 + 500, `within shutdownGracePeriod: ${ms} ms`);
});

test('shutdownGracePeriod 0 disables the manager', () => {
  let started = false;
  const m = createNodeShutdownManager({
    shutdownGracePeriodMs: 0,
    shutdownGracePeriodCriticalPodsMs: 0,
    trigger: { start: () => (started = true), stop: () => undefined },
    activePods: () => [],
    killPod: async () => undefined,
  });
  m.start();
  assert.equal(started, false);
});
