/**
 * PLEG against real containerd: (b) end-to-end relist latency with N pods, and (c) container
 * exit → ContainerDied event latency, periodic-only vs event-driven (cgroup.events).
 * The implementation under test is whatever src/native picks (KUBELET_TS_NATIVE=0 → TS twins).
 */
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

const IMAGE = 'localhost/kubelet-ts/busybox:latest';

function benchPod(ns: string, name: string, containers: { name: string; script: string }[]): Pod {
  return {
    metadata: { name, namespace: ns, uid: `${ns}-${name}` },
    spec: {
      hostNetwork: true,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      containers: containers.map((c) => ({
        name: c.name,
        image: IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', c.script],
      })),
    },
  } as Pod;
}

export interface E2EContext {
  endpoint: string;
  ns: string;
}

function setup(ctx: E2EContext) {
  const { runtime, images } = connectRuntime(ctx.endpoint);
  const manager = createRuntimeManager({
    runtime,
    imageManager: createImageManager({ images }),
    podLogsDir: `/tmp/kts-bench-logs/${ctx.ns}`,
    rootDir: `/tmp/kts-bench-root/${ctx.ns}`,
    volumes: createVolumeManager({ rootDir: `/tmp/kts-bench-root/${ctx.ns}` }),
    nodeName: 'bench',
    hostIP: '127.0.0.1',
  });
  return { runtime, images, manager };
}

async function startPods(manager: ReturnType<typeof setup>['manager'], pods: Pod[], parallel = 4): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < pods.length) {
      const pod = pods[next++]!;
      const status = await manager.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!);
      const r = await manager.syncPod(pod, status);
      if (r.error) throw r.error;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Stops and removes every sandbox of the bench namespace. */
export async function cleanup(ctx: E2EContext, rt: ReturnType<typeof setup>['runtime']): Promise<void> {
  const sbs = (await rt.listPodSandbox()).filter((s) => s.metadata.namespace === ctx.ns);
  await Promise.all(
    sbs.map(async (s) => {
      await rt.stopPodSandbox(s.id).catch(() => undefined);
      await rt.removePodSandbox(s.id).catch(() => undefined);
    }),
  );
}

/** (b) p50/p99 of one full relist (two raw lists + decode + diff, no events) with `pods` pods. */
export async function relistE2E(
  ctx: E2EContext,
  podCounts: number[],
  iterations: number,
): Promise<{ pods: number; p50_ms: number; p99_ms: number }[]> {
  const { runtime, images, manager } = setup(ctx);
  const out: { pods: number; p50_ms: number; p99_ms: number }[] = [];
  try {
    let created = 0;
    for (const n of podCounts) {
      const pods: Pod[] = [];
      for (; created < n; created++)
        pods.push(benchPod(ctx.ns, `r${created}`, [{ name: 'c', script: 'trap "exit 0" TERM; sleep 100000 & wait' }]));
      await startPods(manager, pods);
      const pleg = createGenericPLEG({
        runtime: manager,
        source: criRawSource(runtime),
        differ: hotPaths().pleg.createRelistDiffer(),
        cache: createPodStatusCache(),
      });
      await pleg.relist(); // first relist sees everything as new and inspects it: not what we time
      const samples: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t0 = process.hrtime.bigint();
        await pleg.relist();
        samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      out.push({ pods: n, p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99) });
    }
  } finally {
    await cleanup(ctx, runtime);
    runtime.close();
    images.close();
  }
  return out;
}

/** (c) exit → event latency over `exits` container exits, periodic relist only or event-driven. */
export async function exitToEvent(
  ctx: E2EContext,
  exits: number,
  evented: boolean,
): Promise<{ p50_ms: number; p99_ms: number; samples: number }> {
  const { runtime, images, manager } = setup(ctx);
  const perPod = 5;
  const pods: Pod[] = [];
  for (let p = 0; p * perPod < exits; p++) {
    const containers = [];
    for (let c = 0; c < perPod && p * perPod + c < exits; c++) {
      // Staggered exits over ~4 s so relists are not all triggered at once.
      const delay = (1.5 + Math.random() * 4).toFixed(3);
      containers.push({ name: `c${c}`, script: `sleep ${delay}` });
    }
    pods.push(benchPod(ctx.ns, `${evented ? 'ev' : 'pe'}${p}`, containers));
  }
  const root = findUnifiedRoot();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({
    runtime: manager,
    source: criRawSource(runtime),
    differ: hotPaths().pleg.createRelistDiffer(),
    cache,
    createExitWatcher:
      evented && root
        ? (onExit) => new CgroupExitWatcher({ root, createFsWatcher: hotPaths().inotify.createFsWatcher, onExit })
        : undefined,
  });
  const diedAt = new Map<string, number>();
  pleg.watch((e) => {
    if (e.type === 'ContainerDied' && !diedAt.has(e.data)) diedAt.set(e.data, Date.now());
  });
  try {
    pleg.start();
    await startPods(manager, pods);
    const deadline = Date.now() + 30_000;
    const ours = async () =>
      (await runtime.listContainers()).filter((c) => c.labels['io.kubernetes.pod.namespace'] === ctx.ns);
    while (Date.now() < deadline) {
      const cs = await ours();
      if (cs.length >= exits && cs.every((c) => diedAt.has(c.id))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    pleg.stop();
    const samples: number[] = [];
    for (const c of await ours()) {
      const seen = diedAt.get(c.id);
      if (seen === undefined) continue;
      const st = await runtime.containerStatus(c.id);
      samples.push(seen - Number(st.finishedAt / 1_000_000n));
    }
    return { p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99), samples: samples.length };
  } finally {
    pleg.stop();
    await cleanup(ctx, runtime);
    runtime.close();
    images.close();
  }
}
