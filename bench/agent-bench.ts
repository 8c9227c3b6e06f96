/**
 * The whole agent as an operator sees it, against real containerd (the mission's last two
 * targets): manifest written → pod Running in `/pods` (no pull), manifest deleted → pod gone,
 * and the agent's RSS and CPU with 100 pods running, in standalone mode (static pods) and in
 * API server mode (pods created through the test apiserver, bound to the node). It runs the real
 * CLI (bin/kubelet-ts.js) as a child, as the e2e tests do, measures it from outside
 * (/proc/<pid>/status VmRSS, /proc/<pid>/stat utime+stime) and stops it by its pid.
 *
 *   node dist/bench/agent-bench.js --endpoint unix:///…/containerd.sock [--quick] [--out FILE]
 */
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getPods, makeKubeletDirs, startKubelet, stopKubelet, waitFor, type KubeletProcess } from '../test/support/kubelet-process.js';
import { startTestApiserver, type TestApiserver } from '../test/support/test-apiserver.js';
import { percentile } from './stats.js';

const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const CLK_TCK = 100; // Linux USER_HZ on every architecture we run on

/**
 * RSS and CPU of the agent over a window after its pods settled. rss_anon_mib_median: the part
 * of RSS that is the agent's own (RssAnon; the rest is mostly the node binary's pages, shared
 * with every node process). load_avg_1m: the machine's, during the window.
 */
export interface Footprint { pods: number; rss_mib_median: number; rss_mib_max: number; rss_anon_mib_median: number; cpu_cores_mean: number; window_s: number; load_avg_1m: number }

export interface AgentBenchResult {
  manifest_to_running: { samples: number; p50_ms: number; p99_ms: number };
  delete_to_gone: { samples: number; p50_ms: number; p99_ms: number };
  /** Standalone mode (static pods; the name predates API server mode). Goals: RSS < 80 MiB, CPU < 0.05 cores. */
  footprint: Footprint | null;
  /** API server mode, pods created through the test apiserver. Goals: RSS < 100 MiB, CPU < 0.05 cores. */
  footprint_apiserver: Footprint | null;
  /** 100 pods written at once → all Running, and each pod's manifest → Running during that burst. Goal: all < 30 s, p99 < 5 s. Filled by the batch-start work (issue 18 item 2). */
  burst_to_running: { pods: number; all_running_s: number; per_pod_p50_ms: number; per_pod_p99_ms: number } | null;
  /** A container killed at 100 pods → its restart visible in /pods. Goal: median < 1 s. Filled by the batch-start work (issue 18 item 2). */
  kill_to_restart_visible: { pods: number; samples: number; median_ms: number } | null;
}

/** hostNetwork keeps 100 pods cheap for containerd; the agent does the same work either way. */
function manifest(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'bench' },
    spec: {
      hostNetwork: true, terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', 'trap "exit 0" TERM; sleep 100000 & wait'] }],
    },
  });
}

const phaseOf = async (k: KubeletProcess, name: string) => (await getPods(k)).find((p) => p.metadata?.name?.startsWith(`${name}-`))?.status?.phase;

function procSample(pid: number): { cpuTicks: number; rssKiB: number; anonKiB: number } {
  // /proc/<pid>/stat: fields after the ")" — utime and stime are the 12th and 13th of those.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { cpuTicks: Number(f[11]) + Number(f[12]), rssKiB: kib('VmRSS'), anonKiB: kib('RssAnon') };
}

async function latencies(k: KubeletProcess, samples: number) {
  const up: number[] = [];
  const gone: number[] = [];
  for (let i = 0; i < samples; i++) {
    const name = `lat${i}`;
    const file = join(k.manifests, `${name}.json`);
    let t0 = performance.now();
    writeFileSync(file, manifest(name));
    await waitFor(`${name} Running`, 60_000, async () => ((await phaseOf(k, name)) === 'Running' ? true : undefined), 5);
    up.push(performance.now() - t0);
    t0 = performance.now();
    unlinkSync(file);
    await waitFor(`${name} gone`, 60_000, async () => ((await phaseOf(k, name)) === undefined ? true : undefined), 5);
    gone.push(performance.now() - t0);
  }
  const summary = (s: number[]) => ({ samples: s.length, p50_ms: percentile(s, 50), p99_ms: percentile(s, 99) });
  return { manifest_to_running: summary(up), delete_to_gone: summary(gone) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Samples the agent from outside: VmRSS every second and utime+stime over `windowS` seconds. */
async function measure(pid: number, pods: number, windowS: number): Promise<Footprint> {
  await sleep(5000); // let start-up work (GC, first syncs) settle
  const load = loadavg()[0]!;
  const first = procSample(pid);
  const rss = [first.rssKiB];
  const anon = [first.anonKiB];
  for (let s = 0; s < windowS; s++) {
    await sleep(1000);
    const now = procSample(pid);
    rss.push(now.rssKiB);
    anon.push(now.anonKiB);
  }
  const cpu = (procSample(pid).cpuTicks - first.cpuTicks) / CLK_TCK / windowS;
  const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
  const round2 = (x: number) => Math.round(x * 100) / 100;
  return { pods, rss_mib_median: mib(percentile(rss, 50)), rss_mib_max: mib(Math.max(...rss)), rss_anon_mib_median: mib(percentile(anon, 50)), cpu_cores_mean: Math.round(cpu * 10_000) / 10_000, window_s: windowS, load_avg_1m: round2((load + loadavg()[0]!) / 2) };
}

/** Waits until `count()` reaches `pods` (pods starting at the agent's pace; generous bound). */
async function allRunning(what: string, pods: number, count: () => Promise<number> | number): Promise<void> {
  await waitFor(`${pods} ${what} Running`, 10 * 60_000, async () => ((await count()) === pods ? true : undefined), 500);
}

async function footprint(k: KubeletProcess, pods: number, windowS: number): Promise<Footprint> {
  for (let i = 0; i < pods; i++) writeFileSync(join(k.manifests, `fp${i}.json`), manifest(`fp${i}`));
  await allRunning('static pods', pods, async () => (await getPods(k)).filter((p) => p.metadata?.name?.startsWith('fp') && p.status?.phase === 'Running').length);
  const fp = await measure(k.pid, pods, windowS);
  for (let i = 0; i < pods; i++) rmSync(join(k.manifests, `fp${i}.json`), { force: true });
  await waitFor('footprint pods gone', 5 * 60_000, async () => ((await getPods(k)).some((p) => p.metadata?.name?.startsWith('fp')) ? undefined : true), 500);
  return fp;
}

const NODE = 'e2e-node'; // startKubelet's --hostname-override

/** API server mode: `pods` pods created through the test apiserver (bound to the node), measured, deleted. */
async function footprintApiserver(endpoint: string, pods: number, windowS: number): Promise<Footprint> {
  const dirs = makeKubeletDirs();
  const api: TestApiserver = await startTestApiserver();
  const k = startKubelet({ ...dirs, endpoint, logLevel: 'info', extraArgs: [`--kubeconfig=${api.kubeconfig(dirs.dir)}`] });
  const ns = 'bench-api';
  try {
    await waitFor('node registered', 60_000, () => (api.store.get('nodes', undefined, NODE) ? true : undefined), 200);
    for (let i = 0; i < pods; i++) {
      const spec = (JSON.parse(manifest(`ap${i}`)) as { spec: Record<string, unknown> }).spec;
      const r = await api.call('POST', `/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `ap${i}`, namespace: ns }, spec: { ...spec, nodeName: NODE } });
      if (r.status !== 201) throw new Error(`creating pod ap${i}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }
    await allRunning('API pods', pods, () => api.store.list('pods', ns).filter((p) => (p as { status?: { phase?: string } }).status?.phase === 'Running').length);
    const fp = await measure(k.pid, pods, windowS);
    for (let i = 0; i < pods; i++) await api.call('DELETE', `/api/v1/namespaces/${ns}/pods/ap${i}`, { gracePeriodSeconds: 0 });
    await waitFor('API pods gone from the node', 5 * 60_000, async () => ((await getPods(k)).some((p) => p.metadata?.name?.startsWith('ap')) ? undefined : true), 500);
    return fp;
  } finally {
    await stopKubelet(k);
    await api.stop();
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

export async function runAgentBench(endpoint: string, opts: { quick: boolean }): Promise<AgentBenchResult> {
  const dirs = makeKubeletDirs();
  // info: the production default (debug logging at 100 pods would be measured as agent cost).
  const k = startKubelet({ ...dirs, endpoint, logLevel: 'info' });
  let standalone: Omit<AgentBenchResult, 'footprint_apiserver' | 'burst_to_running' | 'kill_to_restart_visible'>;
  try {
    await waitFor('agent healthy', 60_000, async () => ((await getPods(k)) ? true : undefined), 100);
    const lat = await latencies(k, opts.quick ? 3 : 10);
    standalone = { ...lat, footprint: opts.quick ? null : await footprint(k, 100, 30) };
  } finally {
    await stopKubelet(k);
    rmSync(dirs.dir, { recursive: true, force: true });
  }
  const footprint_apiserver = opts.quick ? null : await footprintApiserver(endpoint, 100, 30);
  return { ...standalone, footprint_apiserver, burst_to_running: null, kill_to_restart_visible: null };
}

/** Standalone run against a containerd the caller started (the full `npm run bench` starts its own). */
async function cli(argv: string[]): Promise<void> {
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=').slice(1).join('=') ?? (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const endpoint = arg('endpoint');
  if (!endpoint) {
    process.stderr.write('usage: node dist/bench/agent-bench.js --endpoint unix:///path/containerd.sock [--quick] [--out bench/results/agent.json]\n');
    process.exit(2);
  }
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = resolve(arg('out') ?? join(repo, 'bench', 'results', 'agent.json'));
  const result = await runAgentBench(endpoint, { quick: argv.includes('--quick') });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(`${JSON.stringify(result, null, 2)}\nwrote ${out}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await cli(process.argv.slice(2));
