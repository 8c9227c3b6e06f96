/**
 * Where the time of a pod burst goes (issue 18): N hostNetwork pods synced at once through the
 * runtime manager straight against containerd (no agent around it), for several bounds of the
 * CRI start scheduler. Per bound: the time until every pod's container started, each pod's
 * sync → started p50/p99, and the latency of each CRI call kind under that concurrency. With
 * restarts, also kill → restarted with the runtime manager alone at that pod count (restartFloor).
 *   node dist/bench/cri-burst.js <endpoint> [pods] [bounds, e.g. 0,1,2,4,8] [restarts]   (0: no bound)
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
import { containerPids, killContainerProcesses } from '../test/support/container-pids.js';
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
  restart?: RestartFloor | null;
}

/** kill → restarted without the agent (restartFloor), ms. */
export interface RestartFloor {
  samples: number;
  /** SIGKILL → the runtime's ContainerStatus shows the container exited. */
  exit_recorded_p50_ms: number;
  exit_recorded_p99_ms: number;
  /** SIGKILL → the runtime manager's syncPod of the pod has started the container again. */
  restarted_p50_ms: number;
  restarted_p99_ms: number;
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The runtime's ContainerStatus is polled this often for the exit, as the PLEG bench's observer polls. */
const EXIT_POLL_MS = 2;

/**
 * kill → restarted with the runtime manager alone, at the burst's pod count: the container's
 * processes SIGKILLed (found through its cgroup, as the agent bench's kill → restart does, on
 * the same pods: every 7th), ContainerStatus polled until the runtime records the exit, then one
 * inspection and syncPod of the pod, which starts the container again. The agent's own figure
 * adds its exit detection, pod worker, status and /pods to this.
 */
async function restartFloor(
  b: { manager: ReturnType<typeof createRuntimeManager>; runtime: RuntimeService; ns: string; pods: number },
  samples: number,
): Promise<RestartFloor | null> {
  const { manager, runtime, ns, pods } = b;
  const exited: number[] = [];
  const restarted: number[] = [];
  for (let i = 0; i < samples; i++) {
    const p = pod(ns, (i * 7) % pods);
    const [uid, name] = [p.metadata!.uid!, p.metadata!.name!];
    const id = (await manager.getPodStatus(uid, name, ns)).containerStatuses.find((c) => c.state === 'running')?.id;
    if (!id || containerPids(id).length === 0) continue;
    const t0 = performance.now();
    killContainerProcesses(id);
    while ((await runtime.containerStatus(id)).state !== 'CONTAINER_EXITED') {
      if (performance.now() - t0 > 60_000) throw new Error(`restart floor: ${name} not exited after 60 s`);
      await sleep(EXIT_POLL_MS);
    }
    exited.push(performance.now() - t0);
    const r = await manager.syncPod(p, await manager.getPodStatus(uid, name, ns));
    if (r.error) throw r.error;
    restarted.push(performance.now() - t0);
    await sleep(500);
  }
  if (restarted.length === 0) return null;
  const ms = (v: number[], q: number) => Math.round(percentile(v, q));
  return {
    samples: restarted.length,
    exit_recorded_p50_ms: ms(exited, 50),
    exit_recorded_p99_ms: ms(exited, 99),
    restarted_p50_ms: ms(restarted, 50),
    restarted_p99_ms: ms(restarted, 99),
  };
}

async function burst(endpoint: string, pods: number, bound: number, restarts: number): Promise<BurstRow> {
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
  const calls: BurstRow['calls'] = {};
  let restart: RestartFloor | null | undefined;
  try {
    await Promise.all(
      Array.from({ length: pods }, async (_, i) => {
        const p = pod(ns, i);
        const r = await manager.syncPod(p, await manager.getPodStatus(p.metadata!.uid!, p.metadata!.name!, ns));
        if (r.error) throw r.error;
        started.push(performance.now() - t0);
      }),
    );
    // The burst's calls only: the restarts' own come after.
    for (const [k, v] of times)
      calls[k] = { n: v.length, p50_ms: Math.round(percentile(v, 50)), p99_ms: Math.round(percentile(v, 99)) };
    if (restarts > 0) restart = await restartFloor({ manager, runtime, ns, pods }, restarts);
  } finally {
    await removeTestPods(runtime, { namespace: ns });
    runtime.close();
    images.close();
  }
  return {
    bound,
    pods,
    all_started_ms: Math.round(Math.max(...started)),
    pod_started_p50_ms: Math.round(percentile(started, 50)),
    pod_started_p99_ms: Math.round(percentile(started, 99)),
    calls,
    ...(restart !== undefined ? { restart } : {}),
  };
}

/**
 * One row per bound, in order. `quiet`: the runtime manager's info lines are not printed (run
 * inside another bench). `restarts`: each row also measures that many kill → restarted samples.
 */
export async function runCriBurst(
  endpoint: string,
  pods: number,
  bounds: number[],
  opts: { quiet?: boolean; restarts?: number } = {},
): Promise<BurstRow[]> {
  const rows: BurstRow[] = [];
  const root = log();
  const level = root.level;
  if (opts.quiet) root.level = 'warn';
  try {
    for (const b of bounds) rows.push(await burst(endpoint, pods, b, opts.restarts ?? 0));
  } finally {
    root.level = level;
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const keepAlive = setInterval(() => undefined, 1000);
  const bounds = (process.argv[4] ?? '0,1,2,4,8').split(',').map(Number);
  const restarts = Number(process.argv[5] ?? 0);
  runCriBurst(process.argv[2]!, Number(process.argv[3] ?? 50), bounds, { restarts }).then(
    (rows) => {
      for (const r of rows) {
        const c = Object.entries(r.calls)
          .map(([k, v]) => `${k} ${v.p50_ms}/${v.p99_ms}`)
          .join(', ');
        console.log(
          `bound ${r.bound || 'none'}: ${r.pods} pods, all started ${r.all_started_ms} ms, per pod p50 ${r.pod_started_p50_ms} p99 ${r.pod_started_p99_ms} ms | CRI p50/p99 ms: ${c}`,
        );
        const f = r.restart;
        if (f)
          console.log(
            `  kill → exit recorded p50 ${f.exit_recorded_p50_ms} / p99 ${f.exit_recorded_p99_ms} ms; → restarted p50 ${f.restarted_p50_ms} / p99 ${f.restarted_p99_ms} ms (${f.samples} samples)`,
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
