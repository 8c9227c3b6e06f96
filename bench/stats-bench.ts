/**
 * Stats and OOM benchmarks (issues 5, 30), run at the end of `npm run bench` or alone:
 *   node dist/bench/stats-bench.js [--quick] [--no-oom]
 *   (a) one stats pass over REAL cgroups on this host's cgroup filesystem: 100 pod cgroups with
 *       500 containers (a sleeping process in each), in every hierarchy the pass reads, laid out
 *       as the agent reads them; native vs TS twin, per pass (p50, p99, CPU time) for the
 *       periodic pass, the pass while /metrics/cadvisor is scraped and the full pass, and per
 *       file; and the periodic pass as the agent makes it (readAsync: wall time, and the event
 *       loop's busy time and longest hold). Every cgroup is removed afterwards (also on error
 *       and SIGINT/SIGTERM).
 *   (b) OOM kill → event latency over >= 20 real kernel OOM kills, per implementation: from the
 *       kernel record's timestamp to the watcher's callback in JS, the record clock's measured
 *       offset from CLOCK_MONOTONIC taken out (kmsgClockSkewUs)
 * Writes bench/results/stats.json (bench/results.ts: one run, its command, date and load).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../src/api/types.js';
import { detectCgroupMounts } from '../src/cm/index.js';
import { connectRuntime } from '../src/cri/index.js';
import { createImageManager } from '../src/images/index.js';
import { createRuntimeManager } from '../src/kuberuntime/index.js';
import { createVolumeManager } from '../src/volume/index.js';
import { implementations } from '../src/cmd/hot-paths.js';
import type { OomKillRecord } from '../src/oom/types.js';
import { parseKmsgRecord } from '../src/oom/kmsg-parser.js';
import { createCgroupLayout } from '../src/stats/cgroup-layout.js';
import { FIELD_COUNT, NEED, NEED_ALL, wanted, type CgroupFileSpec } from '../src/stats/cgroup-fields.js';
import { makeRealCgroupTree, type RealCgroupTree } from './fixtures/real-cgroup-tree.js';
import { startRun, writeResult } from './results.js';
import { percentile } from './stats.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const STATE = join(REPO, '.state/bench-containerd');
const PODS = 100;
const CONTAINERS_PER_POD = 5;

interface ImplTiming {
  p50_ms: number;
  p99_ms: number;
  /** Mean CPU time (user + system) of this process per pass: less sensitive to other load. */
  cpu_ms: number;
}

interface PassRow {
  pass: string;
  /** NEED bits read (src/stats/cgroup-fields.ts). */
  mask: number;
  files: number;
  native: ImplTiming | null;
  ts: ImplTiming;
  ts_over_native: number | null;
}

interface FileRow {
  file: string;
  cgroups: number;
  /** Wall time per file (p50 pass / files). */
  native_us: number | null;
  ts_us: number;
  /** CPU time of this process per file (mean): what the file costs whatever else runs. */
  native_cpu_us: number | null;
  ts_cpu_us: number;
}

/** Times `iterations` passes of each implementation over `specs`, reading the files `mask` wants. */
function timeReads(
  specs: CgroupFileSpec[],
  groups: number,
  mask: number,
  iterations: number,
): Record<string, ImplTiming> {
  const out = new BigUint64Array(groups * FIELD_COUNT);
  const res: Record<string, ImplTiming> = {};
  for (const impl of implementations('cgroupStats')) {
    const r = impl.createCgroupReader();
    r.setFiles(specs);
    for (let i = 0; i < 3; i++) r.read(out, mask); // open fds, warm caches and JIT
    const samples: number[] = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < iterations; i++) {
      const t0 = process.hrtime.bigint();
      r.read(out, mask);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const cpu = process.cpuUsage(cpu0);
    r.close();
    res[impl.name] = {
      p50_ms: percentile(samples, 50),
      p99_ms: percentile(samples, 99),
      cpu_ms: Math.round(((cpu.user + cpu.system) / iterations) * 1000) / 1e6,
    };
  }
  return res;
}

/** The periodic pass as the agent's stats pass makes it: readAsync, and what it leaves the loop. */
interface AsyncTiming {
  p50_ms: number;
  p99_ms: number;
  /** Event loop busy per pass (eventLoopUtilization's active time): the agent's thread's share. */
  loop_busy_ms: number;
  /** The longest the loop was held in any pass (monitorEventLoopDelay's max, 1 ms resolution). */
  loop_longest_ms: number;
}

async function timeReadsAsync(
  specs: CgroupFileSpec[],
  groups: number,
  mask: number,
  iterations: number,
): Promise<Record<string, AsyncTiming>> {
  const out = new BigUint64Array(groups * FIELD_COUNT);
  const res: Record<string, AsyncTiming> = {};
  for (const impl of implementations('cgroupStats')) {
    const r = impl.createCgroupReader();
    r.setFiles(specs);
    for (let i = 0; i < 3; i++) await r.readAsync(out, mask);
    const samples: number[] = [];
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const elu0 = performance.eventLoopUtilization();
    delay.enable();
    for (let i = 0; i < iterations; i++) {
      const t0 = process.hrtime.bigint();
      await r.readAsync(out, mask);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    delay.disable();
    const elu = performance.eventLoopUtilization(elu0);
    r.close();
    res[impl.name] = {
      p50_ms: percentile(samples, 50),
      p99_ms: percentile(samples, 99),
      loop_busy_ms: Math.round((elu.active / iterations) * 1000) / 1000,
      loop_longest_ms: Math.round(delay.max / 1e3) / 1e3,
    };
  }
  return res;
}

/** The files of every periodic pass (provider.ts readAll); the other passes add to them. */
const PERIODIC = NEED.usage | NEED.psi;

/** The passes the provider runs (provider.ts readAll): periodic, with limits, while scraped; and every file. */
const PASSES: ReadonlyArray<readonly [string, number]> = [
  ['periodic', PERIODIC],
  ['periodic + limits (every 6th)', PERIODIC | NEED.limits],
  ['while /metrics/cadvisor is scraped', PERIODIC | NEED.cadvisor],
  ['every file', NEED_ALL],
];

function passRows(specs: CgroupFileSpec[], groups: number, iterations: number): PassRow[] {
  return PASSES.map(([pass, mask]) => {
    const t = timeReads(specs, groups, mask, iterations);
    const native = t['native'] ?? null;
    return {
      pass,
      mask,
      files: specs.filter((s) => wanted(s, mask)).length,
      native,
      ts: t['ts']!,
      ts_over_native: native ? Math.round((t['ts']!.p50_ms / native.p50_ms) * 100) / 100 : null,
    };
  });
}

/** Per file: one pass over that file of every cgroup, divided by the cgroups. */
function fileRows(specs: CgroupFileSpec[], groups: number, iterations: number): FileRow[] {
  const names = [...new Set(specs.map((s) => basename(s.path)))];
  return names.map((file) => {
    const mine = specs.filter((s) => basename(s.path) === file);
    const t = timeReads(mine, groups, NEED_ALL, iterations);
    const us = (v: number | undefined) => (v === undefined ? null : Math.round((v / mine.length) * 1e6) / 1e3);
    return {
      file,
      cgroups: mine.length,
      native_us: us(t['native']?.p50_ms),
      ts_us: us(t['ts']!.p50_ms)!,
      native_cpu_us: us(t['native']?.cpu_ms),
      ts_cpu_us: us(t['ts']!.cpu_ms)!,
    };
  });
}

const V2_REASON =
  'the unified hierarchy here has only these controllers: %s; memory, cpu, io and pids are bound to ' +
  'v1 hierarchies (a controller lives in one hierarchy), so a v2 cgroup here has no memory.* files ' +
  'and the agent reads v1 (moving the controllers would take them from every other cgroup on the host)';

/** (a): the tree, the passes and the per-file costs, native vs TS. */
async function realCgroups(quick: boolean): Promise<object> {
  const mounts = detectCgroupMounts();
  const layout = createCgroupLayout(mounts);
  let v2Controllers = '';
  try {
    v2Controllers = execFileSync('cat', [join(mounts.unified ?? '/nonexistent', 'cgroup.controllers')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // no unified mount
  }
  const v2 =
    layout.mode === 'v2'
      ? { measured: true }
      : { measured: false, controllers: v2Controllers, reason: V2_REASON.replace('%s', v2Controllers || '(none)') };
  const t0 = Date.now();
  const tree: RealCgroupTree = await makeRealCgroupTree(mounts, { pods: PODS, containersPerPod: CONTAINERS_PER_POD });
  const built = Date.now();
  try {
    // The agent's pass: the node ('/'), the kubepods system container, every pod and container.
    const names = ['/', `${tree.root}/kubepods`, ...tree.pods.flatMap((p) => [p.cgroup, ...p.containers])];
    const specs = names.flatMap((n, g) => layout.files(n, g));
    const passes = passRows(specs, names.length, quick ? 40 : 100);
    const periodicAsync = await timeReadsAsync(specs, names.length, PERIODIC, quick ? 40 : 100);
    const perFile = fileRows(specs, names.length, quick ? 20 : 40);
    const measured = Date.now();
    tree.remove();
    console.log(
      `(stats a) tree built in ${((built - t0) / 1000).toFixed(1)} s, measured in ${((measured - built) / 1000).toFixed(1)} s, removed in ${((Date.now() - measured) / 1000).toFixed(1)} s`,
    );
    return {
      layout: layout.mode,
      hierarchies: tree.hierarchies,
      v2,
      pods: PODS,
      containers: PODS * CONTAINERS_PER_POD,
      cgroups: names.length,
      processes: tree.processes,
      passes,
      periodic_async: periodicAsync,
      per_file: perFile,
    };
  } finally {
    tree.remove();
  }
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
    // Our pods' cgroups only (the agent's housekeeping does this; no agent runs here).
    const ours = new Set(pods.map((p) => p.metadata!.uid!));
    await manager.cleanupOrphanedPodCgroups(async (uid) => !ours.has(uid));
    rmSync(`/tmp/kts-bench-logs/${ns}`, { recursive: true, force: true });
    rmSync(`/tmp/kts-bench-root/${ns}`, { recursive: true, force: true });
    runtime.close();
    images.close();
  }
}

interface OomLatency {
  impl: string;
  kills: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /**
   * The kernel record clock minus CLOCK_MONOTONIC when the kills ran (kmsgClockSkewUs), already
   * taken out of the figures above.
   */
  kmsg_clock_skew_ms: number;
}

/**
 * How far the kernel's record timestamps (printk's local_clock) sit from CLOCK_MONOTONIC, in µs:
 * a tagged line written to /dev/kmsg, its record's timestamp against the monotonic clock around
 * the write, the median of three. On this VM the two drift apart with uptime (−1.5 ms in one run,
 * −6.8 ms four hours later), and the latency would carry it.
 */
function kmsgClockSkewUs(): number {
  const tags = new Map<string, number>();
  const w = openSync('/dev/kmsg', 'w');
  try {
    for (let i = 0; i < 3; i++) {
      const tag = `kubelet-ts-bench-clock-${process.pid}-${Date.now()}-${i}`;
      const before = Number(process.hrtime.bigint() / 1000n);
      // The newline ends the record: without it the kernel leaves the record open for a
      // continuation and readers see it only once the next one comes (the last probe was lost).
      writeSync(w, `${tag}\n`);
      tags.set(tag, (before + Number(process.hrtime.bigint() / 1000n)) / 2);
    }
  } finally {
    closeSync(w);
  }
  const skews: number[] = [];
  const r = openSync('/dev/kmsg', constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(8192);
  try {
    for (;;) {
      const n = readSync(r, buf); // EAGAIN at the end of the buffer ends the loop (catch)
      const head = parseKmsgRecord(buf.toString('latin1', 0, n));
      const at = head ? tags.get(head.message) : undefined;
      if (at !== undefined) skews.push(head!.tsUs - at);
    }
  } catch {
    // the end of the records
  } finally {
    closeSync(r);
  }
  if (skews.length === 0) throw new Error('the clock probe lines did not come back from /dev/kmsg');
  return percentile(skews, 50);
}

/** (b): a 20Mi container whose shell restarts `tail /dev/zero` after every kill. */
async function oomLatency(endpoint: string, kills: number): Promise<OomLatency[]> {
  const out: OomLatency[] = [];
  for (const impl of implementations('kmsg')) {
    const skewUs = kmsgClockSkewUs();
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
        samples.push((nowUs - (k.tsUs - skewUs)) / 1000);
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
      kmsg_clock_skew_ms: Math.round(skewUs) / 1000,
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

export async function main(opts: { quick: boolean; noOom?: boolean }): Promise<void> {
  // The CRI channels do not hold the event loop: keep it alive while we await the runtime.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    await run(opts);
  } finally {
    clearInterval(keepAlive);
  }
}

function printReal(real: {
  passes: PassRow[];
  periodic_async: Record<string, AsyncTiming>;
  per_file: FileRow[];
  cgroups: number;
  processes: number;
}): void {
  console.log(
    `\n(stats a) one stats pass over real cgroups: ${PODS} pods, ${PODS * CONTAINERS_PER_POD} containers ` +
      `(${real.cgroups} cgroups, ${real.processes} with a process), native vs TS (ms)`,
  );
  console.log(
    'pass                                   files   native p50   p99    cpu |     ts p50   p99    cpu | ts/native',
  );
  for (const r of real.passes) {
    const n = r.native;
    console.log(
      `${r.pass.padEnd(36)} ${String(r.files).padStart(6)}   ${fmt(n?.p50_ms)} ${fmt(n?.p99_ms)} ${fmt(n?.cpu_ms)} | ${fmt(r.ts.p50_ms)} ${fmt(r.ts.p99_ms)} ${fmt(r.ts.cpu_ms)} | ${r.ts_over_native ?? 'n/a'}x`,
    );
  }
  console.log(
    '(stats a) the periodic pass as the agent makes it (readAsync): wall p50 / p99, loop busy per pass, longest hold',
  );
  for (const [impl, t] of Object.entries(real.periodic_async))
    console.log(
      `  ${impl.padEnd(8)} ${fmt(t.p50_ms)} / ${fmt(t.p99_ms)}   loop busy ${fmt(t.loop_busy_ms)}   longest ${fmt(t.loop_longest_ms)} ms`,
    );
  console.log('(stats a, per file) µs per file read + parse: p50 wall of a pass over that file of every cgroup / CPU');
  for (const f of real.per_file)
    console.log(
      `  ${f.file.padEnd(34)} native ${fmt(f.native_us)} / ${fmt(f.native_cpu_us)}   ts ${fmt(f.ts_us)} / ${fmt(f.ts_cpu_us)}`,
    );
}

async function run(opts: { quick: boolean; noOom?: boolean }): Promise<void> {
  const runInfo = startRun(
    `node dist/bench/stats-bench.js${opts.quick ? ' --quick' : ''}${opts.noOom ? ' --no-oom' : ''}`,
  );
  let real: Awaited<ReturnType<typeof realCgroups>> | null = null;
  let realReason: string | undefined;
  if (process.getuid?.() === 0) real = await realCgroups(opts.quick);
  else realReason = 'needs root to make cgroups';
  if (real) printReal(real as Parameters<typeof printReal>[0]);
  let oom: OomLatency[] | null = null;
  let reason: string | undefined;
  const ctr = opts.noOom
    ? { reason: '--no-oom' }
    : process.getuid?.() === 0
      ? startContainerd()
      : { reason: 'needs root to run containerd' };
  if (!ctr.endpoint) {
    reason = ctr.reason;
  } else {
    try {
      oom = await oomLatency(ctr.endpoint, opts.quick ? 20 : 40);
    } catch (err) {
      reason = `OOM runs failed: ${String(err)}`;
    } finally {
      spawnSync('bash', [join(REPO, 'scripts/containerd.sh'), 'stop', '--state-dir', STATE], { stdio: 'ignore' });
    }
  }
  for (const o of oom ?? [])
    console.log(
      `(stats b) OOM kill → event (${o.impl}), ${o.kills} real kills: p50 ${fmt(o.p50_ms)} p99 ${fmt(o.p99_ms)} max ${fmt(o.max_ms)} ms (kernel clock ${fmt(o.kmsg_clock_skew_ms)} ms from CLOCK_MONOTONIC, taken out)`,
    );
  if (reason) console.log(`(stats b) skipped: ${reason}`);
  const path = writeResult('stats.json', runInfo.finish(), {
    real_cgroupfs: real ?? { skipped: realReason },
    oom_kill_to_event: oom,
    ...(reason ? { oom_reason: reason } : {}),
  });
  console.log(`wrote ${path}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main({ quick: process.argv.includes('--quick'), noOom: process.argv.includes('--no-oom') }).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
