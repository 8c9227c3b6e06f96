/**
 * The pod worker state machine, transition by transition, on a recording syncer (no runtime).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { EDGES, HANDLERS, createPodWorkers, effectiveGracePeriod, isAllowedEdge } from '../../src/podworkers/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { RecordingSyncer, gate, orphan, pod, settle, setup, stoppedStatus, tick } from './recording-syncer.js';

// ---- the table itself ---------------------------------------------------------------------------

test('every state declares its edges; only declared edges are allowed', () => {
  assert.deepEqual(EDGES, {
    syncing: ['syncing', 'terminating'],
    terminating: ['terminating', 'terminated', 'finished'],
    terminated: ['terminated', 'finished'],
    finished: [],
  });
  assert.equal(isAllowedEdge('syncing', 'terminating'), true);
  assert.equal(isAllowedEdge('syncing', 'terminated'), false, 'no skipping termination');
  assert.equal(isAllowedEdge('terminated', 'syncing'), false, 'never back to syncing');
  assert.equal(isAllowedEdge('finished', 'syncing'), false);
  assert.deepEqual(Object.keys(HANDLERS).sort(), ['finished', 'syncing', 'terminated', 'terminating']);
});

test('the handlers decide without side effects', () => {
  const view = { state: 'syncing' as const, pod: pod('a', 10), gracePeriod: undefined, orphan: false };
  assert.deepEqual(HANDLERS.syncing.onUpdate(view, { updateType: 'update', pod: pod('a', 10) }), {
    kind: 'accept',
    to: 'syncing',
    preempt: false,
    cancelsRestart: false,
  });
  assert.deepEqual(HANDLERS.syncing.onUpdate(view, { updateType: 'kill', pod: pod('a', 10) }), {
    kind: 'accept',
    to: 'terminating',
    cause: 'removed',
    gracePeriod: 10,
    preempt: true,
    cancelsRestart: true,
  });
  assert.equal(
    (
      HANDLERS.syncing.onUpdate(view, { updateType: 'kill', pod: pod('a', 10), killPodOptions: { evict: true } }) as {
        cause: string;
      }
    ).cause,
    'evicted',
  );
  assert.equal(
    (
      HANDLERS.syncing.onUpdate(view, { updateType: 'update', pod: pod('a', 10, { deletionGrace: 4 }) }) as {
        cause: string;
        gracePeriod: number;
      }
    ).gracePeriod,
    4,
  );
  assert.equal(
    (
      HANDLERS.syncing.onUpdate(view, { updateType: 'update', pod: pod('a', 10, { phase: 'Failed' }) }) as {
        cause: string;
      }
    ).cause,
    'terminal-phase',
  );
  assert.deepEqual(HANDLERS.syncing.onUpdate(view, { updateType: 'sync', runningPod: orphan('a') }), {
    kind: 'ignore',
    why: 'runtime pods can only be killed',
  });
  assert.deepEqual(HANDLERS.syncing.onWorkDone(view, { state: 'syncing', isTerminal: true }), {
    to: 'terminating',
    cause: 'completed',
    gracePeriod: 10,
  });
  const term = { state: 'terminating' as const, pod: pod('a', 10), gracePeriod: 10, orphan: false };
  assert.deepEqual(HANDLERS.terminating.onUpdate(term, { updateType: 'create', pod: pod('a') }), {
    kind: 'restart-requested',
  });
  assert.equal(
    (
      HANDLERS.terminating.onUpdate(term, {
        updateType: 'kill',
        pod: pod('a'),
        killPodOptions: { gracePeriodSeconds: 2 },
      }) as { preempt: boolean }
    ).preempt,
    true,
  );
  assert.equal(
    (
      HANDLERS.terminating.onUpdate(term, {
        updateType: 'kill',
        pod: pod('a'),
        killPodOptions: { gracePeriodSeconds: 20 },
      }) as { preempt: boolean }
    ).preempt,
    false,
  );
  assert.deepEqual(HANDLERS.terminating.onWorkDone({ ...term, orphan: true }, { state: 'terminating' }), {
    to: 'finished',
  });
  assert.deepEqual(HANDLERS.terminated.onWorkDone({ ...term, state: 'terminated' }, { state: 'terminated' }), {
    to: 'finished',
  });
  assert.deepEqual(
    HANDLERS.finished.onUpdate({ ...term, state: 'finished' }, { updateType: 'create', pod: pod('a') }),
    { kind: 'new-incarnation' },
  );
  assert.equal(
    HANDLERS.finished.onUpdate({ ...term, state: 'finished' }, { updateType: 'sync', pod: pod('a') }).kind,
    'ignore',
  );
});

test('grace period: deletion request, kill option or pod spec, whichever is shortest, never below 1 s', () => {
  assert.deepEqual(effectiveGracePeriod(undefined, pod('a', 30), undefined), { gracePeriod: 30, shortened: false });
  assert.deepEqual(effectiveGracePeriod(undefined, pod('a', 30, { deletionGrace: 10 }), undefined), {
    gracePeriod: 10,
    shortened: false,
  });
  assert.deepEqual(effectiveGracePeriod(undefined, pod('a', 30, { deletionGrace: 10 }), { gracePeriodSeconds: 5 }), {
    gracePeriod: 5,
    shortened: false,
  });
  assert.deepEqual(effectiveGracePeriod(undefined, pod('a', 30), { gracePeriodSeconds: 0 }), {
    gracePeriod: 1,
    shortened: false,
  });
  assert.deepEqual(
    effectiveGracePeriod(10, pod('a', 30, { deletionGrace: 20 }), undefined),
    { gracePeriod: 10, shortened: false },
    'only ever shrinks',
  );
  assert.deepEqual(effectiveGracePeriod(60, pod('a', 30), { gracePeriodSeconds: 10 }), {
    gracePeriod: 10,
    shortened: true,
  });
  assert.deepEqual(effectiveGracePeriod(10, pod('a', 30), { gracePeriodSeconds: 10 }), {
    gracePeriod: 10,
    shortened: false,
  });
  assert.deepEqual(effectiveGracePeriod(undefined, pod('a', 0), undefined), { gracePeriod: 1, shortened: false });
});

// ---- syncing ------------------------------------------------------------------------------------

test('syncing → syncing: updates arriving while busy are coalesced, a pending create stays a create', async () => {
  const { syncer, workers, done } = setup();
  const g = gate();
  syncer.syncGate = g.promise;
  workers.updatePod({ updateType: 'create', pod: pod('a') });
  await tick();
  workers.updatePod({ updateType: 'update', pod: pod('a') });
  workers.updatePod({ updateType: 'sync', pod: pod('a') });
  g.open();
  await settle(workers);
  const g2 = gate();
  syncer.syncGate = g2.promise;
  workers.updatePod({ updateType: 'sync', pod: pod('a') });
  await tick();
  workers.updatePod({ updateType: 'create', pod: pod('a') });
  workers.updatePod({ updateType: 'update', pod: pod('a') });
  g2.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:a', 'sync:sync:a', 'sync:sync:a', 'sync:create:a']);
  assert.equal(workers.isPodTerminationRequested('a'), false);
  assert.equal(workers.couldHaveRunningContainers('a'), true);
});

test('syncing → terminating (removed) → terminated → finished, with the pod grace period', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('a', 7) });
  await settle(workers);
  workers.updatePod({ updateType: 'kill', pod: pod('a', 7) });
  assert.equal(workers.isPodTerminationRequested('a'), true);
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:a', 'terminating:a:7', 'terminated:a']);
  assert.equal(workers.couldHaveRunningContainers('a'), false);
  assert.equal(workers.isPodKnownTerminated('a'), true);
});

test('terminated: the cleanup never gets a status observed before the kill ended', async () => {
  const { syncer, workers, cache, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('z', 2) });
  await settle(workers);
  cache.set(
    'z',
    {
      uid: 'z',
      name: 'stale',
      namespace: 'default',
      ips: [],
      sandboxStatuses: [],
      containerStatuses: [],
      timestamp: new Date(),
    },
    undefined,
    Date.now() - 1000,
  );
  workers.updatePod({ updateType: 'kill', pod: pod('z', 2) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.terminatedStatuses, [undefined]);
});

/**
 * The kill's own read after stopping everything is observed after the kill: the cleanup takes it
 * instead of reading the runtime again (issue 30).
 */
test('terminated: the cleanup gets the status the kill read after stopping', async () => {
  const { syncer, workers, done } = setup();
  const stopped = { ...stoppedStatus('s'), name: 'stopped' };
  syncer.stoppedStatus = stopped;
  workers.updatePod({ updateType: 'create', pod: pod('s', 2) });
  await settle(workers);
  workers.updatePod({ updateType: 'kill', pod: pod('s', 2) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.of('s'), ['sync:create:s', 'terminating:s:2', 'terminated:s']);
  assert.deepEqual(syncer.terminatedStatuses, [stopped]);
});

/**
 * upstream's kill acts on a cached status observed after the last sync; without one it waits for
 * the next relist, where ours has the syncer read one at once (undefined). A failed or cancelled
 * sync counts as a sync: it may have created containers a status observed before its end misses.
 */
test('terminating: the kill gets the cached status only when observed after the last sync ended', async () => {
  const { syncer, workers, cache, done } = setup({ fresh: false });
  const known = { ...stoppedStatus('k'), name: 'known' };
  cache.set('k', known, undefined, Date.now());
  syncer.failSyncs = 1;
  workers.updatePod({ updateType: 'create', pod: pod('k', 2) });
  await settle(workers);
  workers.updatePod({ updateType: 'kill', pod: pod('k', 2) });
  await settle(workers);
  assert.deepEqual(syncer.terminatingStatuses, [undefined], 'the cache predates the failed sync');

  cache.updateTime(Date.now());
  workers.updatePod({ updateType: 'create', pod: pod('j', 2) });
  await settle(workers);
  await tick(2);
  cache.set('j', known, undefined, Date.now());
  workers.updatePod({ updateType: 'kill', pod: pod('j', 2) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.terminatingStatuses, [undefined, known]);
});

test('syncing → terminating on deletion: deletionGracePeriodSeconds wins over the spec', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('a', 30) });
  await settle(workers);
  workers.updatePod({ updateType: 'update', pod: pod('a', 30, { deletionGrace: 3 }) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:a', 'terminating:a:3', 'terminated:a']);
});

test('syncing → terminating when the API reports a terminal phase', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('a', 5) });
  await settle(workers);
  workers.updatePod({ updateType: 'update', pod: pod('a', 5, { phase: 'Succeeded' }) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:a', 'terminating:a:5', 'terminated:a']);
});

test('syncing → terminating when syncPod reports the pod terminal (completed naturally)', async () => {
  const { syncer, workers, done } = setup();
  syncer.terminal = true;
  workers.updatePod({ updateType: 'create', pod: pod('d', 3) });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:d', 'terminating:d:3', 'terminated:d']);
});

test('syncing → terminating by eviction: status func applied, grace override, caller told when stopped', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('e', 30) });
  await settle(workers);
  let stopped = false;
  const evicted = workers
    .terminatePodAbnormally(pod('e', 30), {
      evict: true,
      gracePeriodSeconds: 2,
      statusFn: (s) => {
        s.phase = 'Failed';
        s.reason = 'Evicted';
        s.message = 'low on memory';
      },
    })
    .then(() => {
      stopped = true;
    });
  await evicted;
  done();
  assert.equal(stopped, true);
  assert.ok(syncer.calls.includes('terminating:e:2'));
  assert.deepEqual(syncer.statusSeen[0], { phase: 'Failed', reason: 'Evicted', message: 'low on memory' });
});

test('terminatePodAbnormally times out when the kill never completes', async () => {
  let fire: (() => void) | undefined;
  const clock = {
    now: () => Date.now(),
    setTimeout: (fn: () => void) => {
      fire = fn;
      return {
        cancel: () => {
          fire = undefined;
        },
      };
    },
  };
  const cache = createPodStatusCache();
  const syncer = new RecordingSyncer();
  const g = gate();
  syncer.killGates.push(g.promise);
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000, clock });
  const p = workers.terminatePodAbnormally(pod('t', 1), { evict: true });
  await tick();
  fire!();
  await assert.rejects(p, /timeout waiting to terminate pod/);
  g.open();
  await workers.idle();
});

test('syncing → terminating: an orphan (runtime pod) is killed through syncTerminatingRuntimePod and forgotten', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'sync', runningPod: orphan('o') });
  assert.equal(workers.couldHaveRunningContainers('o'), false, 'runtime pods can only be killed');
  workers.updatePod({ updateType: 'kill', runningPod: orphan('o') });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['terminating-runtime:o']);
  assert.deepEqual([...workers.syncKnownPods([]).keys()], []);
});

test('a kill preempts a sync waiting for a fresh status (no wait for the next relist)', async () => {
  const { syncer, workers, cache, done } = setup({ fresh: false });
  cache.updateTime(Date.now());
  workers.updatePod({ updateType: 'create', pod: pod('w', 4) });
  await settle(workers);
  // No relist happens from here on: this sync would wait for one forever...
  workers.updatePod({ updateType: 'sync', pod: pod('w', 4) });
  await tick();
  // ...and the kill must not.
  workers.updatePod({ updateType: 'kill', pod: pod('w', 4) });
  await Promise.race([
    workers.idle(),
    new Promise((_, rej) => setTimeout(() => rej(new Error('kill waited for a relist')), 2000)),
  ]);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:w', 'terminating:w:4', 'terminated:w']);
});

test('the next sync acts only on a status observed after the previous sync ended; postSync runs after that', async () => {
  const { syncer, workers, cache, done } = setup({ fresh: false });
  const status = (tag: string): PodRuntimeStatus => ({
    uid: 'n',
    name: tag,
    namespace: 'default',
    ips: [],
    sandboxStatuses: [],
    containerStatuses: [],
    timestamp: new Date(),
  });
  cache.set('n', status('before'), undefined, Date.now());
  const g = gate();
  syncer.syncGate = g.promise;
  let postSyncAt = 0;
  syncer.postSync = () => {
    postSyncAt = Date.now();
  };
  workers.updatePod({ updateType: 'create', pod: pod('n') });
  await tick();
  // A relist that ran while the sync was creating containers: it may predate them.
  cache.set('n', status('during'), undefined, Date.now());
  await tick();
  const endedAt = Date.now();
  g.open();
  await tick();
  assert.ok(postSyncAt >= endedAt, 'postSync after the sync ended');
  syncer.syncGate = undefined;
  syncer.postSync = undefined;
  workers.updatePod({ updateType: 'sync', pod: pod('n') });
  await tick(30);
  assert.equal(syncer.calls.length, 1, 'the status from during the sync is not fresh enough');
  cache.set('n', status('after'), undefined, Date.now());
  await settle(workers);
  done();
  assert.deepEqual(
    syncer.syncStatuses.map((s) => s?.name),
    ['before', 'after'],
  );
});

test('postSync waits until the clock reads later than the sync end (a millisecond clock; issue 30)', async () => {
  // The relist postSync starts must be newer than the sync, or the next sync waits for the
  // periodic relist: with a millisecond clock, "the same millisecond" is not newer.
  let now = 1000;
  const clock = {
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => {
      const t = setTimeout(fn, ms);
      return { cancel: () => clearTimeout(t) };
    },
  };
  const cache = createPodStatusCache();
  cache.updateTime(999);
  const syncer = new RecordingSyncer();
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000, clock });
  let postSyncAt: number | undefined;
  syncer.postSync = () => {
    postSyncAt = now;
  };
  workers.updatePod({ updateType: 'create', pod: pod('ms') });
  await tick(30);
  assert.deepEqual(syncer.calls, ['sync:create:ms']);
  assert.equal(postSyncAt, undefined, 'not while the clock still reads the sync end');
  now = 1001;
  await tick(30);
  assert.equal(postSyncAt, 1001);
  syncer.postSync = undefined;
});

test('a kill arriving during a running sync is never overwritten by later syncs', async () => {
  const { syncer, workers, done } = setup();
  const g = gate();
  syncer.syncGate = g.promise;
  workers.updatePod({ updateType: 'create', pod: pod('b') });
  await tick();
  workers.updatePod({ updateType: 'kill', pod: pod('b'), killPodOptions: { gracePeriodSeconds: 5 } });
  workers.updatePod({ updateType: 'sync', pod: pod('b') });
  workers.updatePod({ updateType: 'update', pod: pod('b') });
  g.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:b', 'terminating:b:5', 'terminated:b']);
});

test('a failed sync is retried after the back-off; a failed kill is retried by the worker itself', async () => {
  const { syncer, workers, done } = setup();
  syncer.failSyncs = 1;
  workers.updatePod({ updateType: 'create', pod: pod('r') });
  await settle(workers);
  await tick(40);
  assert.deepEqual(workers.takeDueForSync(), ['r'], 'due again after the back-off');
  syncer.failKills = 1;
  workers.updatePod({ updateType: 'kill', pod: pod('r', 2) });
  await settle(workers);
  await tick(60);
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:r', 'terminating:r:2', 'terminating:r:2', 'terminated:r']);
});

// ---- terminating --------------------------------------------------------------------------------

test('terminating → terminating: a shorter grace restarts the kill at once, without waiting for the first', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('c', 30) });
  await settle(workers);
  const first = gate();
  syncer.killGates.push(first.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('c', 30) });
  await tick();
  assert.deepEqual(syncer.calls.slice(1), ['terminating:c:30']);
  workers.updatePod({ updateType: 'update', pod: pod('c', 30, { deletionGrace: 2 }) });
  await tick();
  assert.deepEqual(
    syncer.calls.slice(1, 3),
    ['terminating:c:30', 'terminating:c:2'],
    'second kill issued while the first still runs',
  );
  assert.equal(syncer.killSignals[0]!.aborted, true, 'the first kill is told it was superseded');
  await tick();
  assert.equal(workers.isPodKnownTerminated('c'), true, 'terminated once the shorter kill returned');
  first.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:c', 'terminating:c:30', 'terminating:c:2', 'terminated:c']);
});

test('terminating → terminating: a longer grace changes nothing', async () => {
  const { syncer, workers, done } = setup();
  const first = gate();
  syncer.killGates.push(first.promise);
  workers.updatePod({ updateType: 'create', pod: pod('l', 10) });
  await settle(workers);
  workers.updatePod({ updateType: 'kill', pod: pod('l', 10) });
  await tick();
  workers.updatePod({ updateType: 'kill', pod: pod('l', 10), killPodOptions: { gracePeriodSeconds: 20 } });
  await tick();
  first.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:l', 'terminating:l:10', 'terminated:l']);
});

test('terminating: a create for the same UID is remembered and honoured once finished', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('s', 3) });
  await settle(workers);
  const g = gate();
  syncer.killGates.push(g.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('s', 3) });
  await tick();
  workers.updatePod({ updateType: 'create', pod: pod('s', 3) });
  assert.equal(workers.isPodTerminationRequested('s'), true, 'the old incarnation keeps terminating');
  g.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:s', 'terminating:s:3', 'terminated:s', 'sync:create:s']);
  assert.equal(workers.couldHaveRunningContainers('s'), true, 'running again');
});

test('terminating: a kill after the restart request cancels it', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('k', 3) });
  await settle(workers);
  const g = gate();
  syncer.killGates.push(g.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('k', 3) });
  await tick();
  workers.updatePod({ updateType: 'create', pod: pod('k', 3) });
  workers.updatePod({ updateType: 'kill', pod: pod('k', 3) });
  g.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:k', 'terminating:k:3', 'terminated:k']);
});

// ---- terminated and finished --------------------------------------------------------------------

test('terminated: runtime-only kills are ignored while cleanup runs; a first-seen terminal pod only cleans up', async () => {
  const cache = createPodStatusCache();
  cache.set(
    't',
    {
      uid: 't',
      name: 'p-t',
      namespace: 'default',
      ips: [],
      sandboxStatuses: [],
      containerStatuses: [],
      timestamp: new Date(),
    },
    undefined,
    Date.now(),
  );
  const { syncer, workers, done } = setup({ cache });
  workers.updatePod({ updateType: 'create', pod: pod('t', 3, { phase: 'Succeeded' }) });
  workers.updatePod({ updateType: 'kill', runningPod: orphan('t') });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['terminated:t'], 'no sync, no kill');
  assert.equal(workers.isPodKnownTerminated('t'), true);
});

test('finished: takes no more work; a kill is answered at once; a create starts a new incarnation', async () => {
  const { syncer, workers, done } = setup();
  syncer.terminal = true;
  workers.updatePod({ updateType: 'create', pod: pod('f', 3) });
  await settle(workers);
  assert.equal(syncer.calls.length, 3);
  workers.updatePod({ updateType: 'sync', pod: pod('f') });
  workers.updatePod({ updateType: 'update', pod: pod('f') });
  let answered = false;
  workers.updatePod({
    updateType: 'kill',
    pod: pod('f'),
    killPodOptions: {
      onTerminated: () => {
        answered = true;
      },
    },
  });
  await settle(workers);
  assert.equal(syncer.calls.length, 3, 'a finished pod takes no more work');
  assert.equal(answered, true);
  syncer.terminal = false;
  workers.updatePod({ updateType: 'create', pod: pod('f') });
  await settle(workers);
  done();
  assert.equal(syncer.calls[3], 'sync:create:f', 'a create after termination finished starts a fresh worker');
});

// ---- housekeeping and static pods ---------------------------------------------------------------

test('syncKnownPods: forgets finished workers of pods gone, terminates syncing ones nobody killed', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('x', 2) });
  workers.updatePod({ updateType: 'create', pod: pod('y', 2) });
  await settle(workers);
  workers.updatePod({ updateType: 'kill', pod: pod('x', 2) });
  await settle(workers);
  const states = workers.syncKnownPods([]);
  assert.equal(states.has('x'), false, 'finished and not desired: forgotten');
  assert.equal(states.get('y'), 'terminating', 'not desired and still syncing: terminated');
  await settle(workers);
  done();
  assert.ok(syncer.calls.includes('terminating:y:2'));
  assert.deepEqual([...workers.syncKnownPods([]).keys()], []);
});

test('static pods: a new instance with the same full name starts only after the old one finished', async () => {
  const { syncer, workers, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('old', 1, { static: true, name: 'web' }) });
  await settle(workers);
  const g = gate();
  syncer.killGates.push(g.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('old', 1, { static: true, name: 'web' }) });
  workers.updatePod({ updateType: 'create', pod: pod('new', 1, { static: true, name: 'web' }) });
  await tick(40);
  assert.deepEqual(syncer.calls, ['sync:create:old', 'terminating:old:1'], 'the successor waits');
  g.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['sync:create:old', 'terminating:old:1', 'terminated:old', 'sync:create:new']);
});
