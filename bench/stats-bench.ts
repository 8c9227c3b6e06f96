/**
 * Stats and OOM benchmarks (issue 5), run at the end of `npm run bench` or alone:
 *   node dist/bench/stats-bench.js [--quick]
 *   (a) one stats pass (the batch read + parse of every cgroup file) over 100 / 500 / 2,000
 *       containers of a recorded-format tree (v2 and v1 layouts), native vs TS twin, median + p99
 *   (b) the same pass over real running containers (pods started in containerd for the bench)
 *   (c) OOM kill → event latency over >= 20 real kernel OOM kills, per implementation: from the
 *       kernel record's timestamp (CLOCK_MONOTONIC) to the watcher's callback in JS
 * Writes bench/results/stats.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../src/api/types.js';
import { detectCgroupMounts } from '../src/cm/index.js';
import { connectRuntime } from '../src/cri/index.js';
import { createImageManager } from '../src/images/index.js';
import { createRuntimeManager } from '../src/kuberuntime/index.js';
import { createVolumeManager } from '../src/volume/index.js';
import { implementations } from '../src/cmd/hot-paths.js';
import type { OomKillRecord } from '../src/oom/types.js';
import { createCgroupLayout, type CgroupLayout } from '../src/stats/cgroup-layout.js';
import { FIELD_COUNT, NEED, NEED_ALL, wanted, type CgroupFileSpec } from '../src/stats/cgroup-fields.js';
import { makeCgroupTree } from './fixtures/cgroup-tree.js';
import { percentile } from './stats.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const STATE = join(REPO, '.state/bench-containerd');

interface PassResult {
  containers: number;
  files: number;
  native_median_ms: number | null;
  native_p99_ms: number | null;
  ts_median_ms: number;
  ts_p99_ms: number;
  /** The same over the files a periodic pass reads (NEED.usage: no limits, no io; see provider.ts). */
  pass_files: number;
  pass_native_median_ms: number | null;
  pass_native_p99_ms: number | null;
  pass_ts_median_ms: number;
  pass_ts_p99_ms: number;
}

type Timed = Record<string, { median: number; p99: number }>;

/** Times `iterations` passes of each implementation over `specs`, reading the files `mask` wants. */
function timeReads(specs: CgroupFileSpec[], groups: number, mask: number, iterations: number): Timed {
  const out = new BigUint64Array(groups * FIELD_COUNT);
  const res: Timed = {};
  for (const impl of implementations('cgroupStats')) {
    const r = impl.createCgroupReader();
    r.setFiles(specs);
    for (let i = 0; i < 3; i++) r.read(out, mask); // open fds, warm caches and JIT
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = process.hrtime.bigint();
      r.read(out, mask);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    r.close();
    res[impl.name] = { median: percentile(samples, 50), p99: percentile(samples, 99) };
  }
  return res;
}

/** Full passes (every file) and periodic passes (usage files only) over the cgroups `names`. */
function timePasses(layout: CgroupLayout, names: string[], iterations: number): Omit<PassResult, 'containers'> {
  const specs = names.flatMap((n, g) => layout.files(n, g));
  const all = timeReads(specs, names.length, NEED_ALL, iterations);
  const pass = timeReads(specs, names.length, NEED.usage, iterations);
  return {
    files: specs.length,
    native_median_ms: all['native']?.median ?? null,
    native_p99_ms: all['native']?.p99 ?? null,
    ts_median_ms: all['ts']!.median,
    ts_p99_ms: all['ts']!.p99,
    pass_files: specs.filter((s) => wanted(s, NEED.usage)).length,
    pass_native_median_ms: pass['native']?.median ?? null,
    pass_native_p99_ms: pass['native']?.p99 ?? null,
    pass_ts_median_ms: pass['ts']!.median,
    pass_ts_p99_ms: pass['ts']!.p99,
  };
}

function recordedTree(quick: boolean): Array<PassResult & { layout: 'v1' | 'v2' }> {
  const out: Array<PassResult & { layout: 'v1' | 'v2' }> = [];
  const dir = mkdtempSync(join(tmpdir(), 'kts-stats-bench-'));
  try {
    for (const mode of ['v2', 'v1'] as const) {
      for (const containers of [100, 500, 2000]) {
        const root = join(dir, `${mode}-${containers}`);
        const tree = makeCgroupTree(root, { mode, pods: containers / 2, containersPerPod: 2 });
        const names = [
          '/',
          ...tree.pods.flatMap((p) => [
            `/kubepods/besteffort/pod${p.uid}`,
            ...p.containers.map((c) => `/kubepods/besteffort/pod${p.uid}/${c.id}`),
          ]),
        ];
        out.push({ layout: mode, containers, ...timePasses(createCgroupLayout(tree.mounts), names, quick ? 15 : 100) });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function benchPod(ns: string, name: string, script: string, memoryLimit?: string): Pod {
  return {
    metadata: { name, namespace: ns, uid: `${ns}-${name}` },
    spec: {
      hostNetwork: true,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'c',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          ...(memoryLimit ? { resources: { limits: { memory: memoryLimit } } } : {}),
        },
      ],
    },
  } as Pod;
}

async function withPods<T>(endpoint: string, ns: string, pods: Pod[], fn: () => Promise<T>): Promise<T> {
  const { runtime, images } = connectRuntime(endpoint);
  const manager = createRuntimeManager({
    runtime,
    imageManager: createImageManager({ images }),
    podLogsDir: `/tmp/kts-bench-logs/${ns}`,
    rootDir: `/tmp/kts-bench-root/${ns}`,
    volumes: createVolumeManager({ rootDir: `/tmp/kts-bench-root/${ns}` }),
    nodeName: 'bench',
    hostIP: '127.0.0.1',
  });
  try {
    for (const pod of pods) {
      const r = await manager.syncPod(pod, await manager.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, ns));
      if (r.error) throw r.error;
    }
    return await fn();
  } finally {
    for (const s of (await runtime.listPodSandbox()).filter((x) => x.metadata.namespace === ns)) {
      await runtime.stopPodSandbox(s.id).catch(() => undefined);
      await runtime.removePodSandbox(s.id).catch(() => undefined);
    }
    runtime.close();
    images.close();
  }
}

/** (b): every pod and container cgroup of our bench pods, read as a stats pass would. */
async function realContainers(endpoint: string, quick: boolean): Promise<PassResult> {
  const ns = `stats-bench-${Date.now().toString(36)}`;
  const n = quick ? 10 : 30;
  const pods = Array.from({ length: n }, (_, i) => benchPod(ns, `p${i}`, 'sleep 3600'));
  return withPods(endpoint, ns, pods, async () => {
    const layout = createCgroupLayout(detectCgroupMounts());
    const names = ['/'];
    for (const [uid, cg] of layout.podCgroups('/')) {
      if (!uid.startsWith(ns)) continue;
      names.push(cg);
      for (const e of readdirSync(join(layout.memoryRoot!, cg), { withFileTypes: true }))
        if (e.isDirectory()) names.push(`${cg}/${e.name}`);
    }
    const containers = names.length - 1 - n;
    return { containers, ...timePasses(layout, names, quick ? 20 : 100) };
  });
}

interface OomLatency {
  impl: string;
  kills: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** (c): a 20Mi container whose shell restarts `tail /dev/zero` after every kill. */
async function oomLatency(endpoint: string, kills: number): Promise<OomLatency[]> {
  const out: OomLatency[] = [];
  for (const impl of implementations('kmsg')) {
    const ns = `oom-bench-${impl.name}-${Date.now().toString(36)}`;
    const samples: number[] = [];
    let done: () => void = () => undefined;
    const finished = new Promise<void>((r) => {
      done = r;
    });
    const watcher = impl.createKmsgWatcher('/dev/kmsg', (batch: OomKillRecord[]) => {
      const nowUs = Number(process.hrtime.bigint() / 1000n);
      for (const k of batch) {
        if (!k.taskMemcg.includes(ns) || samples.length >= kills) continue;
        samples.push((nowUs - k.tsUs) / 1000);
        if (samples.length >= kills) done();
      }
    });
    try {
      await withPods(
        endpoint,
        ns,
        [benchPod(ns, 'hog', 'while true; do tail /dev/zero; sleep 0.05; done', '20Mi')],
        () => Promise.race([finished, new Promise<void>((r) => setTimeout(r, 60_000).unref())]),
      );
    } finally {
      watcher.close();
    }
    const sorted = [...samples].sort((a, b) => a - b);
    out.push({
      impl: impl.name,
      kills: samples.length,
      p50_ms: percentile(samples, 50),
      p99_ms: percentile(samples, 99),
      max_ms: Math.round((sorted.at(-1) ?? NaN) * 1000) / 1000,
    });
  }
  return out;
}

function startContainerd(): { endpoint?: string; reason?: string } {
  try {
    const outp = execFileSync('bash', [join(REPO, 'scripts/containerd.sh'), 'start', '--state-dir', STATE], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { endpoint: outp.trim().split('\n').pop() };
  } catch (err) {
    return {
      reason: `containerd could not start: ${String((err as { stderr?: string }).stderr ?? err)
        .trim()
        .split('\n')
        .pop()}`,
    };
  }
}

const fmt = (v: number | null | undefined) =>
  v === null || v === undefined || Number.isNaN(v) ? '   n/a' : v.toFixed(3).padStart(8);

export async function main(opts: { quick: boolean }): Promise<void> {
  // The CRI channels do not hold the event loop: keep it alive while we await the runtime.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    await run(opts);
  } finally {
    clearInterval(keepAlive);
  }
}

async function run(opts: { quick: boolean }): Promise<void> {
  const recorded = recordedTree(opts.quick);
  console.log('\n(stats a) one stats pass (batch read + parse of every cgroup file), recorded tree (ms)');
  console.log('layout  containers   files   native p50   native p99       ts p50       ts p99   ts/native');
  for (const r of recorded) {
    const ratio = r.native_median_ms ? (r.ts_median_ms / r.native_median_ms).toFixed(1) + 'x' : 'n/a';
    console.log(
      `${r.layout.padEnd(6)}  ${String(r.containers).padStart(10)}   ${String(r.files).padStart(5)}     ${fmt(r.native_median_ms)}     ${fmt(r.native_p99_ms)}     ${fmt(r.ts_median_ms)}     ${fmt(r.ts_p99_ms)}   ${ratio.padStart(9)}`,
    );
  }
  console.log(
    '(stats a2) the same, periodic pass: usage files only (limits carried over, io while /metrics/cadvisor is scraped)',
  );
  for (const r of recorded) {
    const ratio = r.pass_native_median_ms ? (r.pass_ts_median_ms / r.pass_native_median_ms).toFixed(1) + 'x' : 'n/a';
    console.log(
      `${r.layout.padEnd(6)}  ${String(r.containers).padStart(10)}   ${String(r.pass_files).padStart(5)}     ${fmt(r.pass_native_median_ms)}     ${fmt(r.pass_native_p99_ms)}     ${fmt(r.pass_ts_median_ms)}     ${fmt(r.pass_ts_p99_ms)}   ${ratio.padStart(9)}`,
    );
  }
  let real: PassResult | null = null;
  let oom: OomLatency[] | null = null;
  let reason: string | undefined;
  const ctr = process.getuid?.() === 0 ? startContainerd() : { reason: 'needs root to run containerd' };
  if (!ctr.endpoint) {
    reason = ctr.reason;
  } else {
    try {
      real = await realContainers(ctr.endpoint, opts.quick);
      oom = await oomLatency(ctr.endpoint, opts.quick ? 20 : 40);
    } catch (err) {
      reason = `real-container runs failed: ${String(err)}`;
    } finally {
      spawnSync('bash', [join(REPO, 'scripts/containerd.sh'), 'stop', '--state-dir', STATE], { stdio: 'ignore' });
    }
  }
  if (real)
    console.log(
      `(stats b) pass over ${real.containers} real containers + pods (${real.files} files, this host's layout): native p50 ${fmt(real.native_median_ms)} p99 ${fmt(real.native_p99_ms)} | ts p50 ${fmt(real.ts_median_ms)} p99 ${fmt(real.ts_p99_ms)}`,
    );
  for (const o of oom ?? [])
    console.log(
      `(stats c) OOM kill → event (${o.impl}), ${o.kills} real kills: p50 ${fmt(o.p50_ms)} p99 ${fmt(o.p99_ms)} max ${fmt(o.max_ms)} ms`,
    );
  if (reason) console.log(`(stats b, c) skipped: ${reason}`);
  const outDir = join(REPO, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'stats.json'),
    JSON.stringify(
      { pass_recorded: recorded, pass_real: real, oom_kill_to_event: oom, ...(reason ? { reason } : {}) },
      null,
      2,
    ) + '\n',
  );
  console.log('wrote bench/results/stats.json');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main({ quick: process.argv.includes('--quick') }).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
