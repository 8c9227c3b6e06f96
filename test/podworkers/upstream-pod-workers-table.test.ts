/**
 * Upstream's pod worker tests (pkg/kubelet/pod_workers_test.go) as our table tests: the same
 * cases, asserted on what the syncer is asked to do and on the worker queries, not on upstream's
 * internal podSyncStatus fields. Where our behaviour differs on purpose, the case says so in
 * `ours` (and docs/differences.md says why).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { RunningPod } from '../../src/kuberuntime/types.js';
import {
  createPodWorkers,
  effectiveGracePeriod,
  killPodNow,
  type PodWorkers,
  type UpdatePodOptions,
} from '../../src/podworkers/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { RecordingSyncer, gate, pod, settle, setup, stoppedStatus, until } from './recording-syncer.js';

type Harness = ReturnType<typeof setup>;

const runtimePod = (uid: string, name = 'orphaned-pod'): RunningPod => ({
  uid,
  name,
  namespace: 'ns',
  containers: [],
  sandboxes: [],
});

/** What the worker queries say about one UID. */
function queries(workers: PodWorkers, uid: string) {
  return {
    terminationRequested: workers.isPodTerminationRequested(uid),
    knownTerminated: workers.isPodKnownTerminated(uid),
    couldHaveRunning: workers.couldHaveRunningContainers(uid),
  };
}

// ---- TestUpdatePod ------------------------------------------------------------------------------

interface UpdatePodCase {
  name: string;
  update: UpdatePodOptions;
  /** The runtime status cached before the update (upstream runtimeStatus). */
  cached?: boolean;
  /** Runs before the update; may return a function run right after it (upstream afterUpdateFn). */
  prepare?: (h: Harness) => Promise<(() => void) | void>;
  /** The worker queries right after updatePod returned, before any work ran (upstream expectBeforeWorker). */
  before?: Partial<ReturnType<typeof queries>>;
  /** The syncer calls for the UID once every worker is idle. */
  calls: string[];
  knownTerminated: boolean;
  /** Where we deliberately differ from upstream's expectation. */
  ours?: string;
}

/** upstream newNamedPod("1", "ns", "running-pod", false) */
const namedPod = () => pod('1', 30, { name: 'running-pod', namespace: 'ns' });

/** The running pod created and synced. */
async function createRunningPod({ workers }: Harness): Promise<void> {
  workers.updatePod({ updateType: 'create', pod: namedPod() });
  await settle(workers);
}

// upstream pkg/kubelet/pod_workers_test.go TestUpdatePod
const updatePodCases: UpdatePodCase[] = [
  {
    name: 'a new pod is recorded and started',
    update: { updateType: 'create', pod: namedPod() },
    before: { terminationRequested: false, knownTerminated: false, couldHaveRunning: true },
    calls: ['sync:create:1'],
    knownTerminated: false,
  },
  {
    name: 'a new pod is recorded and started unless it is a duplicate of an existing terminating pod UID',
    update: {
      updateType: 'create',
      pod: pod('1', 30, { name: 'running-pod', namespace: 'ns', labels: { updated: 'value' } }),
    },
    prepare: async (h) => {
      await createRunningPod(h);
      const { workers, syncer } = h;
      const held = gate();
      syncer.killGates.push(held.promise);
      workers.updatePod({ updateType: 'kill', pod: namedPod() });
      await until(() => syncer.of('1').includes('terminating:1:30'), 'the kill to start');
      return held.open;
    },
    before: { terminationRequested: true, knownTerminated: false },
    calls: ['sync:create:1', 'terminating:1:30', 'terminated:1', 'sync:create:1'],
    knownTerminated: false,
    ours: 'upstream remembers the create (restartRequested), stays finished and restarts the pod at the next housekeeping; we restart it as soon as the old incarnation finished',
  },
  {
    name: 'a new pod is recorded and started and running pod is ignored',
    update: { updateType: 'create', pod: namedPod(), runningPod: runtimePod('1') },
    calls: ['sync:create:1'],
    knownTerminated: false,
  },
  {
    name: 'a running pod is terminated when an update contains a deletionTimestamp',
    update: { updateType: 'update', pod: pod('1', 30, { name: 'running-pod', namespace: 'ns', deletionGrace: 15 }) },
    prepare: createRunningPod,
    before: { terminationRequested: true },
    calls: ['sync:create:1', 'terminating:1:15', 'terminated:1'],
    knownTerminated: true,
  },
  {
    name: 'a running pod is terminated when an eviction is requested',
    update: { updateType: 'kill', pod: namedPod(), killPodOptions: { evict: true } },
    prepare: createRunningPod,
    before: { terminationRequested: true },
    calls: ['sync:create:1', 'terminating:1:30', 'terminated:1'],
    knownTerminated: true,
  },
  {
    name: 'a pod that is terminal and has never started must be terminated if the runtime does not have a cached terminal state',
    update: { updateType: 'create', pod: pod('1', 30, { name: 'done-pod', namespace: 'ns', phase: 'Succeeded' }) },
    before: { terminationRequested: true, knownTerminated: false },
    calls: ['terminating:1:30', 'terminated:1'],
    knownTerminated: true,
  },
  {
    name: 'a pod that is terminal and has never started advances to finished if the runtime has a cached terminal state',
    update: { updateType: 'create', pod: pod('1', 30, { name: 'done-pod', namespace: 'ns', phase: 'Succeeded' }) },
    cached: true,
    before: { terminationRequested: true, knownTerminated: true, couldHaveRunning: false },
    calls: ['terminated:1'],
    knownTerminated: true,
  },
  {
    // upstream: allowPodStart refuses a static pod whose termination was requested before it
    // started (cleanupUnstartedPod): not even the cleanup runs
    name: 'a static pod that is terminal and has never started finishes without cleanup if the runtime has a cached terminal state',
    update: {
      updateType: 'create',
      pod: pod('1', 30, { name: 'done-pod', namespace: 'ns', phase: 'Succeeded', static: true }),
    },
    cached: true,
    before: { terminationRequested: true, knownTerminated: true, couldHaveRunning: false },
    calls: [],
    knownTerminated: true,
  },
  {
    name: 'an orphaned running pod we have not seen is marked terminating and advances to finished and then is removed',
    update: { updateType: 'kill', runningPod: runtimePod('1') },
    before: { terminationRequested: true, knownTerminated: false },
    calls: ['terminating-runtime:1'],
    // Once a runtime pod is fully terminated it is forgotten: nothing desires it.
    knownTerminated: false,
  },
  {
    name: 'an orphaned running pod with a non-kill update type does nothing',
    update: { updateType: 'create', runningPod: runtimePod('1') },
    before: { terminationRequested: false, knownTerminated: false },
    calls: [],
    knownTerminated: false,
  },
];

for (const tc of updatePodCases) {
  test(`TestUpdatePod: ${tc.name}`, async () => {
    const h = setup();
    if (tc.cached) h.cache.set('1', stoppedStatus('1', 'done-pod'), undefined, Date.now());
    const after = tc.prepare ? await tc.prepare(h) : undefined;
    h.workers.updatePod(tc.update);
    if (tc.before) {
      const now = queries(h.workers, '1');
      for (const [k, v] of Object.entries(tc.before))
        assert.equal(now[k as keyof typeof now], v, `before the worker ran: ${k}`);
    }
    after?.();
    await settle(h.workers);
    h.done();
    assert.deepEqual(h.syncer.of('1'), tc.calls);
    assert.equal(h.workers.isPodKnownTerminated('1'), tc.knownTerminated);
  });
}

test('TestUpdatePod (ours): the restarted incarnation runs the newest spec sent while the old one terminated', async () => {
  const { workers, syncer, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('1') });
  await settle(workers);
  const held = gate();
  syncer.killGates.push(held.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('1') });
  await until(() => syncer.of('1').includes('terminating:1:30'), 'the kill to start');
  workers.updatePod({ updateType: 'create', pod: pod('1', 30, { labels: { v: '2' } }) });
  workers.updatePod({ updateType: 'update', pod: pod('1', 30, { labels: { v: '3' } }) });
  held.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.of('1'), ['sync:create:1', 'terminating:1:30', 'terminated:1', 'sync:create:1']);
  assert.equal(syncer.syncedPods.at(-1)?.metadata?.labels?.v, '3');
});

// ---- TestUpdatePodParallel ----------------------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestUpdatePodParallel
test('TestUpdatePodParallel: every pod is synced, at most once per update, and the last sync sees the last spec', async () => {
  const { workers, syncer, done } = setup();
  const numPods = 20;
  for (let i = 0; i < numPods; i++) {
    for (let j = i; j < numPods; j++)
      workers.updatePod({ updateType: 'create', pod: pod(String(j), 30, { name: String(i), namespace: 'ns' }) });
  }
  await settle(workers);
  done();
  for (let i = 0; i < numPods; i++) {
    const uid = String(i);
    const syncs = syncer.syncedPods.filter((p) => p.metadata?.uid === uid);
    assert.ok(syncs.length >= 1 && syncs.length <= i + 1, `pod ${i} synced ${syncs.length} times`);
    assert.equal(syncs.at(-1)?.metadata?.name, uid, `pod ${i}: the last sync saw the last update`);
  }
});

// ---- TestUpdatePodForRuntimePod / TestUpdatePodForTerminatedRuntimePod ----------------------------

// upstream pkg/kubelet/pod_workers_test.go TestUpdatePodForRuntimePod
test('TestUpdatePodForRuntimePod: a runtime pod is ignored unless killed; a kill terminates it through the runtime', async () => {
  const { workers, syncer, done } = setup();
  workers.updatePod({ updateType: 'create', runningPod: runtimePod('1', '1') });
  await settle(workers);
  assert.deepEqual(syncer.calls, [], 'ignores a running pod of the wrong update type');
  workers.updatePod({ updateType: 'kill', runningPod: runtimePod('1', '1') });
  await settle(workers);
  done();
  assert.deepEqual(syncer.calls, ['terminating-runtime:1']);
});

// upstream pkg/kubelet/pod_workers_test.go TestUpdatePodForTerminatedRuntimePod
test('TestUpdatePodForTerminatedRuntimePod: a runtime-only kill of a pod terminated and cleaning up is ignored', async () => {
  const { workers, syncer, done } = setup();
  workers.updatePod({ updateType: 'create', pod: pod('1', 1) });
  await settle(workers);
  const cleanup = gate();
  syncer.terminatedGates.push(cleanup.promise);
  workers.updatePod({ updateType: 'kill', pod: pod('1', 1) });
  await until(() => syncer.of('1').includes('terminated:1'), 'the cleanup to start');
  assert.equal(workers.isPodKnownTerminated('1'), true, 'terminated, cleanup held open');
  workers.updatePod({ updateType: 'kill', runningPod: runtimePod('1', '1') });
  // A runtime-only create must not be taken for a restart request either.
  workers.updatePod({ updateType: 'create', runningPod: runtimePod('1', '1') });
  cleanup.open();
  await settle(workers);
  assert.deepEqual(syncer.of('1'), ['sync:create:1', 'terminating:1:1', 'terminated:1']);
  assert.deepEqual(
    [...workers.syncKnownPods([pod('1', 1)])],
    [['1', 'finished']],
    'still desired and finished: kept, not restarted',
  );
  await settle(workers);
  done();
  assert.deepEqual(syncer.of('1'), ['sync:create:1', 'terminating:1:1', 'terminated:1']);
});

// ---- TestUpdatePodDoesNotForgetSyncPodKill -------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestUpdatePodDoesNotForgetSyncPodKill
test('TestUpdatePodDoesNotForgetSyncPodKill: create, kill, update in a row always ends terminated', async () => {
  const { workers, syncer, done } = setup();
  const numPods = 20;
  for (let i = 0; i < numPods; i++) {
    const p = pod(String(i), 30, { name: String(i), namespace: 'ns' });
    workers.updatePod({ updateType: 'create', pod: p });
    workers.updatePod({ updateType: 'kill', pod: p });
    workers.updatePod({ updateType: 'update', pod: p });
  }
  await settle(workers);
  done();
  for (let i = 0; i < numPods; i++) {
    const uid = String(i);
    // The create may be coalesced away by the kill that follows it.
    const possible = [
      [`terminating:${uid}:30`, `terminated:${uid}`],
      [`sync:create:${uid}`, `terminating:${uid}:30`, `terminated:${uid}`],
    ];
    assert.ok(
      possible.some((p) => JSON.stringify(p) === JSON.stringify(syncer.of(uid))),
      `pod ${uid}: ${syncer.of(uid).join(', ')}`,
    );
  }
});

// the same, with the kill arriving while a sync is running (kill not forgotten)
test('TestUpdatePodDoesNotForgetSyncPodKill (held sync): a kill during a running sync is applied once the sync returns', async () => {
  const { workers, syncer, done } = setup();
  const held = gate();
  syncer.syncGate = held.promise;
  workers.updatePod({ updateType: 'create', pod: pod('1') });
  await until(() => syncer.calls.length === 1, 'the sync to start');
  workers.updatePod({ updateType: 'kill', pod: pod('1') });
  workers.updatePod({ updateType: 'update', pod: pod('1') });
  workers.updatePod({ updateType: 'sync', pod: pod('1') });
  assert.equal(workers.isPodTerminationRequested('1'), true);
  held.open();
  await settle(workers);
  done();
  assert.deepEqual(syncer.of('1'), ['sync:create:1', 'terminating:1:30', 'terminated:1']);
});

// ---- TestTerminalPhaseTransition ----------------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestTerminalPhaseTransition
test('TestTerminalPhaseTransition: a sync that finds the pod terminal moves it to terminating, then terminated', async () => {
  const { workers, syncer, done } = setup();
  const p = pod('1', 30, { name: 'pod1', namespace: 'test1' });
  workers.updatePod({ updateType: 'update', pod: p });
  await settle(workers);
  assert.equal(workers.isPodKnownTerminated('1'), false, 'running');
  workers.updatePod({ updateType: 'update', pod: p });
  await settle(workers);
  assert.equal(workers.isPodKnownTerminated('1'), false, 'still running');
  syncer.terminalUids.add('1');
  workers.updatePod({ updateType: 'update', pod: p });
  await settle(workers);
  done();
  assert.equal(workers.isPodTerminationRequested('1'), true);
  assert.equal(workers.isPodKnownTerminated('1'), true);
  assert.deepEqual(syncer.of('1'), [
    'sync:update:1',
    'sync:update:1',
    'sync:update:1',
    'terminating:1:30',
    'terminated:1',
  ]);
});

// ---- TestFakePodWorkers-like sequencing ----------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestFakePodWorkers (its fake's query maps) and the
// podWorkers interval diagram: what each query answers in each state.
test('sequencing: syncing → terminating → terminated → finished, as the queries see it', async () => {
  const { workers, syncer, done } = setup();
  const p = pod('1', 5);
  const seen: [string, ReturnType<typeof queries>][] = [];
  const look = (label: string) => seen.push([label, queries(workers, '1')]);
  const kill = gate();
  const cleanup = gate();
  syncer.killGates.push(kill.promise);
  syncer.terminatedGates.push(cleanup.promise);
  workers.updatePod({ updateType: 'create', pod: p });
  await settle(workers);
  look('syncing');
  workers.updatePod({ updateType: 'kill', pod: p });
  await until(() => syncer.of('1').includes('terminating:1:5'), 'the kill to start');
  look('terminating');
  kill.open();
  await until(() => syncer.of('1').includes('terminated:1'), 'the cleanup to start');
  look('terminated');
  cleanup.open();
  await settle(workers);
  look('finished');
  assert.deepEqual(workers.syncKnownPods([p]).get('1'), 'finished');
  done();
  const row = (terminationRequested: boolean, knownTerminated: boolean, couldHaveRunning: boolean) => ({
    terminationRequested,
    knownTerminated,
    couldHaveRunning,
  });
  assert.deepEqual(seen, [
    ['syncing', row(false, false, true)],
    ['terminating', row(true, false, true)],
    ['terminated', row(true, true, false)],
    ['finished', row(true, true, false)],
  ]);
  assert.deepEqual(syncer.of('1'), ['sync:create:1', 'terminating:1:5', 'terminated:1']);
});

// ---- TestSyncKnownPods --------------------------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestSyncKnownPods
test('TestSyncKnownPods: killed pods are forgotten once finished and gone; desired ones kept; orphans terminated', async () => {
  const { workers, done } = setup();
  const numPods = 20;
  const named = (i: number) => pod(String(i), 30, { name: 'name', namespace: 'ns' });
  for (let i = 0; i < numPods; i++) workers.updatePod({ updateType: 'update', pod: named(i) });
  await settle(workers);
  const desired = [named(2), named(14)];
  const desiredUids = new Set(['2', '14']);
  // Kill all but the desired pods; every other one also carries a deletionTimestamp.
  for (let i = 0; i < numPods; i++) {
    if (desiredUids.has(String(i))) continue;
    const p = i % 2 === 0 ? pod(String(i), 30, { name: 'name', namespace: 'ns', deletionGrace: 30 }) : named(i);
    workers.updatePod({ updateType: 'kill', pod: p });
  }
  await settle(workers);
  assert.deepEqual(
    queries(workers, '0'),
    { terminationRequested: true, knownTerminated: true, couldHaveRunning: false },
    'deleted and terminated',
  );
  assert.deepEqual(
    queries(workers, '1'),
    { terminationRequested: true, knownTerminated: true, couldHaveRunning: false },
    'terminated',
  );
  assert.deepEqual(
    queries(workers, '2'),
    { terminationRequested: false, knownTerminated: false, couldHaveRunning: true },
    'running',
  );
  assert.equal(workers.shouldPodContentBeRemoved('0'), true, 'deleted and terminated');
  assert.equal(workers.shouldPodContentBeRemoved('1'), false, 'terminated but not deleted');
  assert.equal(workers.shouldPodContentBeRemoved('2'), false, 'not terminated');
  // ours: false before the first syncKnownPods too (upstream: true, "its update may be on its
  // way"); the sync tick relies on it to leave pods without a worker, such as rejected ones, alone
  assert.equal(workers.couldHaveRunningContainers('abc'), false, 'does not exist, not yet synced');
  assert.equal(workers.isPodTerminationRequested('abc'), false);
  assert.equal(workers.shouldPodContentBeRemoved('abc'), false, 'does not exist but not yet synced');

  const known = workers.syncKnownPods(desired);
  assert.deepEqual([...known].sort(), [
    ['14', 'syncing'],
    ['2', 'syncing'],
  ]);
  assert.equal(workers.isPodTerminationRequested('2'), false);
  assert.equal(workers.couldHaveRunningContainers('abc'), false, 'does not exist and synced at least once');
  assert.equal(workers.shouldPodContentBeRemoved('abc'), true, 'does not exist and synced at least once');
  assert.equal(workers.couldHaveRunningContainers('0'), false, 'forgotten: known not to run');

  // Workers not yet terminated stay, even when no longer desired: they are terminated first.
  const orphans = workers.syncKnownPods([]);
  assert.deepEqual([...orphans].sort(), [
    ['14', 'terminating'],
    ['2', 'terminating'],
  ]);
  await settle(workers);
  assert.deepEqual([...workers.syncKnownPods([])], [], 'once those pods terminated, the workers are cleared');
  done();
});

// ---- ShouldPodContentBeRemoved ------------------------------------------------------------------

interface ContentCase {
  desc: string;
  /** Brings pod '1' (synced and running) into the state under test. */
  then: (h: Harness) => Promise<void>;
  removable: boolean;
}

/** Pod '1' killed with the given options, its kill held open. */
function killHeld(u: Partial<UpdatePodOptions>) {
  return async ({ workers, syncer }: Harness) => {
    syncer.killGates.push(new Promise(() => {}));
    workers.updatePod({ updateType: 'kill', pod: pod('1'), ...u });
    await until(() => syncer.of('1').some((c) => c.startsWith('terminating')), 'the kill to start');
  };
}

// upstream pkg/kubelet/pod_workers.go ShouldPodContentBeRemoved (asserted by TestSyncKnownPods):
// evicted at once; deleted once terminated; a pod no longer desired counts as deleted
const contentCases: ContentCase[] = [
  { desc: 'running', then: async () => {}, removable: false },
  { desc: 'evicted, still terminating', then: killHeld({ killPodOptions: { evict: true } }), removable: true },
  {
    desc: 'deleted, still terminating',
    then: killHeld({ updateType: 'update', pod: pod('1', 30, { deletionGrace: 5 }) }),
    removable: false,
  },
  {
    desc: 'deleted and terminated',
    then: async ({ workers }) => {
      workers.updatePod({ updateType: 'update', pod: pod('1', 30, { deletionGrace: 5 }) });
      await settle(workers);
    },
    removable: true,
  },
  {
    desc: 'killed (removed from its source) and terminated',
    then: async ({ workers }) => {
      workers.updatePod({ updateType: 'kill', pod: pod('1') });
      await settle(workers);
    },
    removable: false,
  },
  {
    desc: 'no longer desired at housekeeping and terminated',
    then: async ({ workers }) => {
      workers.syncKnownPods([]);
      await settle(workers);
    },
    removable: true,
  },
  {
    desc: 'killed as a runtime pod and terminated',
    then: async ({ workers }) => {
      workers.updatePod({ updateType: 'kill', runningPod: runtimePod('1') });
      await settle(workers);
    },
    removable: true,
  },
];

for (const tc of contentCases) {
  test(`ShouldPodContentBeRemoved: ${tc.desc}`, async () => {
    const h = setup();
    h.workers.updatePod({ updateType: 'create', pod: pod('1') });
    await settle(h.workers);
    await tc.then(h);
    h.done();
    assert.equal(h.workers.shouldPodContentBeRemoved('1'), tc.removable);
  });
}

// ---- Test_removeTerminatedWorker ------------------------------------------------------------------

interface RemoveCase {
  desc: string;
  /** Brings worker 'pod-uid' into the state under test. */
  prepare: (h: Harness) => Promise<void>;
  orphan: boolean;
  removed: boolean;
  /** The syncer calls for the UID once every worker is idle after the housekeeping pass. */
  calls: string[];
}

const target = () => pod('pod-uid', 2, { name: 'fake', static: true });
const blocker = () => pod('other-uid', 2, { name: 'fake', static: true });

/** The target synced and running. */
async function started({ workers }: Pick<Harness, 'workers'>): Promise<void> {
  workers.updatePod({ updateType: 'create', pod: target() });
  await settle(workers);
}

/** The target waits for its turn behind a started static pod with the same full name. */
async function waitingBehindBlocker({ workers }: Harness): Promise<void> {
  workers.updatePod({ updateType: 'create', pod: blocker() });
  await settle(workers);
  await started({ workers });
}

/** The target killed, with one of its syncer calls held open past the housekeeping pass. */
function killedHolding(gates: 'killGates' | 'terminatedGates', reached: string) {
  return async (h: Harness): Promise<void> => {
    await started(h);
    const held = gate();
    h.syncer[gates].push(held.promise);
    h.workers.updatePod({ updateType: 'kill', pod: target() });
    await until(() => h.syncer.of('pod-uid').includes(reached), reached);
    setTimeout(held.open, 30);
  };
}

const ranToEnd = ['sync:create:pod-uid', 'terminating:pod-uid:2', 'terminated:pod-uid'];

// upstream pkg/kubelet/pod_workers_test.go Test_removeTerminatedWorker
const removeCases: RemoveCase[] = [
  {
    desc: 'finished worker',
    prepare: async (h) => {
      await started(h);
      h.workers.updatePod({ updateType: 'kill', pod: target() });
      await settle(h.workers);
    },
    orphan: true,
    removed: true,
    calls: ranToEnd,
  },
  {
    desc: 'waiting to start worker because of another started pod with the same fullname',
    prepare: waitingBehindBlocker,
    orphan: false,
    removed: false,
    calls: [],
  },
  { desc: 'orphaned not started worker', prepare: waitingBehindBlocker, orphan: true, removed: true, calls: [] },
  // Kept, and terminated by the pod workers themselves: nobody else will tell them.
  { desc: 'orphaned started worker', prepare: started, orphan: true, removed: false, calls: ranToEnd },
  {
    desc: 'orphaned terminating worker',
    prepare: killedHolding('killGates', 'terminating:pod-uid:2'),
    orphan: true,
    removed: false,
    calls: ranToEnd,
  },
  {
    desc: 'orphaned terminated worker',
    prepare: killedHolding('terminatedGates', 'terminated:pod-uid'),
    orphan: true,
    removed: false,
    calls: ranToEnd,
  },
];

for (const tc of removeCases) {
  test(`Test_removeTerminatedWorker: ${tc.desc}`, async () => {
    const h = setup();
    await tc.prepare(h);
    const desired = tc.orphan ? [] : [target()];
    const known = h.workers.syncKnownPods([...desired, ...(h.syncer.of('other-uid').length > 0 ? [blocker()] : [])]);
    assert.equal(!known.has('pod-uid'), tc.removed, tc.removed ? 'removed' : 'kept');
    await settle(h.workers);
    h.done();
    assert.deepEqual(h.syncer.of('pod-uid'), tc.calls);
  });
}

// ---- Test_allowPodStart / TestStaticPodExclusion ---------------------------------------------------

interface AllowStartCase {
  desc: string;
  /** Pods created in this order; each settles before the next. */
  pods: Pod[];
  /** Applied after the creates (kills of pods ahead in line). */
  then?: (w: PodWorkers) => void;
  /** UIDs whose syncPod ran. */
  started: string[];
}

const staticPod = (uid: string, name = 'foo') => pod(uid, 2, { name, static: true });
const plainPod = (uid: string, name = 'test') => pod(uid, 2, { name });

// upstream pkg/kubelet/pod_workers_test.go Test_allowPodStart
const allowStartCases: AllowStartCase[] = [
  { desc: 'non-static pod', pods: [plainPod('uid-1'), plainPod('uid-0')], started: ['uid-1', 'uid-0'] },
  {
    desc: 'non-static pod when there is a started static pod with the same full name',
    pods: [staticPod('uid-1', 'test'), plainPod('uid-0')],
    started: ['uid-1', 'uid-0'],
  },
  {
    desc: 'static pod when there is a started non-static pod with the same full name',
    pods: [plainPod('uid-1', 'foo'), staticPod('uid-0')],
    started: ['uid-1', 'uid-0'],
  },
  {
    desc: 'static pod when there are no started static pods with the same full name',
    pods: [staticPod('uid-1', 'bar'), staticPod('uid-0')],
    started: ['uid-1', 'uid-0'],
  },
  {
    desc: 'static pod when there is a started static pod with the same full name',
    pods: [staticPod('uid-1'), staticPod('uid-0')],
    started: ['uid-1'],
  },
  {
    desc: 'static pod if the static pod is not the first pod waiting to start',
    pods: [staticPod('uid-9'), staticPod('uid-1'), staticPod('uid-0')],
    then: (w) => w.updatePod({ updateType: 'kill', pod: staticPod('uid-9') }),
    started: ['uid-9', 'uid-1'],
  },
  {
    desc: 'static pod if the static pod is the first pod that is not termination requested and waiting to start',
    pods: [staticPod('uid-9'), staticPod('uid-2'), staticPod('uid-3'), staticPod('uid-0'), staticPod('uid-1')],
    then: (w) => {
      w.updatePod({ updateType: 'kill', pod: staticPod('uid-2') });
      w.updatePod({ updateType: 'kill', pod: staticPod('uid-3') });
      w.updatePod({ updateType: 'kill', pod: staticPod('uid-9') });
    },
    started: ['uid-9', 'uid-0'],
  },
  {
    desc: 'static pod if the static pod is terminated should not be allowed',
    pods: [staticPod('uid-9'), staticPod('uid-0')],
    then: (w) => {
      w.updatePod({ updateType: 'kill', pod: staticPod('uid-0') });
      w.updatePod({ updateType: 'kill', pod: staticPod('uid-9') });
    },
    started: ['uid-9'],
  },
];

for (const tc of allowStartCases) {
  test(`Test_allowPodStart: ${tc.desc}`, async () => {
    const { workers, syncer, done } = setup();
    for (const p of tc.pods) {
      workers.updatePod({ updateType: 'create', pod: p });
      await settle(workers);
    }
    tc.then?.(workers);
    await settle(workers);
    done();
    const started = [...new Set(syncer.calls.filter((c) => c.startsWith('sync:')).map((c) => c.split(':')[2]))];
    assert.deepEqual(started, tc.started);
  });
}

// upstream pkg/kubelet/pod_workers_test.go TestStaticPodExclusion
test('TestStaticPodExclusion: one static pod per full name at a time, in arrival order; killed waiters never start', async () => {
  const { workers, syncer, done } = setup();
  const p = (uid: string) => pod(uid, 30, { name: 'pod1', namespace: 'test1', static: !uid.endsWith('normal') });
  const update = async (uid: string, updateType: UpdatePodOptions['updateType'] = 'update') => {
    workers.updatePod({ updateType, pod: p(uid) });
    await settle(workers);
  };
  const synced = (uid: string) => syncer.of(uid).filter((c) => c.startsWith('sync:')).length;

  // Two pods with the same name, one static, one from the apiserver: both run.
  await update('1-normal');
  await update('2-static');
  assert.equal(synced('1-normal'), 1);
  assert.equal(synced('2-static'), 1);

  // A second and third static pod wait for 2-static, even when updated again.
  await update('3-static');
  await update('4-static');
  await update('3-static');
  assert.equal(synced('3-static'), 0);
  assert.equal(synced('4-static'), 0);
  assert.equal(workers.isPodKnownTerminated('3-static'), false);

  // 3-static killed while waiting: terminated without ever starting, nothing to stop.
  await update('3-static', 'kill');
  assert.equal(workers.isPodKnownTerminated('3-static'), true);
  assert.deepEqual(syncer.of('3-static'), [], 'never started: no kill, no cleanup');
  assert.equal(workers.couldHaveRunningContainers('2-static'), true, '2-static still runs');

  // 2-static terminated: 4-static (3-static is out of the line) starts.
  await update('2-static', 'kill');
  assert.equal(workers.isPodKnownTerminated('2-static'), true);
  // ours: at once (upstream: at its next update)
  assert.equal(synced('4-static'), 1);
  await update('4-static');
  assert.equal(synced('4-static'), 2);

  const all = ['1-normal', '2-static', '3-static', '4-static'];
  assert.deepEqual(Object.fromEntries(workers.syncKnownPods(all.map(p))), {
    '1-normal': 'syncing',
    '2-static': 'finished',
    '3-static': 'finished',
    '4-static': 'syncing',
  });
  assert.deepEqual(
    Object.fromEntries(workers.syncKnownPods(['1-normal', '2-static', '4-static'].map(p))),
    { '1-normal': 'syncing', '2-static': 'finished', '4-static': 'syncing' },
    '3-static forgotten',
  );

  // 5-static killed before it could start, 6-static waits behind 4-static, then starts when it ends.
  await update('5-static');
  await update('5-static', 'kill');
  await update('6-static');
  assert.equal(workers.isPodKnownTerminated('5-static'), true);
  assert.equal(synced('6-static'), 0);
  await update('4-static', 'kill');
  assert.deepEqual(syncer.of('5-static'), []);
  assert.equal(synced('6-static'), 1);

  // 7, 8, 9 wait behind 6; 6 is killed, then created again (same UID).
  await update('7-static');
  await update('8-static');
  await update('9-static');
  await update('6-static', 'kill');
  await update('6-static', 'create');
  await update('8-static');
  // ours: 7-static starts as soon as 6-static finished (upstream: at its next update); the new
  // 6-static queues behind 8 and 9.
  assert.equal(synced('7-static'), 1);
  assert.equal(synced('8-static'), 0);
  assert.equal(synced('9-static'), 0);

  // 7 killed: 8 is next in line.
  await update('7-static', 'kill');
  await update('8-static');
  assert.ok(synced('8-static') >= 1);
  assert.equal(synced('9-static'), 0);

  // Only 8-static still desired: 1-normal is terminated; finished and never-started ones are forgotten.
  assert.deepEqual(Object.fromEntries(workers.syncKnownPods([p('8-static')])), {
    '1-normal': 'terminating',
    '8-static': 'syncing',
  });
  await settle(workers);
  done();
  assert.equal(synced('9-static'), 0);
  assert.deepEqual(syncer.of('9-static'), []);
  assert.ok(workers.isPodKnownTerminated('1-normal'));
});

// upstream pkg/kubelet/pod_workers.go podSyncStatus.observedRuntime: once the runtime shows the pod,
// it is driven through the kill even if it never started here
test('TestStaticPodExclusion (observed runtime): a waiting static pod named by a runtime kill is still killed and cleaned up', async () => {
  const { workers, syncer, done } = setup();
  workers.updatePod({ updateType: 'create', pod: staticPod('a') });
  workers.updatePod({ updateType: 'create', pod: staticPod('b') });
  await settle(workers);
  assert.deepEqual(syncer.of('b'), [], 'b waits for a');
  workers.updatePod({ updateType: 'kill', runningPod: { ...runtimePod('b'), name: 'foo', namespace: 'default' } });
  await settle(workers);
  done();
  assert.deepEqual(syncer.of('b'), ['terminating:b:2', 'terminated:b'], 'the spec is used for the kill');
  assert.equal(workers.isPodKnownTerminated('b'), true);
});

// ---- Test_calculateEffectiveGracePeriod ---------------------------------------------------------

interface GraceCase {
  desc: string;
  spec: number | null;
  deletion?: number;
  override?: number;
  current?: number;
  expected: number;
  shortened?: boolean;
}

// upstream pkg/kubelet/pod_workers_test.go Test_calculateEffectiveGracePeriod (and the shrinking
// rule of calculateEffectiveGracePeriod it does not table)
const graceCases: GraceCase[] = [
  { desc: 'use termination grace period from the spec when no overrides', spec: 30, expected: 30 },
  { desc: 'use pod DeletionGracePeriodSeconds when set', spec: 30, deletion: 5, expected: 5 },
  { desc: 'use grace period override when set', spec: 30, deletion: 5, override: 2, expected: 2 },
  { desc: 'use 1 when pod DeletionGracePeriodSeconds is zero', spec: 30, deletion: 0, expected: 1 },
  { desc: 'use 1 when grace period override is zero', spec: 30, deletion: 5, override: 0, expected: 1 },
  { desc: 'use 1 when the spec says zero', spec: 0, expected: 1 },
  // ours: pods are defaulted at the edge (spec 30); a pod without it still gets the API default
  { desc: 'no spec value: the API default', spec: null, expected: 30 },
  {
    desc: 'a running kill keeps its grace against a longer deletion grace',
    spec: 30,
    deletion: 20,
    current: 10,
    expected: 10,
    shortened: false,
  },
  {
    desc: 'a running kill is shortened by a shorter override',
    spec: 30,
    override: 3,
    current: 10,
    expected: 3,
    shortened: true,
  },
  {
    desc: 'a running kill is not shortened by the same value',
    spec: 30,
    override: 10,
    current: 10,
    expected: 10,
    shortened: false,
  },
];

for (const tc of graceCases) {
  test(`Test_calculateEffectiveGracePeriod: ${tc.desc}`, () => {
    const p = pod('1', tc.spec, { name: 'running-pod', namespace: 'ns' });
    if (tc.deletion !== undefined) p.metadata!.deletionGracePeriodSeconds = tc.deletion;
    const kill = tc.override !== undefined ? { gracePeriodSeconds: tc.override } : {};
    const got = effectiveGracePeriod(tc.current, p, kill);
    assert.equal(got.gracePeriod, tc.expected);
    if (tc.shortened !== undefined) assert.equal(got.shortened, tc.shortened);
  });
}

test('Test_calculateEffectiveGracePeriod: what the kill is handed, through the workers', async () => {
  const { workers, syncer, done } = setup();
  for (const [uid, p, kill] of [
    ['spec', pod('spec', 30), undefined],
    ['deletion', pod('deletion', 30, { deletionGrace: 5 }), undefined],
    ['override', pod('override', 30, { deletionGrace: 5 }), 2],
    ['zero', pod('zero', 30), 0],
  ] as const) {
    workers.updatePod({
      updateType: 'kill',
      pod: p,
      ...(kill !== undefined ? { killPodOptions: { gracePeriodSeconds: kill } } : {}),
    });
    await settle(workers);
    assert.equal(syncer.of(uid)[0], `terminating:${uid}:${{ spec: 30, deletion: 5, override: 2, zero: 1 }[uid]}`);
  }
  done();
});

// ---- TestKillPodNowFunc -------------------------------------------------------------------------

// upstream pkg/kubelet/pod_workers_test.go TestKillPodNowFunc
test('TestKillPodNowFunc: the blocking kill terminates and cleans up the pod, reports it Failed, then returns', async () => {
  const syncer = new RecordingSyncer();
  const cache = createPodStatusCache();
  const tickTimer = setInterval(() => cache.updateTime(Date.now()), 2);
  const workers = createPodWorkers({ syncer, cache, resyncIntervalMs: 60_000 });
  const kill = killPodNow(workers);
  await kill(pod('test', 30, { name: 'test', namespace: 'ns' }), 'message', 0, 'reason');
  await settle(workers);
  clearInterval(tickTimer);
  assert.deepEqual(syncer.calls, ['terminating:test:1', 'terminated:test']);
  assert.equal(syncer.statusSeen[0]?.phase, 'Failed');
  assert.equal(syncer.statusSeen[0]?.reason, 'reason');
  assert.equal(syncer.statusSeen[0]?.message, 'message');
});
