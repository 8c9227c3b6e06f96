/**
 * What a stats pass reads from the rest of the node: the running pods and containers (from the
 * runtime, with each container's image as its spec names it, cAdvisor's image label), the image
 * filesystem's mount point, and the bodies of the stats routes.
 */
import type { PodSpec } from '../api/types.js';
import type { ContainerStats, ImageService } from '../cri/types.js';
import type { ContainerFsUsage } from './provider.js';
import type { Runtime } from '../kuberuntime/types.js';
import { cadvisorMetrics, type OomCount } from './cadvisor-metrics.js';
import { resourceMetrics } from './resource-metrics.js';
import { buildSummary, stringifyExact } from './summary.js';
import type { StatsPodInfo, StatsProvider } from './types.js';

/** listPods for createStatsProvider: running containers of the runtime's pods. */
export function runtimeStatsPods(
  runtime: Pick<Runtime, 'getPods'>,
  specOf: (podUid: string) => PodSpec | undefined,
): () => Promise<StatsPodInfo[]> {
  return async () =>
    (await runtime.getPods(false)).map((p) => {
      const spec = specOf(p.uid);
      const image = (name: string) =>
        [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].find((c) => c.name === name)?.image;
      return {
        uid: p.uid,
        name: p.name,
        namespace: p.namespace,
        cgroup: '',
        sandboxIds: p.sandboxes.filter((s) => s.ready).map((s) => s.id),
        containers: p.containers
          .filter((c) => c.state === 'running')
          .map((c) => ({
            id: c.id,
            name: c.name,
            image: image(c.name) ?? c.image,
            createdAt: new Date(Number(c.createdAt / 1_000_000n)),
          })),
      };
    });
}

/** Writable layer usage by container ID, from one CRI ListContainerStats (upstream's rootfs). */
export function criContainerFs(runtime: {
  listContainerStats(): Promise<ContainerStats[]>;
}): () => Promise<ReadonlyMap<string, ContainerFsUsage>> {
  return async () => {
    const out = new Map<string, ContainerFsUsage>();
    for (const s of await runtime.listContainerStats()) {
      const w = s.writableLayer;
      if (w) out.set(s.id, { usedBytes: w.usedBytes, inodesUsed: w.inodesUsed });
    }
    return out;
  };
}

/** The image filesystem's mount point from CRI ImageFsInfo, asked at most once a minute. */
export function imageFsMount(images: Pick<ImageService, 'imageFsInfo'>): () => Promise<string | undefined> {
  let cached: { at: number; path: string | undefined } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < 60_000) return cached.path;
    const path = (await images.imageFsInfo().catch(() => []))[0]?.mountpoint;
    cached = { at: Date.now(), path };
    return path;
  };
}

/** /stats/summary, /metrics/resource and /metrics/cadvisor from the latest pass. */
export function statsRoutes(stats: StatsProvider, oomCounts: () => readonly OomCount[], memoryCapacity: bigint) {
  return {
    summary: async (only: boolean) => stringifyExact(buildSummary(await stats.latest(), only)),
    resourceMetrics: async () => resourceMetrics(await stats.latest()),
    cadvisorMetrics: async () => cadvisorMetrics(await stats.latest({ io: true }), oomCounts(), memoryCapacity),
  };
}
