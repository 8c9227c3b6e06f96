/**
 * The eviction helpers, case by case as upstream's pkg/kubelet/eviction/helpers_test.go:
 * threshold parsing, ranking for each pressure, thresholds met (now, and for their grace period),
 * node conditions and their transition period, the order thresholds are acted on, the signals
 * observed from a stats pass, and the eviction message.
 *
 * Not mirrored: evictionMinimumReclaim (not supported: the enforceMinReclaim rows), the
 * allocatableMemory.available and containerfs.* signals (not observed: TestAddAllocatableThresholds,
 * TestAddContainerFsThresholds, TestGetReclaimableThreshold), thresholdsUpdatedStats (we take a
 * fresh stats pass every time), and the InPlacePodVerticalScaling row of the message test.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { parseThresholds, rankForEviction, observe } from '../../src/eviction/index.js';
import { evictionMessage } from '../../src/eviction/message.js';
import {
  byEvictionPriority,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
} from '../../src/eviction/thresholds.js';
import type { NodeConditionType, Observation, Signal, Threshold } from '../../src/eviction/types.js';
import type { PodSample, StatsSnapshot } from '../../src/stats/types.js';

const Mi = 1n << 20n;
const Gi = 1n << 30n;
const time = new Date(0);

// ---- TestParseThresholdConfig ----------------------------------------------------------------

type Want = [Signal, 'hard' | 'soft', string, number?];
function view(t: Threshold): Want {
  const value = t.percentage !== undefined ? `${+(t.percentage * 100).toFixed(4)}%` : `${t.quantity}`;
  return t.hard ? [t.signal, 'hard', value] : [t.signal, 'soft', value, t.gracePeriodMs];
}
const sortW = (w: Want[]) => [...w].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('thresholds from the configuration', () => {
  // upstream pkg/kubelet/eviction/helpers_test.go TestParseThresholdConfig
  const grace = {
    'memory.available': '30s',
    'imagefs.available': '30s',
    'nodefs.available': '30s',
    'imagefs.inodesFree': '30s',
    'nodefs.inodesFree': '30s',
  };
  const rows: Array<[string, Record<string, string>, Record<string, string>, Want[]]> = [
    ['no values', {}, {}, []],
    [
      'all memory eviction values',
      { 'memory.available': '150Mi' },
      { 'memory.available': '300Mi' },
      [
        ['memory.available', 'hard', `${150n * Mi}`],
        ['memory.available', 'soft', `${300n * Mi}`, 30_000],
      ],
    ],
    [
      'all memory eviction values in percentages',
      { 'memory.available': '10%' },
      { 'memory.available': '30%' },
      [
        ['memory.available', 'hard', '10%'],
        ['memory.available', 'soft', '30%', 30_000],
      ],
    ],
    [
      'disk eviction values',
      { 'imagefs.available': '150Mi', 'nodefs.available': '100Mi' },
      { 'imagefs.available': '300Mi', 'nodefs.available': '200Mi' },
      [
        ['imagefs.available', 'hard', `${150n * Mi}`],
        ['nodefs.available', 'hard', `${100n * Mi}`],
        ['imagefs.available', 'soft', `${300n * Mi}`, 30_000],
        ['nodefs.available', 'soft', `${200n * Mi}`, 30_000],
      ],
    ],
    [
      'disk eviction values in percentages',
      { 'imagefs.available': '15%', 'nodefs.available': '10.5%' },
      { 'imagefs.available': '30%', 'nodefs.available': '20.5%' },
      [
        ['imagefs.available', 'hard', '15%'],
        ['nodefs.available', 'hard', '10.5%'],
        ['imagefs.available', 'soft', '30%', 30_000],
        ['nodefs.available', 'soft', '20.5%', 30_000],
      ],
    ],
    [
      'inode eviction values',
      { 'imagefs.inodesFree': '150Mi', 'nodefs.inodesFree': '100Mi' },
      { 'imagefs.inodesFree': '300Mi', 'nodefs.inodesFree': '200Mi' },
      [
        ['imagefs.inodesFree', 'hard', `${150n * Mi}`],
        ['nodefs.inodesFree', 'hard', `${100n * Mi}`],
        ['imagefs.inodesFree', 'soft', `${300n * Mi}`, 30_000],
        ['nodefs.inodesFree', 'soft', `${200n * Mi}`, 30_000],
      ],
    ],
    ['disable via 0%', { 'memory.available': '0%' }, { 'memory.available': '0%' }, []],
    ['disable via 100%', { 'memory.available': '100%' }, { 'memory.available': '100%' }, []],
  ];
  for (const [name, hard, soft, want] of rows) {
    it(name, () => assert.deepEqual(sortW(parseThresholds(hard, soft, grace).map(view)), sortW(want)));
  }

  // The error rows: refused where the configuration is read (src/config), before a threshold exists.
  const problemsOf = (...flags: string[]): string[] => {
    try {
      loadConfig(['--hostname-override=n', ...flags], {});
      return [];
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems;
    }
  };
  const refused: Array<[string, string[]]> = [
    ['invalid-signal', ['--eviction-hard=mem.available<150Mi']],
    ['hard-signal-negative', ['--eviction-hard=memory.available<-150Mi']],
    ['hard-signal-negative-percentage', ['--eviction-hard=memory.available<-15%']],
    ['hard-signal-percentage-greater-than-100%', ['--eviction-hard=memory.available<150%']],
    ['soft-signal-negative', ['--eviction-soft=memory.available<-150Mi']],
    ['valid-and-invalid-signal', ['--eviction-hard=memory.available<150Mi,invalid.foo<150Mi']],
    [
      'soft-negative-grace-period',
      ['--eviction-soft=memory.available<150Mi', '--eviction-soft-grace-period=memory.available=-30s'],
    ],
  ];
  for (const [name, flags] of refused) {
    it(`refused: ${name}`, () => assert.notDeepEqual(problemsOf(...flags), []));
  }
  it(
    'refused: soft-no-grace-period',
    { todo: 'src/config accepts a soft threshold without a grace period (upstream refuses it); it then acts at once' },
    () => {
      assert.notDeepEqual(problemsOf('--eviction-soft=memory.available<150Mi'), []);
    },
  );
});

// ---- ranking ---------------------------------------------------------------------------------

function pod(name: string, priority: number, requests: Record<string, string> = {}): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: name },
    spec: { priority, containers: [{ name, image: 'x', resources: { requests } }] },
  } as Pod;
}

function sample(p: Pod, use: { memory?: bigint; disk?: bigint; inodes?: bigint; pids?: bigint }): PodSample {
  const memory = { time, workingSetBytes: use.memory ?? 0n };
  return {
    uid: p.metadata!.uid!,
    name: p.metadata!.name!,
    namespace: 'ns',
    startTime: time,
    cgroup: '',
    cpu: { time },
    memory,
    pids: use.pids ?? 0n,
    ephemeralStorage: { time, usedBytes: use.disk ?? 0n, inodesUsed: use.inodes ?? 0n },
    containers: [{ id: 'id', name: p.metadata!.name!, image: 'x', startTime: time, cgroup: '', cpu: { time }, memory }],
  };
}

type RankRow = [
  name: string,
  signal: Signal,
  pods: Array<[Pod, Parameters<typeof sample>[1] | undefined]>,
  want: string[],
];
const low = -1,
  high = 1;

/**
 * upstream TestOrderedByPriorityDisk / TestOrderedByPriorityMemory, one table for both: eight pods
 * above or below their request (`resource`), of low or high priority, using much or little.
 */
function exceedsThenPriority(name: string, signal: Signal, resource: string, use: 'memory' | 'disk'): RankRow {
  const row = (
    n: string,
    prio: number,
    request: string | undefined,
    usage: bigint,
  ): [Pod, Parameters<typeof sample>[1]] => [
    pod(n, prio, request ? { [resource]: request } : {}),
    { [use]: usage * Mi },
  ];
  const order = [
    'above-requests-low-priority-high-usage',
    'above-requests-low-priority-low-usage',
    'above-requests-high-priority-high-usage',
    'above-requests-high-priority-low-usage',
    'below-requests-low-priority-high-usage',
    'below-requests-low-priority-low-usage',
    'below-requests-high-priority-high-usage',
    'below-requests-high-priority-low-usage',
  ];
  return [
    name,
    signal,
    [
      row(order[7]!, high, '1Gi', 200n),
      row(order[6]!, high, '1Gi', 800n),
      row(order[5]!, low, '1Gi', 200n),
      row(order[4]!, low, '1Gi', 800n),
      row(order[3]!, high, '100Mi', 150n),
      row(order[2]!, high, '100Mi', 600n),
      row(order[1]!, low, undefined, 50n),
      row(order[0]!, low, undefined, 500n),
    ],
    order,
  ];
}

describe('ranking', () => {
  const rows: RankRow[] = [
    // upstream helpers_test.go TestOrderedByExceedsRequestMemory
    [
      'exceeds memory request first',
      'memory.available',
      [
        [pod('below-requests', -1, { memory: '200Mi' }), { memory: 199n * Mi }],
        [pod('exceeds-requests', 1, { memory: '100Mi' }), { memory: 101n * Mi }],
      ],
      ['exceeds-requests', 'below-requests'],
    ],
    // upstream helpers_test.go TestOrderedByExceedsRequestDisk
    [
      'exceeds ephemeral-storage request first',
      'nodefs.available',
      [
        [pod('below-requests', -1, { 'ephemeral-storage': '200Mi' }), { disk: 199n * Mi }],
        [pod('exceeds-requests', 1, { 'ephemeral-storage': '100Mi' }), { disk: 101n * Mi }],
      ],
      ['exceeds-requests', 'below-requests'],
    ],
    // upstream helpers_test.go TestOrderedByPriority
    [
      'lower priority first',
      'pid.available',
      [
        [pod('high-priority', 12534), { pids: 1n }],
        [pod('medium-priority', 1), { pids: 1n }],
        [pod('low-priority', -134), { pids: 1n }],
      ],
      ['low-priority', 'medium-priority', 'high-priority'],
    ],
    // upstream helpers_test.go TestOrderedbyDisk: usage above the ephemeral-storage request
    [
      'disk: the largest usage above request first',
      'imagefs.available',
      [
        [pod('best-effort-high', 0), { disk: 300n * Mi }],
        [pod('best-effort-low', 0), { disk: 100n * Mi }],
        [pod('burstable-high', 0, { 'ephemeral-storage': '100Mi' }), { disk: 350n * Mi }],
        [pod('burstable-low', 0, { 'ephemeral-storage': '100Mi' }), { disk: 110n * Mi }],
        [pod('guaranteed-high', 0, { 'ephemeral-storage': '400Mi' }), { disk: 375n * Mi }],
        [pod('guaranteed-low', 0, { 'ephemeral-storage': '400Mi' }), { disk: 120n * Mi }],
      ],
      ['best-effort-high', 'burstable-high', 'best-effort-low', 'burstable-low', 'guaranteed-high', 'guaranteed-low'],
    ],
    // upstream helpers_test.go TestOrderedbyInodes
    [
      'inodes: the largest user first',
      'nodefs.inodesFree',
      [
        [pod('low', 0), { inodes: 200_000n }],
        [pod('medium', 0), { inodes: 300_000n }],
        [pod('high', 0), { inodes: 400_000n }],
      ],
      ['high', 'medium', 'low'],
    ],
    // upstream helpers_test.go TestOrderedByPriorityDisk
    exceedsThenPriority(
      'disk: exceeds request, then priority, then usage above request',
      'nodefs.available',
      'ephemeral-storage',
      'disk',
    ),
    // upstream helpers_test.go TestOrderedByPriorityInodes
    [
      'inodes: priority, then usage',
      'imagefs.inodesFree',
      [
        [pod('high-priority-low-usage', high), { inodes: 150_000n }],
        [pod('high-priority-high-usage', high), { inodes: 350_000n }],
        [pod('low-priority-low-usage', low), { inodes: 100_000n }],
        [pod('low-priority-high-usage', low), { inodes: 400_000n }],
      ],
      ['low-priority-high-usage', 'low-priority-low-usage', 'high-priority-high-usage', 'high-priority-low-usage'],
    ],
    // upstream helpers_test.go TestOrderedByMemory
    [
      'memory: the largest usage above request first',
      'memory.available',
      [
        [pod('best-effort-high', 0), { memory: 500n * Mi }],
        [pod('best-effort-low', 0), { memory: 300n * Mi }],
        [pod('burstable-high', 0, { memory: '100Mi' }), { memory: 800n * Mi }],
        [pod('burstable-low', 0, { memory: '100Mi' }), { memory: 300n * Mi }],
        [pod('guaranteed-high', 0, { memory: '1Gi' }), { memory: 800n * Mi }],
        [pod('guaranteed-low', 0, { memory: '1Gi' }), { memory: 200n * Mi }],
      ],
      ['burstable-high', 'best-effort-high', 'best-effort-low', 'burstable-low', 'guaranteed-high', 'guaranteed-low'],
    ],
    // upstream helpers_test.go TestOrderedByPriorityMemory
    exceedsThenPriority(
      'memory: exceeds request, then priority, then usage above request',
      'memory.available',
      'memory',
      'memory',
    ),
    // upstream helpers_test.go TestOrderedByPriorityProcess
    [
      'pids: priority, then process count',
      'pid.available',
      [
        [pod('high-priority-low-usage', high), { pids: 5n }],
        [pod('high-priority-high-usage', high), { pids: 20n }],
        [pod('low-priority-low-usage', low), { pids: 6n }],
        [pod('low-priority-high-usage', low), { pids: 20n }],
      ],
      ['low-priority-high-usage', 'low-priority-low-usage', 'high-priority-high-usage', 'high-priority-low-usage'],
    ],
    // upstream helpers.go exceedMemoryRequests / memory: "prioritize evicting the pod for which no stats were found"
    [
      'a pod without stats goes first',
      'memory.available',
      [
        [pod('hog', 0), { memory: 900n * Mi }],
        [pod('unseen', 0), undefined],
        [pod('quiet', 0, { memory: '1Gi' }), { memory: 10n * Mi }],
      ],
      ['unseen', 'hog', 'quiet'],
    ],
    [
      'a pod without stats goes first within its priority (pids)',
      'pid.available',
      [
        [pod('busy', 0), { pids: 50n }],
        [pod('unseen', 0), undefined],
        [pod('unseen-important', 5), undefined],
      ],
      ['unseen', 'busy', 'unseen-important'],
    ],
  ];
  for (const [name, signal, pods, want] of rows) {
    it(name, () => {
      const samples = pods.flatMap(([p, use]) => (use ? [sample(p, use)] : []));
      assert.deepEqual(
        rankForEviction(
          pods.map(([p]) => p),
          samples,
          signal,
        ).map((c) => c.pod.metadata!.name),
        want,
      );
    });
  }
});

// ---- thresholds met, grace periods, node conditions ----------------------------------------

const hardMemory1Gi: Threshold = { signal: 'memory.available', quantity: 1n * Gi, hard: true, gracePeriodMs: 0 };
const softMemory2Gi: Threshold = { signal: 'memory.available', quantity: 2n * Gi, hard: false, gracePeriodMs: 60_000 };
const obs = (entries: Array<[Signal, bigint, bigint?]>) =>
  new Map<Signal, Observation>(entries.map(([s, available, capacity]) => [s, { available, capacity: capacity ?? 0n }]));

describe('thresholds met', () => {
  // upstream helpers_test.go TestThresholdsMet (enforceMinReclaim false)
  const rows: Array<[string, Threshold[], Map<Signal, Observation>, Threshold[]]> = [
    ['empty', [], obs([]), []],
    ['threshold-met-memory', [hardMemory1Gi], obs([['memory.available', 500n * Mi]]), [hardMemory1Gi]],
    ['threshold-not-met', [hardMemory1Gi], obs([['memory.available', 2n * Gi]]), []],
    ['signal not observed', [hardMemory1Gi], obs([['nodefs.available', 1n]]), []],
  ];
  for (const [name, thresholds, o, want] of rows) it(name, () => assert.deepEqual(thresholdsMet(thresholds, o), want));

  // upstream helpers_test.go TestPercentageThresholdsMet (enforceMinReclaim false)
  const memory20: Threshold = { signal: 'memory.available', percentage: 0.2, hard: true, gracePeriodMs: 0 };
  const nodefs30: Threshold = { signal: 'nodefs.available', percentage: 0.3, hard: true, gracePeriodMs: 0 };
  const pct = [memory20, nodefs30];
  const pctRows: Array<[string, Map<Signal, Observation>, Threshold[]]> = [
    [
      'BothMet',
      obs([
        ['memory.available', 100n * Mi, 1000n * Mi],
        ['nodefs.available', 100n * Gi, 1000n * Gi],
      ]),
      pct,
    ],
    [
      'NoneMet',
      obs([
        ['memory.available', 300n * Mi, 1000n * Mi],
        ['nodefs.available', 400n * Gi, 1000n * Gi],
      ]),
      [],
    ],
    [
      'DiskMet',
      obs([
        ['memory.available', 300n * Mi, 1000n * Mi],
        ['nodefs.available', 100n * Gi, 1000n * Gi],
      ]),
      [nodefs30],
    ],
    [
      'MemoryMet',
      obs([
        ['memory.available', 100n * Mi, 1000n * Mi],
        ['nodefs.available', 400n * Gi, 1000n * Gi],
      ]),
      [memory20],
    ],
  ];
  for (const [name, o, want] of pctRows) it(`percentage: ${name}`, () => assert.deepEqual(thresholdsMet(pct, o), want));
});

describe('grace periods and node conditions', () => {
  const now = 1_000_000;
  it('thresholdsFirstObservedAt', () => {
    // upstream helpers_test.go TestThresholdsFirstObservedAt
    assert.deepEqual(thresholdsFirstObservedAt([], new Map(), now), new Map());
    assert.deepEqual(thresholdsFirstObservedAt([hardMemory1Gi], new Map(), now), new Map([[hardMemory1Gi, now]]));
    assert.deepEqual(
      thresholdsFirstObservedAt([hardMemory1Gi], new Map([[hardMemory1Gi, now - 60_000]]), now),
      new Map([[hardMemory1Gi, now - 60_000]]),
    );
    assert.deepEqual(
      thresholdsFirstObservedAt([], new Map([[hardMemory1Gi, now - 60_000]]), now),
      new Map(),
      'a threshold no longer met starts over',
    );
  });

  // upstream helpers_test.go TestThresholdsMetGracePeriod
  const graceRows: Array<[string, Map<Threshold, number>, Threshold[]]> = [
    ['empty', new Map(), []],
    ['hard-threshold-met', new Map([[hardMemory1Gi, now]]), [hardMemory1Gi]],
    ['soft-threshold-not-met', new Map([[softMemory2Gi, now]]), []],
    ['soft-threshold-met', new Map([[softMemory2Gi, now - 120_000]]), [softMemory2Gi]],
  ];
  for (const [name, observedAt, want] of graceRows)
    it(`thresholdsMetGracePeriod: ${name}`, () => assert.deepEqual(thresholdsMetGracePeriod(observedAt, now), want));

  it('nodeConditions', () => {
    // upstream helpers_test.go TestNodeConditions (plus the disk and pid signals)
    const t = (signal: Signal): Threshold => ({ signal, quantity: 1n, hard: true, gracePeriodMs: 0 });
    assert.deepEqual(nodeConditions([]), []);
    assert.deepEqual(nodeConditions([t('memory.available')]), ['MemoryPressure']);
    assert.deepEqual(nodeConditions([t('nodefs.available'), t('imagefs.inodesFree'), t('pid.available')]), [
      'DiskPressure',
      'PIDPressure',
    ]);
  });

  // upstream helpers_test.go TestNodeConditionsLastObservedAt
  const lastRows: Array<[string, NodeConditionType[], Map<NodeConditionType, number>, Map<NodeConditionType, number>]> =
    [
      ['no-previous-observation', ['MemoryPressure'], new Map(), new Map([['MemoryPressure', now]])],
      [
        'previous-observation',
        ['MemoryPressure'],
        new Map([['MemoryPressure', now - 60_000]]),
        new Map([['MemoryPressure', now]]),
      ],
      ['old-observation', [], new Map([['MemoryPressure', now - 60_000]]), new Map([['MemoryPressure', now - 60_000]])],
    ];
  for (const [name, observed, last, want] of lastRows)
    it(`nodeConditionsLastObservedAt: ${name}`, () =>
      assert.deepEqual(nodeConditionsLastObservedAt(observed, last, now), want));

  // upstream helpers_test.go TestNodeConditionsObservedSince
  const sinceRows: Array<[string, number, NodeConditionType[]]> = [
    ['in-period', 120_000, ['MemoryPressure']],
    ['out-of-period', 30_000, []],
  ];
  for (const [name, period, want] of sinceRows) {
    it(`nodeConditionsObservedSince: ${name}`, () =>
      assert.deepEqual(nodeConditionsObservedSince(new Map([['MemoryPressure', now - 60_000]]), period, now), want));
  }

  // upstream helpers_test.go TestSortByEvictionPriority
  const t = (signal: Signal, hard = true): Threshold => ({ signal, quantity: 1n, hard, gracePeriodMs: hard ? 0 : 1 });
  const prioRows: Array<[string, Threshold[], string[]]> = [
    ['empty threshold list', [], []],
    [
      'memory first',
      [t('nodefs.available'), t('pid.available'), t('memory.available')],
      ['memory.available', 'nodefs.available', 'pid.available'],
    ],
    [
      'memory first, even soft (then ours: hard before soft)',
      [t('nodefs.available', false), t('nodefs.available'), t('memory.available', false)],
      ['memory.available/soft', 'nodefs.available/hard', 'nodefs.available/soft'],
    ],
  ];
  for (const [name, thresholds, want] of prioRows) {
    it(`byEvictionPriority: ${name}`, () => {
      const got = byEvictionPriority(thresholds).map((x) =>
        want.some((w) => w.includes('/')) ? `${x.signal}/${x.hard ? 'hard' : 'soft'}` : x.signal,
      );
      assert.deepEqual(got, want);
    });
  }
});

// ---- signal observations ---------------------------------------------------------------------

describe('signal observations', () => {
  // upstream helpers_test.go TestMakeSignalObservations (the signals we observe)
  it('memory, nodefs, imagefs (bytes and inodes) and pids from one stats pass', () => {
    const snap: StatsSnapshot = {
      time,
      node: {
        nodeName: 'n',
        startTime: time,
        cpu: { time },
        memory: { time, availableBytes: 1n * Gi, workingSetBytes: 1n * Gi },
        fs: { time, availableBytes: 1024n, capacityBytes: 2048n, inodesFree: 1024n, inodes: 1024n * 1024n },
        imageFs: { time, availableBytes: Mi, capacityBytes: 2n * Mi, inodesFree: 1024n, inodes: 1024n * 1024n },
        maxPid: 255_816n,
        curProc: 1000n,
      },
      pods: [],
    };
    const o = observe(snap, 2n * Gi);
    assert.deepEqual(Object.fromEntries(o), {
      'memory.available': { available: 1n * Gi, capacity: 2n * Gi },
      'nodefs.available': { available: 1024n, capacity: 2048n },
      'nodefs.inodesFree': { available: 1024n, capacity: 1024n * 1024n },
      'imagefs.available': { available: Mi, capacity: 2n * Mi },
      'imagefs.inodesFree': { available: 1024n, capacity: 1024n * 1024n },
      'pid.available': { available: 255_816n - 1000n, capacity: 255_816n },
    });
  });

  it('a signal with no stats is not observed (so its thresholds are never met)', () => {
    const o = observe(
      { time, node: { nodeName: 'n', startTime: time, cpu: { time }, memory: { time } }, pods: [] },
      2n * Gi,
    );
    assert.deepEqual([...o.keys()], []);
  });
});

// ---- eviction message ------------------------------------------------------------------------

describe('eviction message', () => {
  // upstream helpers.go evictionMessage (helpers_test.go TestEvictonMessageWithResourceResize,
  // without the InPlacePodVerticalScaling gate): only containers above their request are named.
  const twoContainers = {
    metadata: { name: 'p', namespace: 'ns', uid: 'p' },
    spec: {
      containers: [
        { name: 'over', image: 'x', resources: { requests: { memory: '100Mi' } } },
        { name: 'under', image: 'x', resources: { requests: { memory: '200Mi' } } },
      ],
    },
  } as Pod;
  const mem = (ws: bigint) => ({ time, workingSetBytes: ws });
  const s: PodSample = {
    uid: 'p',
    name: 'p',
    namespace: 'ns',
    startTime: time,
    cgroup: '',
    cpu: { time },
    memory: mem(300n * Mi),
    containers: [
      { id: 'a', name: 'over', image: 'x', startTime: time, cgroup: '', cpu: { time }, memory: mem(150n * Mi) },
      { id: 'b', name: 'under', image: 'x', startTime: time, cgroup: '', cpu: { time }, memory: mem(150n * Mi) },
    ],
  };
  it('names the container over its request, not the one under', () => {
    const m = evictionMessage(
      hardMemory1Gi,
      { available: 512n * Mi, capacity: 8n * Gi },
      { pod: twoContainers, usage: 300n * Mi, request: 300n * Mi, sample: s },
    );
    assert.equal(
      m,
      'The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. Container over was using 150Mi, request is 100Mi, has larger consumption of memory. Eviction signal: memory.available.',
    );
  });
  it('disk and inodes: the threshold and what was available', () => {
    const t: Threshold = { signal: 'nodefs.inodesFree', percentage: 0.05, hard: true, gracePeriodMs: 0 };
    const m = evictionMessage(t, { available: 10n, capacity: 1000n }, { pod: twoContainers, usage: 0n, request: 0n });
    assert.equal(
      m,
      'The node was low on resource: inodes. Threshold quantity: 50, available: 10. Eviction signal: nodefs.inodesFree.',
    );
  });
});
