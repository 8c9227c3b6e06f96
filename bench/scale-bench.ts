/**
 * 250 pods per node (issue 30, item 3): the real agent, standalone with static pods and
 * `maxPods: 250` in its config (as an operator raising upstream's 110 writes it), measured at 0,
 * 100 and 250 hostNetwork busybox pods. Each level is one window after the pods settled:
 *
 * - relist, housekeeping, stats pass and pod sync durations: the agent's own histograms on
 *   /metrics (upstream's kubelet_pleg_relist_duration_seconds and kubelet_pod_worker_duration_seconds,
 *   our kubelet_ts_housekeeping_duration_seconds and kubelet_ts_stats_pass_duration_seconds),
 *   the difference of two scrapes, so only the window's observations count;
 * - VmRSS / RssAnon (median over the window) and CPU (utime+stime over the window) from /proc.
 *
 * The pods start once per run (100, then 150 more) and are removed at the end. Per-pod slopes
 * (100→250 against 0→100) say whether a cost grows worse than linearly.
 *
 *   node dist/bench/scale-bench.js --endpoint unix:///…/containerd.sock [--window S]
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRuntime } from '../src/cri/index.js';
import {
  getPods,
  httpGet,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../test/support/kubelet-process.js';
import { benchCgroupRoot } from './agent-cgroup.js';
import { cleanRuntime, manifest, procSample } from './agent-bench.js';
import { startRun, writeResult } from './results.js';
import { percentile } from './stats.js';
import { cpuTimes, idleShare, untilQuiet } from './machine-idle.js';

const LEVELS = [0, 100, 250] as const;
const MAX_PODS = 250;
const CLK_TCK = 100;
const SETTLE_MS = 10_000;

/** One histogram's cumulative buckets (le → count), sum and count, as scraped. */
export interface Histo {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

/**
 * The histogram `name` (with `match` in its label set, if given) out of a Prometheus text
 * exposition; undefined when the agent does not expose it.
 */
export function parseHistogram(text: string, name: string, match = ''): Histo | undefined {
  const h: Histo = { buckets: new Map(), sum: 0, count: 0 };
  let seen = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (match && !line.includes(match))) continue;
    const rest = line.slice(name.length);
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (rest.startsWith('_bucket')) {
      const le = /le="([^"]+)"/.exec(rest)?.[1];
      if (le !== undefined) h.buckets.set(le === '+Inf' ? Infinity : Number(le), value);
    } else if (rest.startsWith('_sum')) h.sum = value;
    else if (rest.startsWith('_count')) h.count = value;
    else continue;
    seen = true;
  }
  return seen ? h : undefined;
}

/** b − a: the observations made between two scrapes. */
export function histoDelta(a: Histo | undefined, b: Histo): Histo {
  const buckets = new Map<number, number>();
  for (const [le, n] of b.buckets) buckets.set(le, n - (a?.buckets.get(le) ?? 0));
  return { buckets, sum: b.sum - (a?.sum ?? 0), count: b.count - (a?.count ?? 0) };
}

/**
 * Prometheus histogram_quantile: linear interpolation inside the bucket holding rank q·count
 * (a bucket's upper bound when q falls in +Inf). Bounded by the bucket edges: the answer says
 * "between 10 and 25 ms", no finer; the bench also reports the share at or under the goal.
 */
export function histogramQuantile(h: Histo, q: number): number {
  if (h.count <= 0) return NaN;
  const les = [...h.buckets.keys()].sort((x, y) => x - y);
  const rank = q * h.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const c = h.buckets.get(le)!;
    if (c >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + ((le - prevLe) * (rank - prevCount)) / Math.max(c - prevCount, 1e-9);
    }
    prevLe = le;
    prevCount = c;
  }
  return prevLe;
}

/** Observations at or under `le` seconds (an exact bucket bound), as a share of all. */
function shareAtOrUnder(h: Histo, le: number): number {
  return h.count > 0 ? round((h.buckets.get(le) ?? NaN) / h.count, 3) : NaN;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const ms = (s: number) => round(s * 1000, 2);

export interface DurationRow {
  samples: number;
  mean_ms: number;
  p99_ms: number;
}

function durationRow(h: Histo | undefined): DurationRow | null {
  if (!h || h.count === 0) return null;
  return { samples: h.count, mean_ms: ms(h.sum / h.count), p99_ms: ms(histogramQuantile(h, 0.99)) };
}

export interface LevelResult {
  pods: number;
  /** Time to get from the previous level to this one (manifests written → all Running). */
  start_ms: number | null;
  window_s: number;
  load_avg_1m: { start: number; end: number };
  /** The machine's idle share before the window (after waiting up to 60 s for ≥ 0.85) and over it. */
  machine_idle: { before: number; waited_ms: number; window: number };
  /** p99 from the DefBuckets histogram (interpolated), and the share of relists ≤ 25 ms (the goal). */
  relist: (DurationRow & { share_le_25ms: number }) | null;
  /**
   * The relist's floor: the same two CRI list calls (in parallel, undecoded) made by the bench
   * right after the window, 20 times; what the relist takes beyond this is the agent's own.
   */
  runtime_list: { samples: number; p50_ms: number; p99_ms: number };
  housekeeping: DurationRow | null;
  stats_pass: DurationRow | null;
  /** Periodic pod syncs (kubelet_pod_worker_duration_seconds{operation_type="sync"}): the status sync of each pod. */
  pod_sync: DurationRow | null;
  rss_mib_median: number;
  rss_anon_mib_median: number;
  cpu_cores_mean: number;
  /** With `--gc` only (the agent runs with its inspector open): its GC pauses in the window. */
  gc_pauses?: GcPauses;
}

const METRICS = {
  relist: ['kubelet_pleg_relist_duration_seconds', ''],
  housekeeping: ['kubelet_ts_housekeeping_duration_seconds', ''],
  stats: ['kubelet_ts_stats_pass_duration_seconds', ''],
  sync: ['kubelet_pod_worker_duration_seconds', 'operation_type="sync"'],
} as const;
type MetricKey = keyof typeof METRICS;

async function scrape(k: KubeletProcess): Promise<Record<MetricKey, Histo | undefined>> {
  const r = await httpGet(k.readOnlyPort, '/metrics');
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  const out = {} as Record<MetricKey, Histo | undefined>;
  for (const key of Object.keys(METRICS) as MetricKey[]) {
    const [name, match] = METRICS[key];
    out[key] = parseHistogram(r.body, name, match);
  }
  return out;
}

const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));
const load1 = () => round(loadavg()[0]!);

/** One window at the current level: two scrapes and /proc samples every second in between. */
async function measureLevel(
  k: KubeletProcess,
  level: { pods: number; startMs: number | null; endpoint: string },
  opts: { windowS: number; cpuProf?: string; cdp?: Cdp },
) {
  const { pods, startMs } = level;
  const { windowS, cpuProf: prof, cdp } = opts;
  await sleep(SETTLE_MS); // the start's follow-up syncs and first stats passes
  const quiet = await untilQuiet(); // and the runtime's work of the start (or of the part before)
  const cpuStart = cpuTimes();
  const profile = prof && cdp ? await profiler(cdp) : undefined;
  const gc = cdp ? await gcPauses(cdp) : undefined;
  const loadStart = load1();
  const before = await scrape(k);
  const first = procSample(k.pid);
  const rss = [first.rssKiB];
  const anon = [first.anonKiB];
  for (let s = 0; s < windowS; s++) {
    await sleep(1000);
    const now = procSample(k.pid);
    rss.push(now.rssKiB);
    anon.push(now.anonKiB);
  }
  const cpu = (procSample(k.pid).cpuTicks - first.cpuTicks) / CLK_TCK / windowS;
  const after = await scrape(k);
  await profile?.stop(prof!);
  const gcRow = await gc?.stop();
  const runtimeList = await runtimeListFloor(level.endpoint);
  const delta = (key: MetricKey) => (after[key] ? histoDelta(before[key], after[key]) : undefined);
  const relist = delta('relist');
  const relistRow = durationRow(relist);
  const mib = (kib: number) => round(kib / 1024, 1);
  const row: LevelResult = {
    pods,
    start_ms: startMs,
    window_s: windowS,
    load_avg_1m: { start: loadStart, end: load1() },
    machine_idle: { before: quiet.idle, waited_ms: quiet.waited_ms, window: idleShare(cpuStart, cpuTimes()) },
    relist: relistRow && relist ? { ...relistRow, share_le_25ms: shareAtOrUnder(relist, 0.025) } : null,
    runtime_list: runtimeList,
    housekeeping: durationRow(delta('housekeeping')),
    stats_pass: durationRow(delta('stats')),
    pod_sync: durationRow(delta('sync')),
    rss_mib_median: mib(percentile(rss, 50)),
    rss_anon_mib_median: mib(percentile(anon, 50)),
    cpu_cores_mean: round(cpu, 4),
    ...(gcRow ? { gc_pauses: gcRow } : {}),
  };
  return row;
}

const podName = (i: number) => `sc${i}`;

async function runtimeListFloor(endpoint: string): Promise<LevelResult['runtime_list']> {
  const { runtime, images } = connectRuntime(endpoint);
  const times: number[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await Promise.all([runtime.listPodSandboxRaw(), runtime.listContainersRaw()]);
      times.push(performance.now() - t0);
      await sleep(50);
    }
  } finally {
    runtime.close();
    images.close();
  }
  return { samples: times.length, p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)) };
}

type Cdp = { call(method: string, params?: object): Promise<unknown>; close(): void };

/**
 * The agent's inspector over the DevTools protocol (`--cpu-prof FILE`, `--gc`; development
 * only): the agent runs with `--inspect=127.0.0.1:0` (NODE_OPTIONS). Needs a WebSocket (node
 * --experimental-websocket on Node 20).
 */
async function inspector(k: KubeletProcess): Promise<Cdp> {
  const url = await waitFor(
    'inspector URL in the agent log',
    10_000,
    () => /Debugger listening on (ws:\/\/\S+)/.exec(readFileSync(k.logFile, 'utf8'))?.[1],
    100,
  );
  const ws = new (globalThis as unknown as { WebSocket: typeof WebSocket }).WebSocket(url);
  await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = j)));
  let id = 0;
  const pending = new Map<number, (v: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  };
  const call = (method: string, params = {}) =>
    new Promise<unknown>((r) => {
      pending.set(++id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => ws.close() };
}

/**
 * A CPU profile of the window, written to `file` by stop(), and beside it (`file.heapprofile`)
 * a sampling profile of everything allocated in the window, collected or not: its bytes by call
 * site are what the scavenges have to get through.
 */
async function profiler(cdp: Cdp): Promise<{ stop(file: string): Promise<void> }> {
  await cdp.call('Profiler.enable');
  await cdp.call('Profiler.setSamplingInterval', { interval: 1000 });
  await cdp.call('HeapProfiler.enable');
  await cdp.call('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await cdp.call('Profiler.start');
  return {
    stop: async (file) => {
      const res = (await cdp.call('Profiler.stop')) as { profile: unknown };
      writeFileSync(file, JSON.stringify(res.profile));
      const heap = (await cdp.call('HeapProfiler.stopSampling')) as { profile: unknown };
      writeFileSync(`${file}.heapprofile`, JSON.stringify(heap.profile));
    },
  };
}

export interface GcPauses {
  count: number;
  total_ms: number;
  max_ms: number;
}

/** The agent's GC pauses over the window (a PerformanceObserver for 'gc' entries, evaluated in the agent). */
async function gcPauses(cdp: Cdp): Promise<{ stop(): Promise<GcPauses> }> {
  const expression =
    "globalThis.__ktsGc = []; globalThis.__ktsGcObs?.disconnect(); globalThis.__ktsGcObs = new PerformanceObserver((l) => { for (const e of l.getEntries()) globalThis.__ktsGc.push(e.duration); }); globalThis.__ktsGcObs.observe({ entryTypes: ['gc'] }); 0";
  await cdp.call('Runtime.evaluate', { expression });
  return {
    stop: async () => {
      const r = (await cdp.call('Runtime.evaluate', { expression: 'JSON.stringify(globalThis.__ktsGc)' })) as {
        result: { value: string };
      };
      const d = JSON.parse(r.result.value) as number[];
      return {
        count: d.length,
        total_ms: round(
          d.reduce((a, x) => a + x, 0),
          1,
        ),
        max_ms: round(Math.max(0, ...d), 1),
      };
    },
  };
}

/** Writes manifests [from, to) and waits until that many bench pods are Running; returns the time taken. */
async function growTo(k: KubeletProcess, from: number, to: number): Promise<number> {
  const t0 = performance.now();
  for (let i = from; i < to; i++) writeFileSync(join(k.manifests, `${podName(i)}.json`), manifest(podName(i)));
  await waitFor(
    `${to} pods Running`,
    10 * 60_000,
    async () => {
      const running = (await getPods(k)).filter(
        (p) => p.metadata?.name?.startsWith('sc') && p.status?.phase === 'Running',
      ).length;
      return running >= to ? true : undefined;
    },
    500,
  );
  return Math.round(performance.now() - t0);
}

/** Per-pod increment of a figure: (b − a) / (pods_b − pods_a). */
function slope(a: LevelResult, b: LevelResult, get: (r: LevelResult) => number | undefined): number | null {
  const x = get(a);
  const y = get(b);
  if (x === undefined || y === undefined || Number.isNaN(x) || Number.isNaN(y)) return null;
  return round((y - x) / (b.pods - a.pods), 5);
}

export interface ScaleResult {
  max_pods: number;
  levels: LevelResult[];
  /** Per added pod: from 0 to 100 pods, and from 100 to 250. Linear growth: second ≤ first (within noise). */
  per_pod: Record<string, { from_0_to_100: number | null; from_100_to_250: number | null }>;
  remove_all_ms: number;
}

function perPod(levels: LevelResult[]): ScaleResult['per_pod'] {
  const [l0, l100, l250] = levels as [LevelResult, LevelResult, LevelResult];
  const figures: Record<string, (r: LevelResult) => number | undefined> = {
    rss_mib: (r) => r.rss_mib_median,
    rss_anon_mib: (r) => r.rss_anon_mib_median,
    cpu_cores: (r) => r.cpu_cores_mean,
    relist_mean_ms: (r) => r.relist?.mean_ms,
    housekeeping_mean_ms: (r) => r.housekeeping?.mean_ms,
    stats_pass_mean_ms: (r) => r.stats_pass?.mean_ms,
  };
  const out: ScaleResult['per_pod'] = {};
  for (const [name, get] of Object.entries(figures))
    out[name] = { from_0_to_100: slope(l0, l100, get), from_100_to_250: slope(l100, l250, get) };
  return out;
}

export async function runScaleBench(
  endpoint: string,
  opts: { windowS: number; cpuProf?: string; profPods?: number; agentLog?: string; gc?: boolean },
): Promise<ScaleResult> {
  await cleanRuntime(endpoint);
  const dirs = makeKubeletDirs();
  const inspect = opts.cpuProf !== undefined || opts.gc === true;
  if (inspect) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`;
  // info logging (the production default); maxPods raised as an operator would for 250 pods.
  const podRoot = benchCgroupRoot('scale');
  const k = startKubelet({
    ...dirs,
    endpoint,
    logLevel: 'info',
    extraArgs: [`--cgroup-root=${podRoot.root}`],
    extraConfig: [`maxPods: ${MAX_PODS}`],
  });
  const levels: LevelResult[] = [];
  let removeMs: number | undefined;
  try {
    await waitFor('agent healthy', 60_000, async () => ((await getPods(k)) ? true : undefined), 100);
    const cdp = inspect ? await inspector(k) : undefined;
    let at = 0;
    for (const pods of LEVELS) {
      const startMs = pods === 0 ? null : await growTo(k, at, pods);
      at = pods;
      const cpuProf = pods === (opts.profPods ?? MAX_PODS) ? opts.cpuProf : undefined;
      levels.push(await measureLevel(k, { pods, startMs, endpoint }, { windowS: opts.windowS, cpuProf, cdp }));
      process.stderr.write(`scale: ${JSON.stringify(levels.at(-1))}\n`);
    }
    cdp?.close();
    const t0 = performance.now();
    for (let i = 0; i < at; i++) rmSync(join(k.manifests, `${podName(i)}.json`), { force: true });
    await waitFor(
      'bench pods gone',
      10 * 60_000,
      async () => ((await getPods(k)).some((p) => p.metadata?.name?.startsWith('sc')) ? undefined : true),
      500,
    );
    removeMs = Math.round(performance.now() - t0);
  } finally {
    await stopKubelet(k);
    if (opts.agentLog) copyFileSync(k.logFile, opts.agentLog); // e.g. NODE_OPTIONS=--trace-gc lines
    rmSync(dirs.dir, { recursive: true, force: true });
    await cleanRuntime(endpoint);
    await podRoot.remove();
  }
  return { max_pods: MAX_PODS, levels, per_pod: perPod(levels), remove_all_ms: removeMs ?? NaN };
}

export function printScale(r: ScaleResult): void {
  const f = (v: number | null | undefined, w = 8) => (v === null || v === undefined ? 'n/a' : String(v)).padStart(w);
  console.log('\n(scale) standalone agent at 0 / 100 / 250 pods (maxPods 250); durations in ms, from /metrics');
  console.log(
    '  pods  start_ms  relist p99  ≤25ms  CRI lists p99  housekeep mean/p99  stats mean/p99  sync mean  RSS  RssAnon  CPU',
  );
  for (const l of r.levels)
    console.log(
      `${f(l.pods, 6)} ${f(l.start_ms, 9)} ${f(l.relist?.p99_ms, 11)} ${f(l.relist?.share_le_25ms, 6)} ${f(l.runtime_list.p99_ms, 14)} ${f(l.housekeeping?.mean_ms, 9)}/${f(l.housekeeping?.p99_ms, 7)} ${f(l.stats_pass?.mean_ms, 7)}/${f(l.stats_pass?.p99_ms, 6)} ${f(l.pod_sync?.mean_ms, 10)} ${f(l.rss_mib_median, 5)} ${f(l.rss_anon_mib_median, 7)} ${f(l.cpu_cores_mean, 7)}  (load ${l.load_avg_1m.start}→${l.load_avg_1m.end}, idle ${l.machine_idle.window})`,
    );
  for (const [name, s] of Object.entries(r.per_pod))
    console.log(`  per pod ${name}: 0→100 ${s.from_0_to_100}, 100→250 ${s.from_100_to_250}`);
}

async function cli(argv: string[]): Promise<void> {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  const endpoint = arg('endpoint');
  if (!endpoint) {
    process.stderr.write(
      'usage: node dist/bench/scale-bench.js --endpoint unix:///path/containerd.sock [--window S] [--cpu-prof FILE [--prof-pods 0|100|250]] [--gc] [--agent-log FILE]\n',
    );
    process.exit(2);
  }
  const run = startRun(`node dist/bench/scale-bench.js ${argv.join(' ')}`);
  const cpuProf = arg('cpu-prof');
  const result = await runScaleBench(endpoint, {
    windowS: Number(arg('window') ?? 30),
    cpuProf,
    profPods: arg('prof-pods') === undefined ? undefined : Number(arg('prof-pods')),
    agentLog: arg('agent-log'),
    gc: argv.includes('--gc'),
  });
  printScale(result);
  console.log(`wrote ${writeResult('scale.json', run.finish(), result)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const keepAlive = setInterval(() => undefined, 1000);
  await cli(process.argv.slice(2)).finally(() => clearInterval(keepAlive));
  process.exit(0);
}
