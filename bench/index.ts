/**
 * `npm run bench [-- --quick]`: the PLEG benchmarks of issue 4.
 *   (a) decode + diff per relist, native vs TS, 100 … 50,000 containers, 1 % churn
 *   (b) end-to-end relist against real containerd with 10 / 50 / 100 pods
 *   (c) container exit → PLEG event, periodic-only vs event-driven
 *   (d) (b) and (c) again with KUBELET_TS_NATIVE=0 (in a child process)
 *   (e) the conventional path (protobufjs objects + TS diff), reported beside (a)
 *   (f) container exit → event on containerd 1.6, 1.7 and 2.x, per trigger, beside each
 *       runtime's own first report (bench/pleg-runtimes.ts → bench/results/pleg-runtimes.json)
 * and the whole agent (bench/agent-bench.ts): manifest → Running, delete → gone, and RSS / CPU
 * with 100 static pods (full run only), and API traffic per node (bench/api-traffic.ts, full run only).
 * Prints a table and writes bench/results/pleg.json (fixed shape), pleg-ts-mode.json and agent.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nativeStatus } from '../src/cmd/hot-paths.js';
import { runDiffBench } from './pleg-diff.js';
import { exitToEvent, relistE2E } from './pleg-e2e.js';
import { runAgentBench, type AgentBenchResult, type Footprint, type FootprintPeak } from './agent-bench.js';
import { startRun, writeResult, type RunInfo } from './results.js';
import { printRuntimeRows, runRuntimeBench, writeRuntimeRows } from './pleg-runtimes.js';
import { printScale, runScaleBench } from './scale-bench.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');

interface E2EResult {
  relist_e2e: { pods: number; p50_ms: number; p99_ms: number }[] | null;
  exit_to_event: {
    periodic_p50_ms: number;
    periodic_p99_ms: number;
    evented_p50_ms: number;
    evented_p99_ms: number;
  } | null;
  reason?: string;
}

async function e2e(endpoint: string): Promise<E2EResult> {
  const tag = `bench-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'nat'}-${Date.now().toString(36)}`;
  const relist = await relistE2E({ endpoint, ns: `${tag}-r` }, quick ? [10] : [10, 50, 100], quick ? 20 : 100);
  const exits = quick ? 20 : 50;
  const periodic = await exitToEvent({ endpoint, ns: `${tag}-p` }, exits, false);
  const evented = await exitToEvent({ endpoint, ns: `${tag}-e` }, exits, true);
  return {
    relist_e2e: relist,
    exit_to_event: {
      periodic_p50_ms: periodic.p50_ms,
      periodic_p99_ms: periodic.p99_ms,
      evented_p50_ms: evented.p50_ms,
      evented_p99_ms: evented.p99_ms,
    },
  };
}

function startContainerd(): { endpoint?: string; reason?: string } {
  try {
    const out = execFileSync(
      'bash',
      [join(REPO, 'scripts/containerd.sh'), 'start', '--state-dir', join(REPO, '.state/bench-containerd')],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return { endpoint: out.trim().split('\n').pop() };
  } catch (err) {
    return {
      reason: `containerd could not start: ${String((err as { stderr?: string }).stderr ?? err)
        .trim()
        .split('\n')
        .pop()}`,
    };
  }
}

function stopContainerd(): void {
  spawnSync(
    'bash',
    [join(REPO, 'scripts/containerd.sh'), 'stop', '--state-dir', join(REPO, '.state/bench-containerd')],
    { stdio: 'ignore' },
  );
}

const fmt = (v: number | null | undefined) =>
  v === null || v === undefined || Number.isNaN(v) ? '   n/a' : v.toFixed(3).padStart(8);

function printAgent(a: AgentBenchResult | { reason: string }): void {
  if ('reason' in a) return void console.log(`\n(agent) skipped: ${a.reason}`);
  console.log('\n(agent) the daemon against containerd (ms)            samples        p50        p99');
  console.log(
    `manifest written → Running in /pods              ${String(a.manifest_to_running.samples).padStart(7)}   ${fmt(a.manifest_to_running.p50_ms)}   ${fmt(a.manifest_to_running.p99_ms)}`,
  );
  console.log(
    `manifest deleted → gone from /pods               ${String(a.delete_to_gone.samples).padStart(7)}   ${fmt(a.delete_to_gone.p50_ms)}   ${fmt(a.delete_to_gone.p99_ms)}`,
  );
  for (const [mode, f] of [
    ['standalone', a.footprint],
    ['API server mode', a.footprint_apiserver],
  ] as const) {
    if (!f) {
      console.log(`footprint, ${mode}: full run only`);
      continue;
    }
    const ws = (x: number | null) => (x === null ? 'n/a' : `${x}`);
    const row = (what: string, w: Omit<Footprint, 'idle' | 'start_peak' | 'delete_peak' | 'cgroup'>) =>
      `  ${what}: RssAnon ${w.rss_anon_mib_median} / RSS ${w.rss_mib_median} (max ${w.rss_mib_max}) / working set ${ws(w.working_set_mib_median)} MiB, CPU ${w.cpu_cores_mean} cores (${w.window_s} s, load ${w.load_avg_1m})`;
    const calls = (p: FootprintPeak) =>
      p.cri_calls_per_pod
        ? `; CRI calls per pod: ${Object.entries(p.cri_calls_per_pod)
            .map(([op, n]) => `${op} ${n}`)
            .join(', ')}`
        : '';
    const peak = (what: string, p: FootprintPeak) =>
      `  peak while ${what}: RssAnon ${p.rss_anon_mib} / RSS ${p.rss_mib} (VmHWM ${p.rss_hwm_mib}) / working set ${ws(p.working_set_mib)} MiB (${p.seconds} s, load ${p.load_avg_1m})${calls(p)}`;
    const cg = 'reason' in f.cgroup ? `no cgroup: ${f.cgroup.reason}` : `cgroup ${f.cgroup.version}`;
    console.log(`footprint, ${mode} (medians over the window; ${cg}):`);
    console.log(row('idle', f.idle));
    console.log(row(`${f.pods} pods`, f));
    console.log(peak(`${f.pods} pods start`, f.start_peak));
    console.log(peak(`${f.pods} pods are deleted`, f.delete_peak));
  }
}

/** Issue 18's burst rows (full run only). */
function printBurst(a: AgentBenchResult | { reason: string }): void {
  if ('reason' in a || !a.burst_start) return;
  const b = a.burst_start;
  console.log(
    `${b.pods} pods at once: all Running ${b.all_running_ms} ms; each pod manifest → Running p50 ${b.pod_running_p50_ms} / p99 ${b.pod_running_p99_ms} ms`,
  );
  const f = b.containerd_alone;
  if (f)
    console.log(
      `  containerd alone, same pods, same run (bound ${f.bound}): all started ${f.all_started_ms} ms, p99 ${f.pod_started_p99_ms} ms; agent ÷ containerd: all ${b.ratio_all_running}×, p99 ${b.ratio_pod_p99}× (goal < 1.5×)`,
    );
  const k = a.kill_to_restart_visible;
  if (k)
    console.log(`kill → restart visible at ${k.pods} pods, ${k.samples} samples: p50 ${k.p50_ms} / p99 ${k.p99_ms} ms`);
  const f0 = k?.runtime_alone;
  if (f0)
    console.log(
      `  runtime alone, same pods, same run: kill → exit recorded p50 ${f0.exit_recorded_p50_ms} / p99 ${f0.exit_recorded_p99_ms} ms, → restarted p50 ${f0.restarted_p50_ms} / p99 ${f0.restarted_p99_ms} ms (goal p50 < 300 ms)`,
    );
}

/** Issue 30's 250-pod part (bench/scale-bench.ts), full run only: about 5 minutes. */
async function runScale(endpoint: string): Promise<void> {
  const run = startRun('npm run bench (scale part: node dist/bench/scale-bench.js)');
  try {
    const r = await runScaleBench(endpoint, { windowS: 30 });
    printScale(r);
    console.log(`wrote ${writeResult('scale.json', run.finish(), r)}`);
  } catch (err) {
    console.log(`\n(scale) skipped: ${String(err)}`);
  }
}

async function main(): Promise<void> {
  if (args.has('--e2e-child')) {
    // (d): the same e2e run in this process's mode; the parent reads our JSON.
    process.stdout.write(JSON.stringify(await e2e(process.env.KUBELET_TS_BENCH_ENDPOINT!)));
    return;
  }
  console.log(`kubelet-ts bench${quick ? ' (quick)' : ''}; hot paths: ${JSON.stringify(nativeStatus())}`);
  const run = startRun(`npm run bench${quick ? ' -- --quick' : ''}`);
  const diff = await runDiffBench({ quick });
  console.log(
    '\n(a) PLEG decode+diff per relist, 1 % churn (ms)        (e) conventional: protobufjs objects + TS diff',
  );
  console.log('containers   native p50   native p99       ts p50       ts p99   ts/native   conv p50   conv p99');
  for (const d of diff.diff) {
    const ratio = d.native_median_ms ? (d.ts_median_ms / d.native_median_ms).toFixed(1) + 'x' : 'n/a';
    console.log(
      `${String(d.containers).padStart(10)}   ${fmt(d.native_median_ms)}     ${fmt(d.native_p99_ms)}     ${fmt(d.ts_median_ms)}     ${fmt(d.ts_p99_ms)}   ${ratio.padStart(9)}   ${fmt(d.conventional_median_ms)}   ${fmt(d.conventional_p99_ms)}`,
    );
  }

  let result: E2EResult = { relist_e2e: null, exit_to_event: null };
  let tsMode: E2EResult = { relist_e2e: null, exit_to_event: null };
  let agent: AgentBenchResult | { reason: string } | undefined;
  let agentInfo: RunInfo | undefined;
  const ctr = process.getuid?.() === 0 ? startContainerd() : { reason: 'needs root to run containerd' };
  if (!ctr.endpoint) {
    result.reason = tsMode.reason = ctr.reason;
    console.log(`\n(b)-(d) skipped: ${ctr.reason}`);
  } else {
    try {
      result = await e2e(ctr.endpoint);
      const child = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--e2e-child', ...(quick ? ['--quick'] : [])],
        {
          env: { ...process.env, KUBELET_TS_NATIVE: '0', KUBELET_TS_BENCH_ENDPOINT: ctr.endpoint },
          encoding: 'utf8',
          maxBuffer: 16 << 20,
        },
      );
      try {
        tsMode = JSON.parse(child.stdout);
      } catch {
        tsMode.reason = `TS-mode run failed: ${child.stderr.trim().split('\n').slice(-3).join(' ')}`;
      }
      const agentRun = startRun(`npm run bench${quick ? ' -- --quick' : ''}`);
      agent = await runAgentBench(ctr.endpoint, { quick }).catch((err: unknown) => ({
        reason: `agent bench failed: ${String(err)}`,
      }));
      agentInfo = agentRun.finish();
      // API traffic per node (bench/results/api-traffic.json; ~4 min, full run only).
      const traffic = quick ? undefined : await import('./api-traffic.js');
      await traffic
        ?.main(ctr.endpoint)
        .catch((err: unknown) => console.log(`\n(api) API traffic bench failed: ${String(err)}`));
      if (!quick) await runScale(ctr.endpoint); // 0 / 100 / 250 pods (bench/results/scale.json)
    } finally {
      stopContainerd();
    }
    for (const [label, r] of [
      ['native', result],
      ['KUBELET_TS_NATIVE=0', tsMode],
    ] as const) {
      console.log(`\n(b) end-to-end relist vs containerd, ${label} (ms)\n      pods        p50        p99`);
      for (const x of r.relist_e2e ?? [])
        console.log(`${String(x.pods).padStart(10)}   ${fmt(x.p50_ms)}   ${fmt(x.p99_ms)}`);
      const e = r.exit_to_event;
      console.log(
        `(c) exit → event, ${label} (ms): periodic p50 ${fmt(e?.periodic_p50_ms)}  p99 ${fmt(e?.periodic_p99_ms)} | event-driven p50 ${fmt(e?.evented_p50_ms)}  p99 ${fmt(e?.evented_p99_ms)}${r.reason ? `  (${r.reason})` : ''}`,
      );
    }
  }
  if (agent) printAgent(agent);
  if (agent) printBurst(agent);
  const shape = (r: E2EResult) => ({
    diff: diff.diff.map((d) => ({
      containers: d.containers,
      native_median_ms: d.native_median_ms,
      native_p99_ms: d.native_p99_ms,
      ts_median_ms: d.ts_median_ms,
      ts_p99_ms: d.ts_p99_ms,
    })),
    relist_e2e: r.relist_e2e,
    exit_to_event: r.exit_to_event,
  });
  // One run block for the files of this run: they are one run's output (issue 30).
  const stamp = run.finish();
  writeResult('pleg.json', stamp, shape(result));
  writeResult('pleg-ts-mode.json', stamp, shape(tsMode));
  writeResult('pleg-conventional.json', stamp, { diff: diff.diff });
  if (agent && agentInfo) writeResult('agent.json', agentInfo, agent);
  console.log(
    `\nwrote bench/results/pleg.json, pleg-ts-mode.json, pleg-conventional.json${agent ? ', agent.json' : ''}`,
  );
  if (process.getuid?.() === 0) {
    const runtimesRun = startRun(`npm run bench${quick ? ' -- --quick' : ''}`);
    const rows = await runRuntimeBench({ quick });
    printRuntimeRows(rows);
    writeRuntimeRows(rows, runtimesRun.finish());
    console.log('wrote bench/results/pleg-runtimes.json');
  }
  await (await import('./stats-bench.js')).main({ quick }); // stats pass, OOM kill → event (bench/results/stats.json)
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
