/**
 * Where the time of a pod burst goes (issue 18): N hostNetwork pods synced at once through the
 * runtime manager straight against containerd (no agent around it), for several bounds of the
 * CRI start scheduler. Per bound: the time until every pod's container started, each pod's
 * sync → started p50/p99, and the latency of each CRI call kind under that concurrency.
 *   node dist/bench/cri-burst.js <endpoint> [pods] [bounds, e.g. 0,1,2,4,8]   (0: no bound)
 *
 * The agent bench (bench/agent-bench.ts, runBurstBench) runs it beside the agent's own burst of
 * the same pods, in the same run: containerd's own time is the floor the agent is compared with.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../src/api/types.js';
import { connectRuntime } from '../src/cri/index.js';
import type { RuntimeService } from '../src/cri/types.js';
import { createImageManager } from '../src/images/index.js';
import { createRuntimeManager } from '../src/kuberuntime/index.js';
import { createVolumeManager } from '../src/volume/index.js';
import { removeTestPods } from '../test/support/containerd.js';
import { log } from '../src/util/log.js';
import { percentile } from './stats.js';

const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const TIMED = ['runPodSandbox', 'podSandboxStatus', 'createContainer', 'startContainer'] as const;

export interface BurstRow {
  bound: number;
  pods: number;
  all_started_ms: number;
  pod_started_p50_ms: number;
  pod_started_p99_ms: number;
  /** Per CRI call: p50 / p99 ms under this concurrency. */
  calls: Record<string, { n: number; p50_ms: number; p99_ms: number }>;
}

/** The runtime with each pod-creating call timed into `times`. */
function timedRuntime(inner: RuntimeService, times: Map<string, number[]>): RuntimeService {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || !(TIMED as readonly (string | symbol)[]).includes(prop))
        return typeof v === 'function' ? v.bind(target) : v;
      return async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          const list = times.get(String(prop)) ?? [];
          list.push(performance.now() - t0);
          times.set(String(prop), list);
        }
      };
    },
  });
}

/** The agent bench's burst pod (bench/agent-bench.ts manifest()): hostNetwork busybox, image never pulled. */
function pod(ns: string, i: number): Pod {
  return {
    metadata: { name: `p${i}`, namespace: ns, uid: `${ns}-p${i}` },
    spec: {
      hostNetwork: true,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'c',
          image: IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', 'trap "exit 0" TERM; sleep 100000 & wait'],
        },
      ],
    },
  } as Pod;
}

async function burst(endpoint: string, pods: number, bound: number): Promise<BurstRow> {
  const ns = `cri-burst-${bound}-${Date.now().toString(36)}`;
  const { runtime, images } = connectRuntime(endpoint);
  const times = new Map<string, number[]>();
  const rt = timedRuntime(runtime, times);
  const manager = createRuntimeManager({
    runtime: rt,
    imageManager: createImageManager({ images }),
    podLogsDir: `/tmp/kts-cri-burst/${ns}/logs`,
    rootDir: `/tmp/kts-cri-burst/${ns}/root`,
    volumes: createVolumeManager({ rootDir: `/tmp/kts-cri-burst/${ns}/root` }),
    nodeName: 'bench',
    hostIP: '127.0.0.1',
    criStartConcurrency: bound,
  });
  const started: number[] = [];
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: pods }, async (_, i) => {
        const p = pod(ns, i);
        const r = await manager.syncPod(p, await manager.getPodStatus(p.metadata!.uid!, p.metadata!.name!, ns));
        if (r.error) throw r.error;
        started.push(performance.now() - t0);
      }),
    );
  } finally {
    await removeTestPods(runtime, { namespace: ns });
    runtime.close();
    images.close();
  }
  const calls: BurstRow['calls'] = {};
  for (const [k, v] of times)
    calls[k] = { n: v.length, p50_ms: Math.round(percentile(v, 50)), p99_ms: Math.round(percentile(v, 99)) };
  return {
    bound,
    pods,
    all_started_ms: Math.round(Math.max(...started)),
    pod_started_p50_ms: Math.round(percentile(started, 50)),
    pod_started_p99_ms: Math.round(percentile(started, 99)),
    calls,
  };
}

/** One row per bound, in order. `quiet`: the runtime manager's info lines are not printed (run inside another bench). */
export async function runCriBurst(
  endpoint: string,
  pods: number,
  bounds: number[],
  opts: { quiet?: boolean } = {},
): Promise<BurstRow[]> {
  const rows: BurstRow[] = [];
  const root = log();
  const level = root.level;
  if (opts.quiet) root.level = 'warn';
  try {
    for (const b of bounds) rows.push(await burst(endpoint, pods, b));
  } finally {
    root.level = level;
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const keepAlive = setInterval(() => undefined, 1000);
  const bounds = (process.argv[4] ?? '0,1,2,4,8').split(',').map(Number);
  runCriBurst(process.argv[2]!, Number(process.argv[3] ?? 50), bounds).then(
    (rows) => {
      for (const r of rows) {
        const c = Object.entries(r.calls)
          .map(([k, v]) => `${k} ${v.p50_ms}/${v.p99_ms}`)
          .join(', ');
        console.log(
          `bound ${r.bound || 'none'}: ${r.pods} pods, all started ${r.all_started_ms} ms, per pod p50 ${r.pod_started_p50_ms} p99 ${r.pod_started_p99_ms} ms | CRI p50/p99 ms: ${c}`,
        );
      }
      clearInterval(keepAlive);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
