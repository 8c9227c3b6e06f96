// The stats provider over a recorded v2 tree (and v1), the Summary API JSON (upstream key names,
// exact uint64, unset fields omitted), /metrics/resource and /metrics/cadvisor text (promtool
// check metrics when promtool is installed).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { CgroupStatsProvider } from '../../src/stats/provider.js';
import { buildSummary, stringifyExact } from '../../src/stats/summary.js';
import { resourceMetrics } from '../../src/stats/resource-metrics.js';
import { cadvisorMetrics } from '../../src/stats/cadvisor-metrics.js';
import { nsToSeconds } from '../../src/stats/exposition.js';
import { createTsCgroupReader } from '../../src/stats/cgroup-reader-ts.js';
import { NEED } from '../../src/stats/cgroup-fields.js';
import { makeCgroupTree, treeNumbers } from '../../bench/fixtures/cgroup-tree.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
before(() => {
  dir = testTempDir('kts-stats-');
});
after(() => rmSync(dir, { recursive: true, force: true }));

function provider(mode: 'v1' | 'v2') {
  const root = mkdtempSync(join(dir, mode));
  const tree = makeCgroupTree(root, { mode, pods: 2, containersPerPod: 2 });
  return new CgroupStatsProvider({
    nodeName: 'node-a',
    layout: createCgroupLayout(tree.mounts),
    reader: createTsCgroupReader(),
    listPods: async () => structuredClone(tree.pods),
    cgroupRoot: '/',
    rootDir: root,
    podLogsDir: join(root, 'logs'),
    memoryCapacity: 8n << 30n,
    housekeepingIntervalMs: 10_000,
    bootTime: new Date(0),
  });
}

const promtool = spawnSync('promtool', ['--version']).status === 0;
function promtoolCheck(text: string): void {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `promtool check metrics: ${r.stdout}${r.stderr}`);
}

describe('stats provider', () => {
  for (const mode of ['v2', 'v1'] as const) {
    it(`${mode}: per container, pod and node numbers from one pass`, async () => {
      const p = provider(mode);
      const s = await p.collect();
      assert.equal(s.pods.length, 2);
      const pod = s.pods[0]!;
      const c = pod.containers[0]!;
      // Group order: root 0, pod 1, its containers 2, 3.
      const n = treeNumbers(2);
      assert.equal(c.cpu.usageCoreNanoSeconds, n.usageUsec * 1000n);
      assert.equal(c.cpu.usageNanoCores, undefined, 'no rate before a second pass');
      assert.equal(c.memory.usageBytes, n.memCurrent);
      assert.equal(c.memory.workingSetBytes, n.memCurrent - n.inactiveFile, 'working set = usage - inactive_file');
      assert.equal(c.memory.rssBytes, n.anon);
      assert.equal(c.memory.pageFaults, n.pgfault);
      assert.equal(c.memory.availableBytes, undefined, 'unlimited: no availableBytes');
      const limited = pod.containers[1]!; // odd group: 64Mi limit
      assert.equal(limited.memory.availableBytes, 64n * 1024n * 1024n - limited.memory.workingSetBytes!);
      assert.equal(pod.oomKills, treeNumbers(1).oomKill);
      const again = await p.collect();
      assert.equal(again.pods[0]!.containers[0]!.cpu.usageNanoCores, 0n, 'unchanged counters: 0 cores');
      p.stop();
    });
  }

  it('reads limits on a new file set and carries them between refreshes; io only once a consumer asks', async () => {
    const root = mkdtempSync(join(dir, 'mask'));
    const tree = makeCgroupTree(root, { mode: 'v2', pods: 1, containersPerPod: 2 });
    const masks: number[] = [];
    const inner = createTsCgroupReader();
    const reader = {
      ...inner,
      setFiles: inner.setFiles.bind(inner),
      close: inner.close.bind(inner),
      read: inner.read.bind(inner),
      // The pass reads through readAsync (off the event loop).
      readAsync: (out: BigUint64Array, mask?: number) => {
        masks.push(mask ?? -1);
        return inner.readAsync(out, mask);
      },
    };
    const p = new CgroupStatsProvider({
      nodeName: 'node-a',
      layout: createCgroupLayout(tree.mounts),
      reader,
      listPods: async () => structuredClone(tree.pods),
      cgroupRoot: '/',
      rootDir: root,
      podLogsDir: join(root, 'logs'),
      memoryCapacity: 8n << 30n,
      housekeepingIntervalMs: 10_000,
      bootTime: new Date(0),
    });
    const first = await p.collect();
    const second = await p.collect();
    assert.ok(masks[0]! & NEED.limits, 'first pass (new file set) reads limits');
    assert.equal(masks[1]! & NEED.limits, 0, 'second pass does not');
    assert.equal(second.pods[0]!.containers[1]!.memoryLimit, 64n * 1024n * 1024n, 'limit carried over');
    assert.equal(second.pods[0]!.containers[1]!.memoryLimit, first.pods[0]!.containers[1]!.memoryLimit);
    assert.equal(second.pods[0]!.containers[0]!.ioReadBytes, undefined, 'io not read before anyone asks');
    const withIo = await p.latest({ io: true });
    assert.equal(
      withIo.pods[0]!.containers[0]!.ioReadBytes,
      treeNumbers(2).rbytes + 1n,
      'io read for the consumer that asked',
    );
    assert.ok((await p.collect()).pods[0]!.containers[0]!.ioReadBytes !== undefined, 'and in the passes after it');
    for (let i = 0; i < 6; i++) await p.collect();
    assert.ok(
      masks.slice(2).some((m) => m & NEED.limits),
      'limits refreshed periodically',
    );
    p.stop();
  });

  it('v1: cpu user/system and failcnt (only /metrics/cadvisor shows them) are read once it asks; the Summary fields every pass', async () => {
    const p = provider('v1');
    const periodic = await p.collect();
    const c = periodic.pods[0]!.containers[0]!;
    assert.equal(c.cpuUserNs, undefined, 'cpuacct.usage_user not in a periodic pass');
    assert.equal(c.cpuSystemNs, undefined, 'cpuacct.usage_sys not in a periodic pass');
    assert.equal(c.memoryFailcnt, undefined, 'memory.failcnt not in a periodic pass');
    const scraped = await p.latest({ io: true });
    const s = scraped.pods[0]!.containers[0]!;
    assert.equal(s.cpuUserNs, treeNumbers(2).userUsec * 1000n);
    assert.equal(s.memoryFailcnt, 4n);
    assert.ok(cadvisorMetrics(scraped, [], 8n << 30n).includes('container_cpu_user_seconds_total{'));
    for (const snap of [periodic, scraped]) {
      const x = snap.pods[0]!.containers[0]!;
      assert.equal(x.cpu.usageCoreNanoSeconds, treeNumbers(2).usageUsec * 1000n);
      assert.equal(x.memory.workingSetBytes, treeNumbers(2).memCurrent - treeNumbers(2).inactiveFile);
      assert.equal(x.oomKills, treeNumbers(2).oomKill);
      assert.equal(x.pids, treeNumbers(2).pids);
    }
    p.stop();
  });

  it('usageNanoCores follows the counter delta over wall time', async () => {
    const root = mkdtempSync(join(dir, 'rate'));
    const tree = makeCgroupTree(root, { mode: 'v2', pods: 1, containersPerPod: 1 });
    const p = new CgroupStatsProvider({
      nodeName: 'n',
      layout: createCgroupLayout(tree.mounts),
      reader: createTsCgroupReader(),
      listPods: async () => structuredClone(tree.pods),
      cgroupRoot: '/',
      rootDir: root,
      podLogsDir: root,
      memoryCapacity: 1n << 30n,
      housekeepingIntervalMs: 10_000,
    });
    await p.collect();
    const c = tree.pods[0]!.containers[0]!;
    const file = join(tree.mounts.unified!, `/kubepods/besteffort/pod${tree.pods[0]!.uid}`, c.id, 'cpu.stat');
    const before = treeNumbers(2).usageUsec;
    await new Promise((r) => setTimeout(r, 200));
    writeFileSync(file, `usage_usec ${before + 100_000n}\n`); // 100 ms of cpu in ~200 ms: ~0.5 core
    const s = await p.collect();
    const cores = Number(s.pods[0]!.containers[0]!.cpu.usageNanoCores) / 1e9;
    assert.ok(cores > 0.2 && cores < 0.6, `~0.5 core, got ${cores}`);
    p.stop();
  });
});

describe('Summary API JSON', () => {
  it('has the upstream keys, exact uint64 integers, and omits unset fields', async () => {
    const p = provider('v2');
    const s = await p.collect();
    const text = stringifyExact(buildSummary(s));
    assert.ok(text.includes(`"pageFaults":${treeNumbers(2).pgfault}`), 'uint64 beyond 2^53 written exactly');
    const j = JSON.parse(text);
    assert.deepEqual(Object.keys(j), ['node', 'pods']);
    assert.equal(j.node.nodeName, 'node-a');
    assert.equal(j.node.startTime, '1970-01-01T00:00:00Z');
    for (const k of ['cpu', 'memory', 'fs']) assert.ok(j.node[k], `node.${k}`);
    assert.ok(j.node.rlimit.maxpid > 0);
    const pod = j.pods[0];
    assert.deepEqual(Object.keys(pod.podRef), ['name', 'namespace', 'uid']);
    assert.ok(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(pod.containers[0].cpu.time));
    assert.equal('usageNanoCores' in pod.containers[0].cpu, false, 'unset: omitted, not null');
    assert.equal(pod.process_stats.process_count, Number(treeNumbers(1).pids));
    const only = JSON.parse(stringifyExact(buildSummary(s, true)));
    // systemContainers (cpu and memory) is there too when this process's cgroup is in the tree.
    assert.deepEqual(
      Object.keys(only.node)
        .filter((k) => k !== 'systemContainers')
        .sort(),
      ['cpu', 'memory', 'nodeName', 'startTime'],
    );
    assert.deepEqual(Object.keys(only.pods[0]).sort(), ['containers', 'cpu', 'memory', 'podRef', 'startTime']);
    p.stop();
  });
});

describe('metrics endpoints', () => {
  it('nsToSeconds is exact', () => {
    assert.equal(nsToSeconds(18446744073709551615n), '18446744073.709551615');
    assert.equal(nsToSeconds(2_000_000_000n), '2');
    assert.equal(nsToSeconds(1_500n), '0.0000015');
  });

  it('/metrics/resource: upstream families with timestamps, no 0 for live containers', async () => {
    const p = provider('v2');
    const s = await p.collect();
    const text = resourceMetrics(s);
    const ts = s.time.getTime();
    assert.match(
      text,
      new RegExp(
        `^container_cpu_usage_seconds_total\\{container="c0",namespace="bench",pod="pod-0"\\} ${nsToSeconds(treeNumbers(2).usageUsec * 1000n).replace('.', '\\.')} ${ts}$`,
        'm',
      ),
    );
    for (const f of [
      'node_cpu_usage_seconds_total',
      'node_memory_working_set_bytes',
      'container_memory_working_set_bytes',
      'container_start_time_seconds',
      'pod_cpu_usage_seconds_total',
      'pod_memory_working_set_bytes',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${f} `, 'm'));
    }
    assert.match(text, /^resource_scrape_error 0$/m);
    if (promtool) promtoolCheck(text);
    p.stop();
  });

  it('/metrics/cadvisor: cAdvisor names and labels, OOM counts', async () => {
    const p = provider('v2');
    const s = await p.collect();
    const text = cadvisorMetrics(
      s,
      [{ podUid: s.pods[0]!.uid, namespace: 'bench', pod: 'pod-0', container: 'c1', id: '/x', count: 2 }],
      8n << 30n,
    );
    assert.match(
      text,
      /^container_cpu_usage_seconds_total\{container="c0",id="\/kubepods\/besteffort\/pod[^"]+",image="busybox",name="[0-9a-f]+",namespace="bench",pod="pod-0",cpu="total"\} /m,
    );
    assert.match(text, /^container_oom_events_total\{container="c1",[^}]*pod="pod-0"\} 2 /m);
    assert.match(text, /^container_oom_events_total\{container="c0",[^}]*pod="pod-0"\} 0 /m);
    assert.match(text, /^container_memory_working_set_bytes\{container="",id="\/",/m);
    if (promtool) promtoolCheck(text);
    p.stop();
  });
});
