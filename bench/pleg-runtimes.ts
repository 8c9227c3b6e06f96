/**
 * Container exit → PLEG event on each containerd release (issue 15), beside the runtime's own
 * floor. For every exit we record, on one wall clock (ms, sub-ms resolution):
 *
 *   finishedAt   the runtime's ContainerStatus.finishedAt (the shim saw the process exit)
 *   cgroup       our own inotify watch (in the same worker) saw cgroup.events say "populated 0"
 *   criEvent     the PLEG's GetContainerEvents stream delivered CONTAINER_STOPPED_EVENT (1.7 / 2.x,
 *                modes with CRI events only)
 *   listed       the runtime itself first reported the exit to a CRI client: from a worker
 *                thread (bench/pleg-observer.ts), once the cgroup emptied, a ListContainers of
 *                that container every POLL_MS first said exited (--observer list: of the whole
 *                runtime every POLL_MS, all the time, the observer before 2026-11-28)
 *   pleg         the PLEG under test emitted ContainerDied
 *
 * and run the PLEG in four trigger modes: periodic relist only, + cgroup trigger, + CRI events,
 * and both (what the agent runs). Absolute figures vary with machine and load (on this project's
 * machines containerd 1.6's listed − finishedAt alone ranged 48–300 ms), so each row also gives
 * pleg − the runtime's first report (listed, or criEvent when that came first): how long after
 * the runtime could tell anyone, the PLEG told the kubelet.
 *
 *   node dist/bench/pleg-runtimes.js [--quick] [--runtimes 1.6,1.7,2] [--observer on-exit|list]
 * writes bench/results/pleg-runtimes.json (one exit_to_event row per runtime and mode).
 * Development only: KUBELET_TS_BENCH_MODES=cgroup+cri-events runs only the modes named;
 * KUBELET_TS_BENCH_TIMELINES=file appends every exit's timeline and this thread's stalls (a 1 ms
 * timer late by more than 4 ms, every GC) to the file as JSON lines.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Pod } from '../src/api/types.js';
import { connectRuntime } from '../src/cri/index.js';
import { createImageManager } from '../src/images/index.js';
import { createRuntimeManager } from '../src/kuberuntime/index.js';
import { createVolumeManager } from '../src/volume/index.js';
import {
  createGenericPLEG,
  createPodStatusCache,
  criRawSource,
  CgroupExitWatcher,
  findUnifiedRoot,
} from '../src/pleg/index.js';
import { hotPaths } from '../src/cmd/hot-paths.js';
import { percentile } from './stats.js';
import { cleanup } from './pleg-e2e.js';
import type { ObserverInput, ObserverKind, Observation } from './pleg-observer.js';
import { startRun, writeResult, type RunInfo } from './results.js';
import { benchCgroupRoot } from './agent-cgroup.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
/** Interval of the observer's poll that finds the runtime's own first report. */
const POLL_MS = 2;
const PER_POD = 5;

export type TriggerMode = 'periodic' | 'cgroup' | 'cri-events' | 'cgroup+cri-events';
const ALL_MODES: TriggerMode[] = ['periodic', 'cgroup', 'cri-events', 'cgroup+cri-events'];
/** KUBELET_TS_BENCH_MODES=a,b runs only those modes (development; the committed run has all). */
const MODES = process.env.KUBELET_TS_BENCH_MODES
  ? ALL_MODES.filter((m) => process.env.KUBELET_TS_BENCH_MODES!.split(',').includes(m))
  : ALL_MODES;

interface Timeline {
  finishedAt: number;
  listed?: number;
  /** only the observer's slow discovery list saw the exit (its time may be late) */
  fallback?: boolean;
  cgroup?: number;
  criEvent?: number;
  pleg?: number;
}

export interface ModeRow {
  mode: TriggerMode;
  samples: number;
  /** pleg − finishedAt */
  p50_ms: number | null;
  p99_ms: number | null;
  /** pleg − the runtime's first report (firstReport): how far behind it the PLEG was */
  behind_runtime_p50_ms: number | null;
  behind_runtime_p99_ms: number | null;
  /** share of the exits whose ContainerDied came within 10 ms of the runtime's first report */
  behind_runtime_within_10ms: number | null;
  /** pleg − criEvent: what is left after the event (its statuses are written into the cache) */
  after_cri_event_p50_ms?: number | null;
  after_cri_event_p99_ms?: number | null;
  /** the trigger was not available on this runtime (CRI events on 1.6) */
  unavailable?: string;
}

export interface RuntimeRow {
  runtime: string;
  version: string;
  native: boolean;
  exits: number;
  poll_interval_ms: number;
  /** how the runtime's first report was found (bench/pleg-observer.ts) */
  observer: ObserverKind;
  /** exits whose first report only the slow discovery list saw ('on-exit' observer; expect 0) */
  observer_fallbacks: number;
  /** the runtime's own floor, each against finishedAt, over all modes' exits */
  floor: {
    listed_p50_ms: number;
    listed_p99_ms: number;
    cgroup_p50_ms: number | null;
    cgroup_p99_ms: number | null;
    cri_event_p50_ms: number | null;
    cri_event_p99_ms: number | null;
  };
  exit_to_event: ModeRow[];
  reason?: string;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pod whose containers exit `delaysS` seconds after they start. */
function pod(ns: string, name: string, delaysS: number[]): Pod {
  const containers = delaysS.map((d, c) => ({
    name: `c${c}`,
    image: IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `sleep ${Math.max(0.2, d).toFixed(3)}`],
  }));
  return {
    metadata: { name, namespace: ns, uid: `${ns}-${name}` },
    spec: { hostNetwork: true, restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers },
  } as Pod;
}

/**
 * When exits begin, after the start of the run: every container is started by then, so exits
 * do not compete with container creation (which would measure a busy runtime, not the path).
 */
const EXITS_BEGIN_MS = 9000;
/** Exits are spread over this long, in random order, so triggers are not coalesced into one relist. */
const EXITS_SPREAD_MS = 4000;

/** One mode on one runtime: `exits` containers exit; returns each one's timeline. */
async function runMode(
  target: { endpoint: string; observer: ObserverKind },
  ns: string,
  exits: number,
  mode: TriggerMode,
): Promise<{ timelines: Timeline[]; criEvents: string }> {
  const { endpoint } = target;
  const { runtime, images } = connectRuntime(endpoint);
  // Its pods' cgroups under a root of its own, removed with it: no leftovers for the next mode.
  const podRoot = benchCgroupRoot(ns);
  const manager = createRuntimeManager({
    cgroupRoot: podRoot.root,
    runtime,
    imageManager: createImageManager({ images }),
    podLogsDir: `/tmp/kts-bench-logs/${ns}`,
    rootDir: `/tmp/kts-bench-root/${ns}`,
    volumes: createVolumeManager({ rootDir: `/tmp/kts-bench-root/${ns}` }),
    nodeName: 'bench',
    hostIP: '127.0.0.1',
  });
  const root = findUnifiedRoot();
  const t = new Map<string, Timeline>();
  const at = (id: string) => t.get(id) ?? (t.set(id, { finishedAt: NaN }), t.get(id)!);
  const useCgroup = mode === 'cgroup' || mode === 'cgroup+cri-events';
  const useEvents = mode === 'cri-events' || mode === 'cgroup+cri-events';
  const pleg = createGenericPLEG({
    runtime: manager,
    source: criRawSource(runtime),
    differ: hotPaths().pleg.createRelistDiffer(),
    cache: createPodStatusCache(),
    createExitWatcher:
      useCgroup && root
        ? (onExit) =>
            new CgroupExitWatcher({
              root,
              cgroupRoot: podRoot.root,
              createFsWatcher: hotPaths().inotify.createFsWatcher,
              onExit,
            })
        : undefined,
    // The CRI event's arrival is timed on the PLEG's own stream: containerd 1.7 hands each event
    // to ONE of its GetContainerEvents subscribers (containerd#7318, fixed in 2.0), so a second
    // stream would steal half of them.
    subscribeContainerEvents: useEvents
      ? (onEvent, onError) =>
          runtime.getContainerEvents((e) => {
            if (e.type === 'CONTAINER_STOPPED_EVENT') at(e.containerId).criEvent ??= now();
            onEvent(e);
          }, onError)
      : undefined,
  });
  pleg.watch((e) => {
    if (e.type === 'ContainerDied') at(e.data).pleg ??= now();
  });
  // The runtime's first report and our own cgroup watch come from a worker thread (pleg-observer.ts).
  const observer = new Worker(new URL('./pleg-observer.js', import.meta.url), {
    workerData: {
      endpoint,
      ns,
      root,
      cgroupRoot: podRoot.root,
      pollMs: POLL_MS,
      observer: target.observer,
    } satisfies ObserverInput,
  });
  observer.on('message', (o: Observation) => {
    if (o.kind === 'cgroup') at(o.id).cgroup ??= o.at;
    else if (at(o.id).listed === undefined) Object.assign(at(o.id), { listed: o.at, fallback: o.fallback });
  });
  const observerDone = new Promise<void>((resolve) => observer.once('exit', () => resolve()));
  const stalls = watchStalls(process.env.KUBELET_TS_BENCH_TIMELINES);
  // Absolute exit times, shuffled, each container's sleep computed just before its pod starts.
  const t0 = Date.now();
  const exitAt = Array.from({ length: exits }, (_, i) => t0 + EXITS_BEGIN_MS + (i * EXITS_SPREAD_MS) / exits).sort(
    () => Math.random() - 0.5,
  );
  try {
    pleg.start();
    for (let p = 0; p * PER_POD < exits; p++) {
      const mine = exitAt.slice(p * PER_POD, (p + 1) * PER_POD);
      const pd = pod(
        ns,
        `p${p}`,
        mine.map((at) => (at - Date.now()) / 1000),
      );
      const r = await manager.syncPod(
        pd,
        await manager.getPodStatus(pd.metadata!.uid!, pd.metadata!.name!, pd.metadata!.namespace!),
      );
      if (r.error) throw r.error;
    }
    if (Date.now() > t0 + EXITS_BEGIN_MS)
      console.warn(`pleg-runtimes: starting the pods took longer than ${EXITS_BEGIN_MS} ms; exits overlapped starts`);
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline) {
      const ours = [...t.entries()].filter(([, v]) => v.listed !== undefined);
      if (ours.length >= exits && ours.every(([, v]) => v.pleg !== undefined)) break;
      await sleep(100);
    }
    await sleep(300); // late CRI events still count toward the floor
    const criEvents = pleg.criEventsState?.() ?? 'off';
    for (const [id, v] of t) {
      const st = await runtime.containerStatus(id).catch(() => undefined);
      if (st?.finishedAt) v.finishedAt = Number(st.finishedAt) / 1e6;
    }
    return {
      timelines: [...t.values()].filter((v) => !Number.isNaN(v.finishedAt) && v.listed !== undefined),
      criEvents,
    };
  } finally {
    observer.postMessage('stop');
    await observerDone;
    stalls.stop();
    pleg.stop();
    await cleanup({ endpoint, ns }, runtime);
    await podRoot.remove();
    for (const c of [runtime, images]) c.close();
  }
}

/**
 * Development aid (KUBELET_TS_BENCH_TIMELINES=file): this thread's stalls during a mode, a 1 ms
 * timer later than 4 ms and every GC, appended to the file beside the exits' timelines.
 */
function watchStalls(file: string | undefined): { stop(): void } {
  if (!file) return { stop: () => undefined };
  let last = now();
  const timer = setInterval(() => {
    const t = now();
    if (t - last > 5) appendFileSync(file, `${JSON.stringify({ stall: 'loop', at: last, ms: t - last - 1 })}\n`);
    last = t;
  }, 1);
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      appendFileSync(
        file,
        `${JSON.stringify({ stall: 'gc', at: performance.timeOrigin + e.startTime, ms: e.duration })}\n`,
      );
  });
  gc.observe({ entryTypes: ['gc'] });
  return {
    stop: () => {
      clearInterval(timer);
      gc.disconnect();
    },
  };
}

const p = (xs: number[], q: number) => (xs.length ? percentile(xs, q) : null);
const deltas = (ts: Timeline[], a: (v: Timeline) => number | undefined, b: (v: Timeline) => number | undefined) =>
  ts.flatMap((v) => (a(v) !== undefined && b(v) !== undefined ? [a(v)! - b(v)!] : []));

/**
 * The runtime's first report of an exit to any CRI client: the observer's list, or the CRI
 * event on the PLEG's own stream if that came earlier (it is a report of the runtime too).
 */
const firstReport = (v: Timeline) => (v.criEvent !== undefined && v.criEvent < v.listed! ? v.criEvent : v.listed);

/** Every mode against one running containerd. */
export async function benchRuntime(
  target: { endpoint: string; observer: ObserverKind },
  runtimeName: string,
  version: string,
  exits: number,
): Promise<RuntimeRow> {
  const tag = `bench-rt-${Date.now().toString(36)}`;
  const all: Timeline[] = [];
  const rows: ModeRow[] = [];
  for (const mode of MODES) {
    const { timelines, criEvents } = await runMode(target, `${tag}-${mode.replace(/\W/g, '')}`, exits, mode);
    const dump = process.env.KUBELET_TS_BENCH_TIMELINES;
    if (dump)
      for (const v of timelines) appendFileSync(dump, `${JSON.stringify({ runtime: runtimeName, mode, ...v })}\n`);
    all.push(...timelines);
    const lat = deltas(
      timelines,
      (v) => v.pleg,
      (v) => v.finishedAt,
    );
    const behind = deltas(timelines, (v) => v.pleg, firstReport);
    const afterEvent =
      mode.includes('cri-events') && criEvents === 'active'
        ? deltas(
            timelines,
            (v) => v.pleg,
            (v) => v.criEvent,
          )
        : undefined;
    rows.push({
      mode,
      samples: lat.length,
      p50_ms: p(lat, 50),
      p99_ms: p(lat, 99),
      behind_runtime_p50_ms: p(behind, 50),
      behind_runtime_p99_ms: p(behind, 99),
      behind_runtime_within_10ms: behind.length ? behind.filter((d) => d <= 10).length / behind.length : null,
      ...(afterEvent ? { after_cri_event_p50_ms: p(afterEvent, 50), after_cri_event_p99_ms: p(afterEvent, 99) } : {}),
      ...(mode.includes('cri-events') && criEvents === 'unsupported'
        ? { unavailable: 'runtime answers GetContainerEvents with Unimplemented' }
        : {}),
    });
  }
  const listed = deltas(
    all,
    (v) => v.listed,
    (v) => v.finishedAt,
  );
  const cg = deltas(
    all,
    (v) => v.cgroup,
    (v) => v.finishedAt,
  );
  const ev = deltas(
    all,
    (v) => v.criEvent,
    (v) => v.finishedAt,
  );
  return {
    runtime: runtimeName,
    version,
    native: process.env.KUBELET_TS_NATIVE !== '0',
    exits,
    poll_interval_ms: POLL_MS,
    observer: target.observer,
    observer_fallbacks: all.filter((v) => v.fallback).length,
    floor: {
      listed_p50_ms: p(listed, 50)!,
      listed_p99_ms: p(listed, 99)!,
      cgroup_p50_ms: p(cg, 50),
      cgroup_p99_ms: p(cg, 99),
      cri_event_p50_ms: p(ev, 50),
      cri_event_p99_ms: p(ev, 99),
    },
    exit_to_event: rows,
  };
}

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '     n/a' : v.toFixed(1).padStart(8));

const share = (v: number | null) => (v === null ? '   n/a' : `${(v * 100).toFixed(0)} %`.padStart(6));

export function printRuntimeRows(rows: RuntimeRow[]): void {
  console.log(
    '\n(f) container exit → PLEG ContainerDied per runtime (ms after finishedAt; "behind" = after the runtime first reported the exit)',
  );
  console.log('runtime      mode                 samples      p50      p99   behind p50  behind p99  ≤10 ms');
  for (const r of rows) {
    if (r.reason) {
      console.log(`${r.runtime.padEnd(12)} skipped: ${r.reason}`);
      continue;
    }
    for (const m of r.exit_to_event) {
      console.log(
        `${r.runtime.padEnd(12)} ${m.mode.padEnd(20)} ${String(m.samples).padStart(7)} ${fmt(m.p50_ms)} ${fmt(m.p99_ms)}     ${fmt(m.behind_runtime_p50_ms)}    ${fmt(m.behind_runtime_p99_ms)}  ${share(m.behind_runtime_within_10ms)}${m.unavailable ? '  (events unavailable: periodic/cgroup only)' : ''}${m.after_cri_event_p50_ms != null ? `  (after the CRI event: p50 ${fmt(m.after_cri_event_p50_ms).trim()} p99 ${fmt(m.after_cri_event_p99_ms).trim()})` : ''}`,
      );
    }
    const f = r.floor;
    console.log(
      `${r.runtime.padEnd(12)} runtime floor: first report p50 ${fmt(f.listed_p50_ms)} p99 ${fmt(f.listed_p99_ms)} | cgroup p50 ${fmt(f.cgroup_p50_ms)} p99 ${fmt(f.cgroup_p99_ms)} | CRI event p50 ${fmt(f.cri_event_p50_ms)} p99 ${fmt(f.cri_event_p99_ms)}  (containerd ${r.version}; observer ${r.observer}, ${r.observer_fallbacks} fallbacks)`,
    );
  }
}

/** Starts each release with scripts/containerd.sh --version, benches it, stops it. */
export async function runRuntimeBench(opts: {
  quick: boolean;
  runtimes?: string[];
  observer?: ObserverKind;
}): Promise<RuntimeRow[]> {
  const rows: RuntimeRow[] = [];
  const stateDir = join(REPO, '.state/bench-containerd');
  const script = join(REPO, 'scripts/containerd.sh');
  for (const rt of opts.runtimes ?? ['1.6', '1.7', '2']) {
    spawnSync('bash', [script, 'stop', '--state-dir', stateDir], { stdio: 'ignore' });
    let endpoint: string;
    try {
      endpoint = execFileSync('bash', [script, 'start', '--version', rt, '--state-dir', stateDir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
        .trim()
        .split('\n')
        .pop()!;
    } catch (err) {
      rows.push({
        runtime: rt,
        reason: `containerd ${rt} could not start: ${String((err as { stderr?: string }).stderr ?? err)
          .trim()
          .split('\n')
          .pop()}`,
      } as RuntimeRow);
      continue;
    }
    try {
      const { runtime, images } = connectRuntime(endpoint);
      const version = (await runtime.version()).runtimeVersion;
      runtime.close();
      images.close();
      const target = { endpoint, observer: opts.observer ?? 'on-exit' };
      rows.push(await benchRuntime(target, rt, version, opts.quick ? 20 : 50));
    } catch (err) {
      rows.push({ runtime: rt, reason: String(err) } as RuntimeRow);
    } finally {
      spawnSync('bash', [script, 'stop', '--state-dir', stateDir], { stdio: 'ignore' });
    }
  }
  return rows;
}

/** bench/results/pleg-runtimes.json: the run block, then one row per runtime. */
export function writeRuntimeRows(rows: RuntimeRow[], run: RunInfo): void {
  writeResult('pleg-runtimes.json', run, { runtimes: rows });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--runtimes');
  const runtimes = i >= 0 ? args[i + 1]!.split(',') : undefined;
  const o = args.indexOf('--observer');
  const observer = o >= 0 ? (args[o + 1] as ObserverKind) : undefined;
  if (observer !== undefined && observer !== 'on-exit' && observer !== 'list')
    throw new Error(`--observer must be on-exit or list, not ${String(observer)}`);
  const run = startRun(`node dist/bench/pleg-runtimes.js ${args.join(' ')}`.trim());
  runRuntimeBench({ quick: args.includes('--quick'), runtimes, observer }).then(
    (rows) => {
      printRuntimeRows(rows);
      writeRuntimeRows(rows, run.finish());
      console.log('\nwrote bench/results/pleg-runtimes.json');
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
