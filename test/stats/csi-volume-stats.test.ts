// CSI volume stats: NodeGetVolumeStats of real volumes of the test CSI driver (its own process,
// real bind mounts, so root) into the Summary API's pods[].volume and the kubelet_volume_stats_*
// collector; a stalled driver keeps its last value and holds up nobody. Tables after upstream's
// pkg/kubelet/metrics/collectors/volume_stats_test.go and server/stats volume_stat_calculator.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { Pod } from '../../src/api/types.js';
import type { EventType, ObjectReference } from '../../src/events/index.js';
import { metrics } from '../../src/metrics/index.js';
import { CsiVolumeStatsCache, csiVolumeStats, pvcRefOf } from '../../src/stats/csi-volume-stats.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { createTsCgroupReader } from '../../src/stats/cgroup-reader-ts.js';
import { CgroupStatsProvider } from '../../src/stats/provider.js';
import { buildSummary, stringifyExact } from '../../src/stats/summary.js';
import type { VolumeStats } from '../../src/stats/types.js';
import { registerVolumeStatsCollector, statsByClaim } from '../../src/stats/volume-stats-metrics.js';
import type { CsiDriver } from '../../src/volume/csi/csi-registration.js';
import type { MountedVolume, PodVolumes } from '../../src/volume/types.js';
import { makeCgroupTree } from '../../bench/fixtures/cgroup-tree.js';
import { readCallLog } from '../support/csi-driver.js';
import { testTempDir } from '../support/temp-dir.js';
import { cleanUp, isRoot, startTestDriver, type TestDriver } from '../volume/csi/published-volume.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- Summary JSON read back */

const NS = 'bench';

function pod(uid: string, name: string, volumes: any[]): Pod {
  return { metadata: { uid, name, namespace: NS }, spec: { containers: [], volumes } } as Pod;
}

/** A volume manager that reports what the test mounted. */
class Mounted {
  readonly pods = new Map<string, Map<string, MountedVolume>>();
  getMountedVolumesForPod(uid: string): PodVolumes {
    return { mounted: this.pods.get(uid) ?? new Map(), errors: new Map() };
  }
}

describe('CSI volume stats', { skip: !isRoot && 'needs root (bind mounts)' }, () => {
  const dir = testTempDir('kts-csi-stats-');
  let fast: TestDriver;
  let slow: TestDriver;
  const drivers = new Map<string, CsiDriver>();
  const events: Array<[ObjectReference, EventType, string, string]> = [];
  const recorder = { event: (...e: [ObjectReference, EventType, string, string]) => void events.push(e) };
  const tree = makeCgroupTree(mkdtempSync(join(testTempDir('kts-csi-stats-tree-'), 'v2')), {
    mode: 'v2',
    pods: 2,
    containersPerPod: 1,
  });
  const [uidA, uidB] = tree.pods.map((p) => p.uid) as [string, string];
  const mounted = new Mounted();
  const pods: Pod[] = [];

  before(async () => {
    fast = await startTestDriver(dir, 'fast.csi.test');
    slow = await startTestDriver(dir, 'slow.csi.test');
    for (const d of [fast, slow]) drivers.set(d.driver.name, d.driver);
    pods.push(
      pod(uidA, 'pod-0', [
        { name: 'data', persistentVolumeClaim: { claimName: 'claim-a' } },
        { name: 'scratch', csi: { driver: 'fast.csi.test' } },
        { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: {} } } },
        { name: 'cache', emptyDir: {} },
      ]),
      pod(uidB, 'pod-1', [{ name: 'db', persistentVolumeClaim: { claimName: 'claim-b' } }]),
    );
    mounted.pods.set(
      uidA,
      new Map<string, MountedVolume>([
        ['data', { hostPath: '', readOnly: false, csi: await fast.publish('vol-a') }],
        ['scratch', { hostPath: '', readOnly: false, csi: await fast.publish('vol-s') }],
        ['eph', { hostPath: '', readOnly: false, csi: await fast.publish('vol-e') }],
        ['cache', { hostPath: join(dir, 'cache'), readOnly: false }],
      ]),
    );
    mounted.pods.set(uidB, new Map([['db', { hostPath: '', readOnly: false, csi: await slow.publish('vol-b') }]]));
  });
  after(() => cleanUp(dir, [fast, slow]));

  const cache = (opts: { volumeHealth?: boolean; timeoutMs?: number } = {}) =>
    new CsiVolumeStatsCache({
      pods: () => pods,
      volumes: mounted,
      drivers: { get: (n) => drivers.get(n) },
      recorder,
      timeoutMs: opts.timeoutMs ?? 5000,
      volumeHealth: opts.volumeHealth ?? false,
    });

  it('puts NodeGetVolumeStats of each CSI volume into the Summary API pods[].volume, with pvcRef', async () => {
    const c = cache();
    await c.refresh();
    const provider = new CgroupStatsProvider({
      nodeName: 'node-a',
      layout: createCgroupLayout(tree.mounts),
      reader: createTsCgroupReader(),
      listPods: async () => structuredClone(tree.pods),
      cgroupRoot: '/',
      rootDir: join(dir, 'no-root'),
      podLogsDir: join(dir, 'logs'),
      memoryCapacity: 8n << 30n,
      housekeepingIntervalMs: 10_000,
      bootTime: new Date(0),
      csiVolumes: (uid) => c.podVolumes(uid),
    });
    const summary = JSON.parse(stringifyExact(buildSummary(await provider.collect())));
    provider.stop();
    c.stop();
    const volumes = summary.pods.find((p: any) => p.podRef.uid === uidA).volume;
    assert.deepEqual(
      volumes.map((v: any) => [v.name, v.pvcRef]),
      [
        ['data', { name: 'claim-a', namespace: NS }],
        ['scratch', undefined],
        ['eph', { name: 'pod-0-eph', namespace: NS }],
      ],
    );
    const data = volumes[0];
    const fs = statfsSync(mounted.pods.get(uidA)!.get('data')!.csi!.targetPath);
    assert.equal(data.capacityBytes, fs.blocks * fs.bsize, 'the driver statfs-es the published target');
    assert.equal(data.inodes, fs.files);
    for (const k of ['availableBytes', 'usedBytes', 'inodesFree', 'inodesUsed']) assert.equal(typeof data[k], 'number');
    assert.match(data.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(data.volumeHealthStats, undefined, 'CSIVolumeHealth off: no condition');
    const db = summary.pods.find((p: any) => p.podRef.uid === uidB).volume;
    assert.deepEqual(db[0].pvcRef, { name: 'claim-b', namespace: NS });
  });

  it('exports kubelet_volume_stats_* per claim only, once per claim', async () => {
    const c = cache();
    await c.refresh();
    const registry = new Registry();
    registerVolumeStatsCollector(registry, () => c.all());
    const text = await registry.metrics();
    c.stop();
    const fs = statfsSync(mounted.pods.get(uidA)!.get('data')!.csi!.targetPath);
    assert.match(
      text,
      new RegExp(
        `kubelet_volume_stats_capacity_bytes\\{namespace="${NS}",persistentvolumeclaim="claim-a"\\} ${fs.blocks * fs.bsize}\\n`,
      ),
    );
    for (const claim of ['claim-a', 'claim-b', 'pod-0-eph']) {
      for (const m of ['capacity_bytes', 'available_bytes', 'used_bytes', 'inodes', 'inodes_free', 'inodes_used']) {
        assert.match(
          text,
          new RegExp(`kubelet_volume_stats_${m}\\{namespace="${NS}",persistentvolumeclaim="${claim}"\\} \\d+`),
        );
      }
    }
    assert.doesNotMatch(text, /scratch/, 'an inline volume has no claim: not exported');
    assert.doesNotMatch(text, /kubelet_volume_stats_health_status_abnormal\{/, 'no condition without CSIVolumeHealth');
    const timed = await metrics.volumeMetricCollectionDuration.get();
    const count = (driver: string) =>
      timed.values.find((v) => v.metricName?.endsWith('_count') && v.labels.metric_source === driver)?.value ?? 0;
    assert.ok(count('fast.csi.test') >= 3 && count('slow.csi.test') >= 1, 'each call timed, by driver');
  });

  it('CSIVolumeHealth: the condition into volumeHealthStats, the health gauge and a VolumeConditionAbnormal event', async () => {
    writeFileSync(join(fast.stateDir, 'volumes', 'vol-a.abnormal'), 'disk is failing\n');
    events.length = 0;
    const c = cache({ volumeHealth: true });
    await c.refresh();
    const registry = new Registry();
    registerVolumeStatsCollector(registry, () => c.all());
    const text = await registry.metrics();
    c.stop();
    const byName = new Map(c.podVolumes(uidA).map((v) => [v.name, v]));
    assert.deepEqual(byName.get('data')!.volumeHealthStats, { abnormal: true });
    assert.deepEqual(byName.get('scratch')!.volumeHealthStats, { abnormal: false });
    assert.match(
      text,
      new RegExp(
        `kubelet_volume_stats_health_status_abnormal\\{namespace="${NS}",persistentvolumeclaim="claim-a"\\} 1\\n`,
      ),
    );
    assert.match(
      text,
      new RegExp(
        `kubelet_volume_stats_health_status_abnormal\\{namespace="${NS}",persistentvolumeclaim="claim-b"\\} 0\\n`,
      ),
    );
    assert.deepEqual(
      events.map(([ref, type, reason, message]) => [ref.name, type, reason, message]),
      [['pod-0', 'Warning', 'VolumeConditionAbnormal', 'Volume data: disk is failing']],
    );
    rmSync(join(fast.stateDir, 'volumes', 'vol-a.abnormal'));
  });

  it('a stalled driver keeps its last value until its deadline and holds up no other pod', async () => {
    const c = cache({ timeoutMs: 1500 });
    await c.refresh();
    const before = c.podVolumes(uidB)[0]!;
    const fastBefore = c.podVolumes(uidA)[0]!.time;
    const statsCalls = () =>
      readCallLog(join(slow.stateDir, 'calls.jsonl')).filter((x) => x.method === 'NodeGetVolumeStats').length;
    const callsBefore = statsCalls();
    writeFileSync(join(slow.stateDir, 'faults'), 'NodeGetVolumeStats=stall\n');
    const started = Date.now();
    const pass = c.refresh();
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(c.podVolumes(uidA)[0]!.time > fastBefore, 'the other driver answered meanwhile');
    assert.equal(c.podVolumes(uidB)[0], before, 'the stalled volume shows its last good value at once');
    await c.refresh(); // a second pass does not call the stalled volume again
    await pass;
    assert.ok(Date.now() - started >= 1400, 'the stalled call ended at its deadline');
    assert.equal(c.podVolumes(uidB)[0], before, 'a failed call keeps the last good value');
    assert.equal(statsCalls(), callsBefore + 1, 'one stalled call, not one per pass');
    writeFileSync(join(slow.stateDir, 'faults'), '');
    await c.refresh();
    assert.notEqual(c.podVolumes(uidB)[0], before, 'refreshed once the driver answers again');
    c.stop();
  });

  it('start(): a pass at once, then every period; a throwing pod source is logged, not thrown; stop() ends it', async () => {
    const calls = () =>
      readCallLog(join(fast.stateDir, 'calls.jsonl')).filter((x) => x.method === 'NodeGetVolumeStats').length;
    const before = calls();
    const c = new CsiVolumeStatsCache({
      pods: () => pods,
      volumes: mounted,
      drivers: { get: (n) => drivers.get(n) },
      periodMs: 200,
    });
    c.start();
    await new Promise((r) => setTimeout(r, 500));
    c.stop();
    // A call already sent when stop() ran is still logged by the driver: let it land first.
    await new Promise((r) => setTimeout(r, 300));
    const ran = calls() - before;
    assert.ok(ran >= 2 * 3 && ran <= 4 * 3, `three fast volumes, two or three passes: ${ran} calls`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(calls() - before, ran, 'stopped');
    const broken = new CsiVolumeStatsCache({
      pods: () => {
        throw new Error('pod manager gone');
      },
      volumes: mounted,
      drivers: { get: () => undefined },
      periodMs: 50,
    });
    broken.start();
    await new Promise((r) => setTimeout(r, 120));
    broken.stop();
  });

  it('drops the volumes and pods that are gone', async () => {
    const c = cache();
    await c.refresh();
    assert.equal(c.all().length, 4);
    const saved = mounted.pods.get(uidB)!;
    mounted.pods.delete(uidB);
    await c.refresh();
    assert.deepEqual(c.podVolumes(uidB), []);
    assert.equal(c.all().length, 3);
    mounted.pods.set(uidB, saved);
    c.stop();
  });
});

describe('volume stats tables', () => {
  // upstream TestVolumeStatsCollector: a claim mounted by two pods once; a volume without a claim never.
  const fsStats = {
    time: new Date(0),
    availableBytes: 5663154176n,
    capacityBytes: 10434699264n,
    usedBytes: 4217896960n,
    inodesFree: 655344n,
    inodes: 655360n,
    inodesUsed: 16n,
  };
  const pvc = { name: 'testpvc', namespace: 'testns' };
  const cases: Array<{ name: string; volumes: VolumeStats[]; want: string[] }> = [
    {
      name: 'TestVolumeStatsCollector',
      volumes: [
        { ...fsStats, name: 'test' },
        { ...fsStats, name: 'test', pvcRef: pvc, volumeHealthStats: { abnormal: true } },
        { ...fsStats, name: 'test', pvcRef: pvc, volumeHealthStats: { abnormal: true } },
      ],
      want: [
        'kubelet_volume_stats_available_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 5663154176',
        'kubelet_volume_stats_capacity_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 10434699264',
        'kubelet_volume_stats_health_status_abnormal{namespace="testns",persistentvolumeclaim="testpvc"} 1',
        'kubelet_volume_stats_inodes{namespace="testns",persistentvolumeclaim="testpvc"} 655360',
        'kubelet_volume_stats_inodes_free{namespace="testns",persistentvolumeclaim="testpvc"} 655344',
        'kubelet_volume_stats_inodes_used{namespace="testns",persistentvolumeclaim="testpvc"} 16',
        'kubelet_volume_stats_used_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 4217896960',
      ],
    },
    {
      name: 'TestVolumeStatsCollectorWithNullVolumeStatus',
      volumes: [
        { ...fsStats, name: 'test' },
        { ...fsStats, name: 'test', pvcRef: pvc },
      ],
      want: [
        'kubelet_volume_stats_available_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 5663154176',
        'kubelet_volume_stats_capacity_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 10434699264',
        'kubelet_volume_stats_inodes{namespace="testns",persistentvolumeclaim="testpvc"} 655360',
        'kubelet_volume_stats_inodes_free{namespace="testns",persistentvolumeclaim="testpvc"} 655344',
        'kubelet_volume_stats_inodes_used{namespace="testns",persistentvolumeclaim="testpvc"} 16',
        'kubelet_volume_stats_used_bytes{namespace="testns",persistentvolumeclaim="testpvc"} 4217896960',
      ],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const registry = new Registry();
      registerVolumeStatsCollector(registry, () => tc.volumes);
      const samples = (await registry.metrics())
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .sort();
      assert.deepEqual(samples, [...tc.want].sort());
      assert.equal(statsByClaim(tc.volumes).size, 1);
    });
  }

  it('upstream parsePodVolumeStats: every field set, 0 where the driver gave no unit', () => {
    const t = new Date(0);
    const cases: Array<[string, Parameters<typeof csiVolumeStats>[1], boolean, Partial<VolumeStats>]> = [
      ['bytes only', { bytes: { total: 10, available: 4, used: 6 } }, false, { capacityBytes: 10n, inodes: 0n }],
      ['inodes only', { inodes: { total: 5, available: 1, used: 4 } }, false, { capacityBytes: 0n, inodesUsed: 4n }],
      ['condition, gate off', { condition: { abnormal: true, message: 'x' } }, false, { volumeHealthStats: undefined }],
      [
        'condition, gate on',
        { condition: { abnormal: true, message: 'x' } },
        true,
        { volumeHealthStats: { abnormal: true } },
      ],
    ];
    for (const [name, usage, health, want] of cases) {
      const got = csiVolumeStats('v', usage, t, health);
      for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k as keyof VolumeStats], v, `${name}: ${k}`);
      for (const k of ['capacityBytes', 'availableBytes', 'usedBytes', 'inodes', 'inodesFree', 'inodesUsed'] as const)
        assert.equal(typeof got[k], 'bigint', `${name}: ${k} set`);
    }
  });

  it('upstream PVCReference: a claim, a generic ephemeral volume <pod>-<volume>, nothing else', () => {
    const p = pod('u', 'web', [
      { name: 'a', persistentVolumeClaim: { claimName: 'c' } },
      { name: 'b', ephemeral: { volumeClaimTemplate: { spec: {} } } },
      { name: 'c', csi: { driver: 'd' } },
    ]);
    assert.deepEqual(pvcRefOf(p, 'a'), { name: 'c', namespace: NS });
    assert.deepEqual(pvcRefOf(p, 'b'), { name: 'web-b', namespace: NS });
    assert.equal(pvcRefOf(p, 'c'), undefined);
  });
});
