import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { PodRuntimeStatus, RunningPod } from '../../src/kuberuntime/types.js';
import { byCreationTime, Kubelet } from '../../src/kubelet/kubelet.js';
import { killPodNow } from '../../src/podworkers/index.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import type { PodStatusCache } from '../../src/pleg/types.js';
import { createStatusManager } from '../../src/status/index.js';
import { FakeRuntime } from '../fakes/fake-runtime.js';
import { FakePLEG } from './fake-pleg.js';
import { FakeProber } from '../fakes/fake-prober.js';
import { Recorder } from '../../src/events/index.js';
import type { EventRecorder } from '../../src/events/index.js';
import { testTempDir } from '../support/temp-dir.js';
import { registry } from '../../src/metrics/index.js';
import { volumeRoot } from './volume-root.js';
import { Updates, until } from '../fakes/pod-updates.js';
import type { DeviceAdmission } from '../../src/kubelet/device-admission.js';
import { allocateFailure } from '../../src/kubelet/device-admission.js';

const Gi = 2 ** 30;

/** The shared fake, with kills that stop the containers as a runtime would. */
class StoppingRuntime extends FakeRuntime {
  override async killPod(p: Pod | undefined, running: RunningPod, grace?: number): Promise<void> {
    await super.killPod(p, running, grace);
    for (const rp of this.pods) if (rp.uid === running.uid) for (const c of rp.containers) c.state = 'exited';
  }
}

function pod(uid: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: 'default', uid, annotations: { 'kubernetes.io/config.source': 'file' } },
    spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'a', image: 'x' }], ...spec },
  } as Pod;
}

function setup(
  opts: {
    maxPods?: number;
    memory?: number;
    prober?: FakeProber;
    runtime?: StoppingRuntime;
    recorder?: EventRecorder;
    devices?: DeviceAdmission;
    pleg?: (runtime: StoppingRuntime, cache: PodStatusCache) => FakePLEG;
  } = {},
) {
  const runtime = opts.runtime ?? new StoppingRuntime();
  const cache = createPodStatusCache();
  const pleg = opts.pleg?.(runtime, cache) ?? new FakePLEG(runtime, cache);
  const statusManager = createStatusManager();
  const maxPods = opts.maxPods ?? 110;
  const { rootDir, volumeManager } = volumeRoot(testTempDir('kts-kubelet-'));
  const kubelet = new Kubelet({
    nodeName: 'n',
    hostIP: '192.0.2.1',
    rootDir,
    volumeManager,
    maxPods,
    syncFrequencyMs: 60_000,
    node: computeNodeInfo({ nodeName: 'n', maxPods, capacity: { milliCPU: 2000, memory: opts.memory ?? 4 * Gi } }),
    runtime,
    pleg,
    cache,
    statusManager,
    sources: new Set(['file']),
    housekeepingPeriodMs: 30,
    syncPeriodMs: 20,
    ...(opts.prober ? { prober: opts.prober, probes: opts.prober } : {}),
    ...(opts.recorder ? { recorder: opts.recorder } : {}),
    ...(opts.devices ? { devices: opts.devices } : {}),
  });
  const updates = new Updates();
  const done = kubelet.run(updates);
  return {
    runtime,
    kubelet,
    volumeManager,
    pleg,
    updates,
    statusManager,
    stop: async () => {
      kubelet.stop();
      await done;
      await kubelet.podWorkers.idle();
    },
  };
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

/** A FakePLEG that takes a kill's status as the GenericPLEG does (expectPodStop / podStopped), recording it. */
class StopAwarePLEG extends FakePLEG {
  readonly stops: string[] = [];
  expectPodStop(uid: string): void {
    this.stops.push(`expect ${uid}`);
  }
  podStopped(uid: string, stopped?: { status: PodRuntimeStatus }): void {
    const states = stopped?.status.containerStatuses.map((c) => `${c.id}=${c.state}`).join(',');
    this.stops.push(`stopped ${uid} ${states ?? 'without a status'}`);
  }
}

/**
 * The runtime reads of one pod's termination (issue 30: each read is two CRI lists and a status
 * call per container and sandbox, and a 100-pod delete made ~5 per pod): what to stop comes from
 * the PLEG's cache (a relist ran since the last sync), and one read after the kill (nothing runs;
 * the final status), which the PLEG caches and the cleanup reuses. Before: one read before the
 * kill, one more for the cleanup, and a relist that read the pod again.
 */
test('a deletion reads the pod status once, after the kill', async () => {
  const { runtime, pleg, updates, statusManager, kubelet, stop } = setup({
    pleg: (rt, cache) => new StopAwarePLEG(rt, cache),
  });
  updates.push({ op: 'ADD', pods: [pod('t')], source: 'file' });
  await until('synced', () => runtime.synced.includes('t'));
  runtime.setContainer('t', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('t')?.phase === 'Running');
  await new Promise((r) => setTimeout(r, 60)); // relists after the last sync
  pleg.stop(); // from here on, only the kubelet reads the runtime
  await new Promise((r) => setTimeout(r, 30)); // a relist in flight ends
  let reads = 0;
  const read = runtime.getPodStatus.bind(runtime);
  runtime.getPodStatus = (...args) => {
    reads++;
    return read(...args);
  };
  const deleting = pod('t');
  deleting.metadata!.deletionTimestamp = new Date();
  deleting.metadata!.deletionGracePeriodSeconds = 0;
  updates.push({ op: 'DELETE', pods: [deleting], source: 'file' });
  await until('terminated', () => kubelet.podWorkers.isPodKnownTerminated('t'));
  await kubelet.podWorkers.idle();
  assert.equal(reads, 1);
  assert.deepEqual((pleg as StopAwarePLEG).stops, ['expect t', 'stopped t c1=exited']);
  assert.equal(statusManager.getPodStatus('t')?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  await stop();
});

test('a deletion request kills with deletionGracePeriodSeconds', async () => {
  const { runtime, updates, stop } = setup();
  updates.push({ op: 'ADD', pods: [pod('d', { terminationGracePeriodSeconds: 30 })], source: 'file' });
  await until('synced', () => runtime.synced.includes('d'));
  runtime.setContainer('d', 'c1', 'running', 'a');
  const deleting = pod('d', { terminationGracePeriodSeconds: 30 });
  deleting.metadata!.deletionTimestamp = new Date();
  deleting.metadata!.deletionGracePeriodSeconds = 5;
  updates.push({ op: 'DELETE', pods: [deleting], source: 'file' });
  await until('killed', () => runtime.killed.some((k) => k.uid === 'd'));
  assert.equal(runtime.killed.find((k) => k.uid === 'd')?.grace, 5);
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
  assert.equal(runtime.killed.find((k) => k.uid === 'orphan')?.grace, 1);
  assert.ok(!runtime.killed.some((k) => k.uid === 'b'), 'desired pod untouched');
  await stop();
});

/**
 * upstream cleanupOrphanedPodCgroups (kubelet_pods.go), in every housekeeping pass: the cgroups of
 * pods that may still run stay (a worker syncing or terminating them; the runtime shows them
 * running), so do those of pods whose volumes are still there (podVolumesExist); the rest go.
 */
test('housekeeping removes orphaned pod cgroups: kept while a pod may run or has volumes, removed once it cannot', async () => {
  const { runtime, volumeManager, updates, stop } = setup();
  const candidates = ['a', 'orphan', 'vol', 'gone'];
  let verdict = new Map<string, boolean>();
  runtime.cleanupOrphanedPodCgroups = async (keep) => {
    const kept = await Promise.all(candidates.map(keep));
    verdict = new Map(candidates.map((uid, i) => [uid, kept[i]!]));
  };
  let volumesLeft = true;
  volumeManager.podVolumesExist = async (uid) => uid === 'vol' && volumesLeft;
  runtime.setContainer('orphan', 'c9', 'running');
  runtime.pods[0]!.sandboxes.push({ id: 's9', ready: true, attempt: 0, createdAt: 1n });
  updates.push({ op: 'ADD', pods: [pod('a')], source: 'file' });
  runtime.setContainer('a', 'c1', 'running', 'a');
  await until('a pass with every source seen', () => verdict.get('a') === true);
  assert.equal(verdict.get('orphan'), true, 'running in the runtime (its kill is under way)');
  assert.equal(verdict.get('vol'), true, 'volumes still there');
  assert.equal(verdict.get('gone'), false, 'nothing of it anywhere');
  updates.push({ op: 'REMOVE', pods: [pod('a')], source: 'file' });
  await until('a killed', () => runtime.killed.some((k) => k.uid === 'a'));
  // (This fake lists exited containers too; a runtime's running pods no longer hold the pod.)
  runtime.pods = runtime.pods.filter((p) => p.uid !== 'a');
  await until('a terminated, its cgroup no longer kept', () => verdict.get('a') === false);
  volumesLeft = false;
  await until('vol without volumes', () => verdict.get('vol') === false);
  await stop();
});

test('container GC is not housekeeping: the Kubelet only answers the GC loop (sources ready; content of a pod gone and stopped)', async () => {
  const { runtime, kubelet, updates, stop } = setup();
  let collections = 0;
  runtime.garbageCollect = async () => {
    collections++;
  };
  assert.equal(kubelet.allSourcesReady(), false);
  assert.equal(kubelet.shouldPodContentBeRemoved('a'), true, 'a pod nobody knows');
  updates.push({ op: 'ADD', pods: [pod('a')], source: 'file' });
  await until('synced', () => runtime.synced.includes('a'));
  assert.equal(kubelet.allSourcesReady(), true);
  runtime.setContainer('a', 'c1', 'running', 'a');
  assert.equal(kubelet.shouldPodContentBeRemoved('a'), false, 'desired');
  updates.push({ op: 'REMOVE', pods: [pod('a')], source: 'file' });
  await until('killed', () => runtime.killed.some((k) => k.uid === 'a'));
  await until('stopped', () => kubelet.shouldPodContentBeRemoved('a'));
  await new Promise((r) => setTimeout(r, 100)); // several housekeeping ticks (30 ms)
  assert.equal(collections, 0, 'housekeeping never collects');
  await stop();
});

test('admission rejects pods beyond maxPods with OutOfpods; the rejected pod never starts', async () => {
  const { runtime, updates, statusManager, stop } = setup({ maxPods: 1 });
  updates.push({ op: 'ADD', pods: [pod('x'), pod('y')], source: 'file' });
  await until('first synced', () => runtime.synced.includes('x'));
  await until('second rejected', () => statusManager.getPodStatus('y')?.reason === 'OutOfpods');
  const s = statusManager.getPodStatus('y')!;
  assert.equal(s.phase, 'Failed');
  assert.equal(
    s.message,
    "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!runtime.synced.includes('y'));
  await stop();
});

test('admission: a pod too large for the node is rejected with OutOfmemory', async () => {
  const { runtime, updates, statusManager, stop } = setup({ memory: 4 * Gi });
  updates.push({
    op: 'ADD',
    pods: [pod('big', { containers: [{ name: 'a', image: 'x', resources: { requests: { memory: '8Gi' } } }] })],
    source: 'file',
  });
  await until('rejected', () => statusManager.getPodStatus('big')?.reason === 'OutOfmemory');
  assert.equal(statusManager.getPodStatus('big')!.phase, 'Failed');
  assert.match(
    statusManager.getPodStatus('big')!.message!,
    /^Pod was rejected: Node didn't have enough resource: memory, requested: 8589934592, used: 0, capacity: \d+$/,
  );
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!runtime.synced.includes('big'), 'never started');
  await stop();
});

test('admission: a hostPort already held by an active pod is rejected with NodePorts', async () => {
  const { runtime, updates, statusManager, stop } = setup();
  const ports = [{ name: 'a', image: 'x', ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] }];
  updates.push({ op: 'ADD', pods: [pod('p1', { containers: ports })], source: 'file' });
  await until('first synced', () => runtime.synced.includes('p1'));
  updates.push({ op: 'ADD', pods: [pod('p2', { containers: ports })], source: 'file' });
  await until('second rejected', () => statusManager.getPodStatus('p2')?.reason === 'NodePorts');
  assert.ok(!runtime.synced.includes('p2'));
  await stop();
});

test('admission: a pod setting a field the node does not do is Failed (PodFeatureUnsupported) with a Warning event', async () => {
  const recorder = new Recorder();
  const { runtime, updates, statusManager, stop } = setup({ recorder });
  const containers = [{ name: 'a', image: 'x', securityContext: { procMount: 'Unmasked' } }];
  updates.push({ op: 'ADD', pods: [pod('caps', { containers })], source: 'file' });
  await until('rejected', () => statusManager.getPodStatus('caps')?.reason === 'PodFeatureUnsupported');
  const s = statusManager.getPodStatus('caps')!;
  assert.equal(s.phase, 'Failed');
  assert.match(
    s.message!,
    /^Pod was rejected: spec\.containers\[0\]\.securityContext\.procMount is not supported by this node \(kubelet-ts\): /,
  );
  const events = recorder.recent().filter((e) => e.involvedObject.uid === 'caps');
  assert.deepEqual(
    events.map((e) => [e.type, e.reason]),
    [['Warning', 'PodFeatureUnsupported']],
  );
  assert.match(events[0]!.message, /^spec\.containers\[0\]\.securityContext\.procMount is not supported/);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!runtime.synced.includes('caps'), 'never started');
  await stop();
});

test('a pod that completed no longer counts against maxPods', async () => {
  const { runtime, kubelet, updates, statusManager, stop } = setup({ maxPods: 1 });
  runtime.setContainer('done', 'c1', 'exited', 'a');
  updates.push({ op: 'ADD', pods: [pod('done', { restartPolicy: 'Never' })], source: 'file' });
  await until(
    'completed',
    () => statusManager.getPodStatus('done')?.phase === 'Succeeded' && kubelet.podWorkers.isPodKnownTerminated('done'),
  );
  assert.deepEqual(
    kubelet.activePods().map((p) => p.metadata?.uid),
    [],
  );
  updates.push({ op: 'ADD', pods: [pod('next')], source: 'file' });
  await until('next synced', () => runtime.synced.includes('next'));
  assert.notEqual(statusManager.getPodStatus('next')?.reason, 'OutOfpods');
  await stop();
});

test('killPodNow (the eviction hook): grace override, Failed/Evicted with a DisruptionTarget condition, resolves when stopped', async () => {
  const { runtime, kubelet, updates, statusManager, stop } = setup();
  const p = pod('ev', { terminationGracePeriodSeconds: 30 });
  updates.push({ op: 'ADD', pods: [p], source: 'file' });
  runtime.setContainer('ev', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('ev')?.phase === 'Running');
  await killPodNow(kubelet.podWorkers)(p, 'The node was low on resource: memory.', 3);
  assert.equal(runtime.killed.find((k) => k.uid === 'ev')?.grace, 3);
  const s = statusManager.getPodStatus('ev')!;
  assert.equal(s.phase, 'Failed');
  assert.equal(s.reason, 'Evicted');
  assert.equal(s.message, 'The node was low on resource: memory.');
  const dt = s.conditions!.find((c) => c.type === 'DisruptionTarget')!;
  assert.deepEqual(
    [dt.status, dt.reason, dt.message],
    ['True', 'TerminationByKubelet', 'The node was low on resource: memory.'],
  );
  assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'False');
  await stop();
});

/** The stopping fake, also recording the order of SyncPod and KillPod calls. */
class OrderedRuntime extends StoppingRuntime {
  readonly calls: string[] = [];
  override async syncPod(...a: Parameters<StoppingRuntime['syncPod']>) {
    this.calls.push(`sync ${a[0].metadata?.uid}`);
    return super.syncPod(...a);
  }
  override async killPod(p: Pod | undefined, running: RunningPod, grace?: number): Promise<void> {
    this.calls.push(`kill ${running.uid}`);
    return super.killPod(p, running, grace);
  }
}

test('REMOVE then ADD of the same UID: the pod is stopped, then started again', async () => {
  const runtime = new OrderedRuntime();
  const { kubelet, updates, statusManager, stop } = setup({ runtime });
  updates.push({ op: 'ADD', pods: [pod('re')], source: 'file' });
  await until('synced', () => runtime.synced.includes('re'));
  runtime.setContainer('re', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('re')?.phase === 'Running');
  updates.push({ op: 'REMOVE', pods: [pod('re')], source: 'file' });
  updates.push({ op: 'ADD', pods: [pod('re')], source: 'file' });
  try {
    // Waited for, not sampled: the old incarnation's termination (its volume teardown included)
    // takes a moment, and the periodic resyncs made any count of syncs a poor clock.
    await until('killed', () => runtime.calls.includes('kill re'));
    await until('a new incarnation', () => !kubelet.podWorkers.isPodTerminationRequested('re'));
    await until('a SyncPod after the kill', () =>
      runtime.calls.slice(runtime.calls.indexOf('kill re')).includes('sync re'),
    );
    assert.equal(runtime.calls.filter((c) => c === 'kill re').length, 1, runtime.calls.join(', '));
  } finally {
    await stop();
  }
});

test('a pod rejected once is admitted when added again with room, starting from a fresh status', async () => {
  const { runtime, updates, statusManager, stop } = setup({ maxPods: 1 });
  updates.push({ op: 'ADD', pods: [pod('x'), pod('y')], source: 'file' });
  await until('y rejected', () => statusManager.getPodStatus('y')?.reason === 'OutOfpods');
  updates.push({ op: 'REMOVE', pods: [pod('x'), pod('y')], source: 'file' });
  updates.push({ op: 'ADD', pods: [pod('y')], source: 'file' });
  await until('y synced', () => runtime.synced.includes('y'));
  await until('fresh status', () => statusManager.getPodStatus('y')?.phase === 'Pending');
  assert.equal(statusManager.getPodStatus('y')?.reason, undefined);
  await stop();
});

test('probe results reach the syncLoop: a result change syncs the pod and readiness sets ready', async () => {
  const prober = new FakeProber();
  const { runtime, updates, statusManager, stop } = setup({ prober });
  updates.push({
    op: 'ADD',
    pods: [pod('r', { containers: [{ name: 'a', image: 'x', readinessProbe: { exec: { command: ['true'] } } }] })],
    source: 'file',
  });
  await until('synced', () => runtime.synced.includes('r'));
  runtime.setContainer('r', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('r')?.phase === 'Running');
  assert.ok(
    prober.updates.some((u) => u.uid === 'r' && !u.terminal),
    'the prober is told the pod status',
  );
  assert.equal(statusManager.getPodStatus('r')?.containerStatuses?.[0]?.ready, false);
  const before = runtime.synced.filter((u) => u === 'r').length;
  prober.ready.set('c1', true);
  prober.fire('r');
  await until('resynced', () => runtime.synced.filter((u) => u === 'r').length > before);
  await until('ready', () => statusManager.getPodStatus('r')?.containerStatuses?.[0]?.ready === true);
  assert.equal(statusManager.getPodStatus('r')?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  await stop();
});

/** The stopping fake, reporting each pod's sandboxes in its status as containerd does. */
class SandboxRuntime extends StoppingRuntime {
  override async getPodStatus(uid: string, name: string, namespace: string) {
    const status = await super.getPodStatus(uid, name, namespace);
    const sandboxes = this.pods.find((p) => p.uid === uid)?.sandboxes ?? [];
    status.sandboxStatuses = sandboxes.map((s) => ({ ...s, ip: '', additionalIps: [], hostNetwork: false }));
    return status;
  }
}

const deadlineEvents = (r: Recorder, uid: string) =>
  r.recent().filter((e) => e.reason === 'DeadlineExceeded' && e.involvedObject.uid === uid);

test('activeDeadlineSeconds: once passed, the sync tick fails the pod (DeadlineExceeded, one event) and kills it with its grace period', async () => {
  const recorder = new Recorder();
  // syncFrequencyMs is 60 s: the pod is synced again by the deadline handler, not by its resync.
  const { runtime, kubelet, updates, statusManager, stop } = setup({ recorder });
  updates.push({ op: 'ADD', pods: [pod('dl', { activeDeadlineSeconds: 1 })], source: 'file' });
  runtime.setContainer('dl', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('dl')?.phase === 'Running');
  assert.equal(runtime.killed.length, 0);
  await until(
    'killed',
    () => runtime.killed.some((k) => k.uid === 'dl') && kubelet.podWorkers.isPodKnownTerminated('dl'),
    10_000,
  );
  const s = statusManager.getPodStatus('dl')!;
  assert.deepEqual(
    [s.phase, s.reason, s.message],
    ['Failed', 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline'],
  );
  assert.equal(runtime.killed.find((k) => k.uid === 'dl')?.grace, 2);
  assert.ok(Date.now() - s.startTime!.getTime() >= 1000, 'not before the deadline');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(deadlineEvents(recorder, 'dl').length, 1, 'the event is recorded once, not at every sync tick');
  assert.equal(deadlineEvents(recorder, 'dl')[0]!.type, 'Normal');
  await stop();
});

test('activeDeadlineSeconds after a restart of the agent: a pod running since before it is killed at once (start time from its ready sandbox)', async () => {
  const recorder = new Recorder();
  const runtime = new SandboxRuntime();
  const hourAgo = Date.now() - 3600_000;
  runtime.setContainer('old', 'c1', 'running', 'a');
  runtime.pods[0]!.sandboxes.push({ id: 's1', ready: true, attempt: 0, createdAt: BigInt(hourAgo) * 1_000_000n });
  const { updates, statusManager, stop } = setup({ runtime, recorder });
  updates.push({
    op: 'ADD',
    pods: [pod('old', { activeDeadlineSeconds: 600 }), pod('young', { activeDeadlineSeconds: 600 })],
    source: 'file',
  });
  await until('old killed', () => runtime.killed.some((k) => k.uid === 'old'));
  const s = statusManager.getPodStatus('old')!;
  assert.deepEqual([s.phase, s.reason], ['Failed', 'DeadlineExceeded']);
  assert.equal(s.startTime!.getTime(), Math.floor(hourAgo / 1000) * 1000);
  await until('young synced', () => runtime.synced.includes('young'));
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!runtime.killed.some((k) => k.uid === 'young'), 'a pod seen for the first time starts its deadline now');
  assert.equal(deadlineEvents(recorder, 'old').length, 1);
  await stop();
});

test('HandlePodAdditions order: oldest creationTimestamp first, Dates and RFC 3339 strings alike, none first', () => {
  // Issue 18: this compared String() of the timestamps with localeCompare, so manifest pods (a
  // Date: "Wed Nov 25 …") sorted by weekday name, and the ICU collator stayed resident.
  const at = (name: string, ts?: Date | string) =>
    ({ metadata: { name, ...(ts === undefined ? {} : { creationTimestamp: ts }) } }) as unknown as Pod;
  const pods = [
    at('wed', new Date('2026-11-25T10:00:00Z')),
    at('mon', new Date('2026-11-23T10:00:00Z')),
    at('str', '2026-11-24T10:00:00Z'),
    at('none'),
    at('plus2', '2026-11-25T11:00:00+02:00'), // 09:00Z: before 'wed'
  ];
  assert.deepEqual(
    byCreationTime(pods).map((p) => p.metadata?.name),
    ['none', 'mon', 'str', 'plus2', 'wed'],
  );
  assert.equal(pods[0]!.metadata?.name, 'wed', 'the input is not reordered');
});

test('a pod removed before it ran does not lend its first-seen time to a later pod of the same UID (kubelet_pod_start_duration_seconds)', async () => {
  const { runtime, updates, statusManager, stop } = setup();
  const startDuration = async () => {
    const m = await registry.getSingleMetric('kubelet_pod_start_duration_seconds')!.get();
    return (
      m.values.find((v) => (v as { metricName?: string }).metricName === 'kubelet_pod_start_duration_seconds_sum')
        ?.value ?? 0
    );
  };
  updates.push({ op: 'ADD', pods: [pod('again')], source: 'file' });
  await until('synced', () => runtime.synced.includes('again'));
  updates.push({ op: 'REMOVE', pods: [pod('again')], source: 'file' });
  await until('killed', () => runtime.killed.some((k) => k.uid === 'again'));
  await new Promise((r) => setTimeout(r, 1000)); // housekeeping runs every 30 ms here
  const before = await startDuration();
  updates.push({ op: 'ADD', pods: [pod('again')], source: 'file' });
  await until('synced again', () => runtime.synced.filter((u) => u === 'again').length >= 2);
  runtime.setContainer('again', 'c1', 'running', 'a');
  await until('Running', () => statusManager.getPodStatus('again')?.phase === 'Running');
  const took = (await startDuration()) - before;
  assert.ok(
    took < 0.9,
    `start duration ${took.toFixed(3)} s: measured from the second ADD, not the first (>1 s earlier)`,
  );
  await stop();
});

// upstream Kubelet.SyncPod: while runtimeState.networkErrors() is set, a pod on the pod network
// fails its sync with a NetworkNotReady Warning ("network is not ready: <err>"); a hostNetwork pod
// runs (the DaemonSet that writes the CNI config is one). The syncLoop itself is not gated.
test('NetworkReady=false holds back pod-network pods only; they start once the network is ready', async () => {
  const runtime = new StoppingRuntime();
  runtime.conditions = [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
  ];
  const recorder = new Recorder();
  const { kubelet, updates, statusManager, stop } = setup({ runtime, recorder });
  const podNet = pod('podnet');
  updates.push({ op: 'ADD', pods: [pod('hostnet', { hostNetwork: true }), podNet], source: 'file' });
  await until('hostNetwork pod synced', () => runtime.synced.includes('hostnet'));
  const waiting = () => recorder.recent().filter((e) => e.involvedObject.uid === 'podnet');
  await until('NetworkNotReady event', () => waiting().length > 0);
  assert.deepEqual(
    { type: waiting()[0]!.type, reason: waiting()[0]!.reason, message: waiting()[0]!.message },
    {
      type: 'Warning',
      reason: 'NetworkNotReady',
      message:
        'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized',
    },
  );
  assert.ok(!runtime.synced.includes('podnet'), 'the pod-network pod is not started');
  assert.equal(statusManager.getPodStatus('podnet')?.phase, 'Pending');
  assert.deepEqual(
    kubelet.podManager
      .getPods()
      .map((p) => p.metadata?.uid)
      .sort(),
    ['hostnet', 'podnet'],
  );
  assert.ok(!recorder.recent().some((e) => e.involvedObject.uid === 'hostnet' && e.reason === 'NetworkNotReady'));

  runtime.conditions = runtime.conditions.map((c) => ({ ...c, status: true }));
  await kubelet.runtimeState.update(); // the 5 s updateRuntimeUp tick
  kubelet.handlePodSyncs([podNet]); // the worker's back-off expiring
  await until('pod-network pod synced', () => runtime.synced.includes('podnet'));
  await stop();
});

/** Devices at admission (upstream's resource allocator before the PredicateAdmitHandler). */
test('admission with devices: fields first, then the allocator (the pod counted active), then the fit', async () => {
  const R = 'example.com/dev';
  const seen: Array<{ uid: string; active: string[] }> = [];
  const ref: { kubelet?: Kubelet } = {};
  const devices: DeviceAdmission = {
    allocate: async (p) => {
      seen.push({ uid: p.metadata!.uid!, active: ref.kubelet!.activePods().map((a) => a.metadata!.uid!) });
      return p.metadata?.uid === 'no-dev'
        ? allocateFailure(new Error(`cannot allocate unregistered device ${R}`))
        : { admit: true };
    },
    extendedAllocatable: () => ({ [R]: 1 }),
  };
  const { runtime, kubelet, updates, statusManager, stop } = setup({ devices });
  ref.kubelet = kubelet;
  const wants = (n: string) => ({ containers: [{ name: 'a', image: 'x', resources: { limits: { [R]: n } } }] });
  const dra = pod('dra', { resourceClaims: [{ name: 'gpu', resourceClaimName: 'c' }] } as Partial<
    NonNullable<Pod['spec']>
  >);
  updates.push({
    op: 'ADD',
    pods: [dra, pod('no-dev', wants('1')), pod('fits', wants('1')), pod('over', wants('1'))],
    source: 'file',
  });
  await until('over refused', () => statusManager.getPodStatus('over')?.reason === `OutOf${R}`);
  assert.equal(statusManager.getPodStatus('dra')?.reason, 'PodFeatureUnsupported');
  assert.ok(!seen.some((s) => s.uid === 'dra'), 'a refused DRA pod never reaches a plugin');
  const noDev = statusManager.getPodStatus('no-dev')!;
  assert.equal(noDev.reason, 'UnexpectedAdmissionError');
  assert.equal(
    noDev.message,
    `Pod was rejected: Allocate failed due to cannot allocate unregistered device ${R}, which is unexpected`,
  );
  assert.ok(seen.find((s) => s.uid === 'fits')?.active.includes('fits'), 'the pod being admitted is active');
  assert.equal(
    statusManager.getPodStatus('over')?.message,
    `Pod was rejected: Node didn't have enough resource: ${R}, requested: 1, used: 1, capacity: 1`,
  );
  await until('fits synced', () => runtime.synced.includes('fits'));
  assert.ok(!runtime.synced.includes('no-dev'));
  await stop();
});
