// The eviction manager on a fake stats provider: thresholds (hard, soft with grace), node
// conditions with the transition period, ranking, the evicted pod's message, and admission.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { createEvictionManager, parseThresholds, rankForEviction } from '../../src/eviction/index.js';
import type { PodSample, StatsProvider, StatsSnapshot } from '../../src/stats/types.js';

const Mi = 1n << 20n;
const time = new Date(0);

function pod(name: string, opts: { memRequest?: string; priority?: number } = {}): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: {
      priority: opts.priority,
      containers: [
        {
          name: 'c',
          image: 'x',
          ...(opts.memRequest
            ? { resources: { requests: { memory: opts.memRequest }, limits: { memory: opts.memRequest } } }
            : {}),
        },
      ],
    },
  } as Pod;
}

function sample(p: Pod, ws: bigint): PodSample {
  const memory = { time, workingSetBytes: ws };
  return {
    uid: p.metadata!.uid!,
    name: p.metadata!.name!,
    namespace: 'ns',
    startTime: time,
    cgroup: '',
    cpu: { time },
    memory,
    containers: [{ id: 'id', name: 'c', image: 'x', startTime: time, cgroup: '', cpu: { time }, memory }],
  };
}

function fakeStats(avail: { v: bigint }, pods: PodSample[]): StatsProvider {
  const snap = (): StatsSnapshot => ({
    time,
    node: { nodeName: 'n', startTime: time, cpu: { time }, memory: { time, availableBytes: avail.v } },
    pods,
  });
  return {
    latest: async () => snap(),
    collect: async () => snap(),
    onPass: () => undefined,
    start: () => undefined,
    stop: () => undefined,
  };
}

it('parses hard and soft thresholds; 0 disables a signal', () => {
  const t = parseThresholds(
    { 'memory.available': '100Mi', 'nodefs.available': '10%', 'imagefs.available': '0%' },
    { 'memory.available': '1Gi' },
    { 'memory.available': '1m30s' },
  );
  assert.deepEqual(
    t.map((x) => [x.signal, x.hard, x.quantity, x.percentage, x.gracePeriodMs]),
    [
      ['memory.available', true, 100n * Mi, undefined, 0],
      ['nodefs.available', true, undefined, 0.1, 0],
      ['memory.available', false, 1024n * Mi, undefined, 90_000],
    ],
  );
});

it('ranks pods over their request first, then by priority, then by usage above request', () => {
  const a = pod('a', { memRequest: '100Mi' });
  const b = pod('b');
  const c = pod('c', { priority: 10 });
  const d = pod('d');
  const ranked = rankForEviction(
    [a, b, c, d],
    [sample(a, 90n * Mi), sample(b, 10n * Mi), sample(c, 500n * Mi), sample(d, 20n * Mi)],
    'memory.available',
  );
  assert.deepEqual(
    ranked.map((x) => x.pod.metadata!.name),
    ['d', 'b', 'c', 'a'],
  );
});

it('a hard threshold evicts the first-ranked pod with a message naming the signal; conditions and admission follow', async () => {
  const hog = pod('hog');
  const quiet = pod('quiet', { memRequest: '200Mi' });
  const avail = { v: 50n * Mi };
  const evicted: Array<{ pod: string; message: string; grace?: number }> = [];
  const events: string[] = [];
  let now = 1_000_000;
  const m = createEvictionManager({
    evictionHard: { 'memory.available': '100Mi' },
    evictionSoft: {},
    evictionSoftGracePeriod: {},
    stats: fakeStats(avail, [sample(hog, 300n * Mi), sample(quiet, 100n * Mi)]),
    kubelet: {
      activePods: () => [quiet, hog],
      evictPod: async (p, message, grace) => {
        evicted.push({ pod: p.metadata!.name!, message, grace });
      },
    },
    recorder: { event: (_ref, type, reason) => events.push(`${type}/${reason}`) },
    memoryCapacity: 8192n * Mi,
    pressureTransitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
    monitoringPeriodMs: 10_000,
    now: () => now,
  });
  assert.equal(m.isUnderMemoryPressure(), false);
  assert.equal(m.admit(pod('be')).admit, true);
  const victim = await m.synchronize();
  assert.equal(victim?.metadata?.name, 'hog');
  assert.equal(evicted[0]!.grace, 1);
  assert.match(
    evicted[0]!.message,
    /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: 50Mi\. Container c was using 300Mi, request is 0, has larger consumption of memory\. Eviction signal: memory\.available\.$/,
  );
  assert.deepEqual(events, ['Warning/Evicted']);
  assert.equal(m.isUnderMemoryPressure(), true);
  const mp = m.nodeConditions().find((c) => c.type === 'MemoryPressure')!;
  assert.equal(mp.status, 'True');
  assert.equal(mp.reason, 'KubeletHasInsufficientMemory');
  const refused = m.admit(pod('be2'));
  assert.deepEqual(refused, { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
  assert.equal(
    m.admit(pod('burst', { memRequest: '10Mi' })).admit,
    true,
    'only BestEffort is refused under memory pressure',
  );

  // Pressure gone: the condition stays True for the transition period, then turns False.
  avail.v = 1000n * Mi;
  now += 60_000;
  assert.equal(await m.synchronize(), undefined);
  assert.equal(m.isUnderMemoryPressure(), true);
  now += 300_000;
  await m.synchronize();
  assert.equal(m.isUnderMemoryPressure(), false);
  assert.equal(m.nodeConditions().find((c) => c.type === 'MemoryPressure')!.reason, 'KubeletHasSufficientMemory');
});

it('a soft threshold waits for its grace period', async () => {
  const p = pod('p');
  const evicted: string[] = [];
  let now = 0;
  const m = createEvictionManager({
    evictionHard: {},
    evictionSoft: { 'memory.available': '1Gi' },
    evictionSoftGracePeriod: { 'memory.available': '30s' },
    stats: fakeStats({ v: 500n * Mi }, [sample(p, 10n * Mi)]),
    kubelet: {
      activePods: () => [p],
      evictPod: async (x) => {
        evicted.push(x.metadata!.name!);
      },
    },
    memoryCapacity: 8192n * Mi,
    pressureTransitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 5,
    monitoringPeriodMs: 10_000,
    now: () => now,
  });
  await m.synchronize();
  assert.deepEqual(evicted, [], 'grace period not over');
  assert.equal(m.isUnderMemoryPressure(), true, 'the condition is set at once');
  now += 31_000;
  await m.synchronize();
  assert.deepEqual(evicted, ['p']);
});
