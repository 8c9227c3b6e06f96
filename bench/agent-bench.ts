/**
 * The whole agent as an operator sees it, against real containerd (the mission's last two
 * targets): manifest written → pod Running in `/pods` (no pull), manifest deleted → pod gone,
 * and the agent's RSS and CPU with N static pods running. It runs the real CLI
 * (bin/kubelet-ts.js) as a child, as the e2e tests do, and stops it by its pid.
 */
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getPods, makeKubeletDirs, startKubelet, stopKubelet, waitFor, type KubeletProcess } from '../test/support/kubelet-process.js';
import { percentile } from './stats.js';

const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const CLK_TCK = 100; // Linux USER_HZ on every architecture we run on

export interface AgentBenchResult {
  manifest_to_running: { samples: number; p50_ms: number; p99_ms: number };
  delete_to_gone: { samples: number; p50_ms: number; p99_ms: number };
  footprint: { pods: number; rss_mib_median: number; rss_mib_max: number; cpu_cores_mean: number; window_s: number } | null;
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

export async function runAgentBench(endpoint: string, opts: { quick: boolean }): Promise<AgentBenchResult> {
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
