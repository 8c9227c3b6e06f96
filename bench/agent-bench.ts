/**
 * The whole agent as an operator sees it, against real containerd (the mission's last two
 * targets): manifest written → pod Running in `/pods` (no pull), manifest deleted → pod gone,
 * and the agent's RSS and CPU with N static pods running. It runs the real CLI
 * (bin/kubelet-ts.js) as a child, as the e2e tests do, and stops it by its pid.
 */
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRuntime } from '../src/cri/index.js';
import { removeTestPods } from '../test/support/containerd.js';
import { containerPids, killContainerProcesses } from '../test/support/container-pids.js';
import { getPods, makeKubeletDirs, startKubelet, stopKubelet, waitFor, type KubeletProcess } from '../test/support/kubelet-process.js';
import { percentile } from './stats.js';

const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const CLK_TCK = 100; // Linux USER_HZ on every architecture we run on

export interface AgentBenchResult {
  manifest_to_running: { samples: number; p50_ms: number; p99_ms: number };
  delete_to_gone: { samples: number; p50_ms: number; p99_ms: number };
  footprint: { pods: number; rss_mib_median: number; rss_mib_max: number; cpu_cores_mean: number; window_s: number } | null;
  /** N pods written at once: until all are Running, and each pod's manifest → Running. */
  burst_start?: BurstResult | null;
  /** At N pods: a container's processes SIGKILLed → the restarted container Running in /pods. */
  kill_to_restart_visible?: { pods: number; samples: number; p50_ms: number; p99_ms: number } | null;
}

export interface BurstResult { pods: number; all_running_ms: number; pod_running_p50_ms: number; pod_running_p99_ms: number }

/** hostNetwork keeps 100 pods cheap for containerd; the agent does the same work either way. */
function manifest(name: string, sleepArg = '100000'): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'bench' },
    spec: {
      hostNetwork: true, terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', `trap "exit 0" TERM; sleep ${sleepArg} & wait`] }],
    },
  });
}

const phaseOf = async (k: KubeletProcess, name: string) => (await getPods(k)).find((p) => p.metadata?.name?.startsWith(`${name}-`))?.status?.phase;

function procSample(pid: number): { cpuTicks: number; rssKiB: number } {
  // /proc/<pid>/stat: fields after the ")" — utime and stime are the 12th and 13th of those.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuTicks: Number(f[11]) + Number(f[12]), rssKiB: rss ? Number(rss[1]) : 0 };
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

async function footprint(k: KubeletProcess, pods: number, windowS: number) {
  for (let i = 0; i < pods; i++) writeFileSync(join(k.manifests, `fp${i}.json`), manifest(`fp${i}`));
  await waitFor(`${pods} pods Running`, 10 * 60_000, async () => {
    const running = (await getPods(k)).filter((p) => p.metadata?.name?.startsWith('fp') && p.status?.phase === 'Running').length;
    return running === pods ? true : undefined;
  }, 500);
  await new Promise((r) => setTimeout(r, 5000)); // let start-up work (GC, first syncs) settle
  const first = procSample(k.pid);
  const rss = [first.rssKiB];
  for (let s = 0; s < windowS; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    rss.push(procSample(k.pid).rssKiB);
  }
  const cpu = (procSample(k.pid).cpuTicks - first.cpuTicks) / CLK_TCK / windowS;
  for (let i = 0; i < pods; i++) rmSync(join(k.manifests, `fp${i}.json`), { force: true });
  await waitFor('footprint pods gone', 5 * 60_000, async () => ((await getPods(k)).some((p) => p.metadata?.name?.startsWith('fp')) ? undefined : true), 500);
  const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;
  return { pods, rss_mib_median: mib(percentile(rss, 50)), rss_mib_max: mib(Math.max(...rss)), cpu_cores_mean: Math.round(cpu * 10_000) / 10_000, window_s: windowS };
}

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `pods` manifests written at once (the issue-18 burst): polls /pods every 100 ms and records
 * when each pod is first Running. The pods stay for killToRestart; the caller removes them.
 */
async function burstStart(k: KubeletProcess, pods: number): Promise<BurstResult> {
  const t0 = performance.now();
  for (let i = 0; i < pods; i++) writeFileSync(join(k.manifests, `burst${i}.json`), manifest(`burst${i}`));
  const runningAt = new Map<string, number>();
  await waitFor(`${pods} burst pods Running`, 10 * 60_000, async () => {
    const now = performance.now() - t0;
    for (const p of await getPods(k)) {
      const name = p.metadata?.name ?? '';
      if (name.startsWith('burst') && p.status?.phase === 'Running' && !runningAt.has(name)) runningAt.set(name, now);
    }
    return runningAt.size >= pods ? true : undefined;
  }, 100);
  const each = [...runningAt.values()];
  return { pods, all_running_ms: Math.round(Math.max(...each)), pod_running_p50_ms: Math.round(percentile(each, 50)), pod_running_p99_ms: Math.round(percentile(each, 99)) };
}

/**
 * Kill → restart visible, at the burst's pod count: SIGKILL every process of one burst pod's
 * container (found through its cgroup), then poll /pods every 10 ms until that pod shows the
 * container running again with a higher restart count.
 */
async function killToRestart(k: KubeletProcess, pods: number, samples: number) {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const name = `burst${(i * 7) % pods}`;
    const pod = (await getPods(k)).find((p) => p.metadata?.name?.startsWith(`${name}-`));
    const st = pod?.status?.containerStatuses?.[0];
    const id = st?.containerID?.replace(/^\w+:\/\//, '');
    if (!pod || !st || !id || containerPids(id).length === 0) continue;
    const t0 = performance.now();
    killContainerProcesses(id);
    await waitFor(`${name} restarted`, 60_000, async () => {
      const now = (await getPods(k)).find((p) => p.metadata?.uid === pod.metadata?.uid)?.status?.containerStatuses?.[0];
      return now && now.restartCount > st.restartCount && now.state?.running ? true : undefined;
    }, 10);
    times.push(performance.now() - t0);
    await sleepMs(500);
  }
  if (times.length === 0) return null;
  return { pods, samples: times.length, p50_ms: Math.round(percentile(times, 50)), p99_ms: Math.round(percentile(times, 99)) };
}

/**
 * Removes the burst's manifests and waits until the runtime has no ready sandbox of them left:
 * gone from /pods is not enough (the kills run after), and pods an agent leaves behind are
 * orphans the next run's agent would be busy killing while it measures.
 */
async function removeBurst(k: KubeletProcess, endpoint: string, pods: number): Promise<void> {
  for (let i = 0; i < pods; i++) rmSync(join(k.manifests, `burst${i}.json`), { force: true });
  await waitFor('burst pods gone', 5 * 60_000, async () => ((await getPods(k)).some((p) => p.metadata?.name?.startsWith('burst')) ? undefined : true), 500);
  const { runtime, images } = connectRuntime(endpoint);
  try {
    await waitFor('burst sandboxes stopped', 5 * 60_000, async () =>
      ((await runtime.listPodSandbox()).some((s) => s.metadata.namespace === 'bench' && s.state === 'SANDBOX_READY') ? undefined : true), 500);
  } finally {
    runtime.close();
    images.close();
  }
}

/** Every pod of the bench's namespace out of the runtime: each run starts from the same state. */
async function cleanRuntime(endpoint: string): Promise<void> {
  const { runtime, images } = connectRuntime(endpoint);
  try {
    await removeTestPods(runtime, { namespace: 'bench' });
  } finally {
    runtime.close();
    images.close();
  }
}

/** The burst and kill → restart parts alone (`node dist/bench/agent-bench.js --burst <endpoint> [pods]`). */
export async function runBurstBench(endpoint: string, pods: number, restartSamples: number): Promise<Pick<AgentBenchResult, 'burst_start' | 'kill_to_restart_visible'>> {
  await cleanRuntime(endpoint);
  const dirs = makeKubeletDirs();
  const k = startKubelet({ ...dirs, endpoint, logLevel: 'info' });
  try {
    await waitFor('agent healthy', 60_000, async () => ((await getPods(k)) ? true : undefined), 100);
    const burst = await burstStart(k, pods);
    await sleepMs(3000); // let the burst's follow-up syncs settle
    const restart = await killToRestart(k, pods, restartSamples);
    await removeBurst(k, endpoint, pods);
    return { burst_start: burst, kill_to_restart_visible: restart };
  } finally {
    await stopKubelet(k);
    rmSync(dirs.dir, { recursive: true, force: true });
    await cleanRuntime(endpoint);
  }
}

export async function runAgentBench(endpoint: string, opts: { quick: boolean }): Promise<AgentBenchResult> {
  const base = await runLatencyAndFootprint(endpoint, opts);
  return opts.quick ? base : { ...base, ...(await runBurstBench(endpoint, 100, 10)) };
}

async function runLatencyAndFootprint(endpoint: string, opts: { quick: boolean }): Promise<AgentBenchResult> {
  const dirs = makeKubeletDirs();
  // info: the production default (debug logging at 100 pods would be measured as agent cost).
  const k = startKubelet({ ...dirs, endpoint, logLevel: 'info' });
  try {
    await waitFor('agent healthy', 60_000, async () => ((await getPods(k)) ? true : undefined), 100);
    const lat = await latencies(k, opts.quick ? 3 : 10);
    const fp = opts.quick ? null : await footprint(k, 100, 30);
    return { ...lat, footprint: fp };
  } finally {
    await stopKubelet(k);
    rmSync(dirs.dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]) && process.argv[2] === '--burst') {
  const keepAlive = setInterval(() => undefined, 1000);
  runBurstBench(process.argv[3]!, Number(process.argv[4] ?? 100), Number(process.argv[5] ?? 10)).then((r) => {
    console.log(JSON.stringify(r, null, 2));
    clearInterval(keepAlive);
    process.exit(0);
  }, (err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
