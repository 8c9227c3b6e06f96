/**
 * The kubelet_volume_stats_* collector (upstream pkg/kubelet/metrics/collectors/volume_stats.go):
 * at each scrape, one sample per PersistentVolumeClaim (labels namespace, persistentvolumeclaim)
 * from the cached pod volume stats; volumes without a claim are left out, a claim mounted by two
 * pods is reported once, and the health gauge only where the stats carry a volume condition.
 */
import { Gauge, type Registry } from 'prom-client';
import type { VolumeStats } from './types.js';

type Field = 'capacityBytes' | 'availableBytes' | 'usedBytes' | 'inodes' | 'inodesFree' | 'inodesUsed';

/** Name, help and the VolumeStats field of each gauge, as upstream's descriptors. */
const GAUGES: ReadonlyArray<{ name: string; help: string; value: (v: VolumeStats) => number | undefined }> = [
  ...(
    [
      ['capacity_bytes', 'Capacity in bytes of the volume', 'capacityBytes'],
      ['available_bytes', 'Number of available bytes in the volume', 'availableBytes'],
      ['used_bytes', 'Number of used bytes in the volume', 'usedBytes'],
      ['inodes', 'Maximum number of inodes in the volume', 'inodes'],
      ['inodes_free', 'Number of free inodes in the volume', 'inodesFree'],
      ['inodes_used', 'Number of used inodes in the volume', 'inodesUsed'],
    ] as const satisfies ReadonlyArray<readonly [string, string, Field]>
  ).map(([suffix, help, field]) => ({
    name: `kubelet_volume_stats_${suffix}`,
    help,
    value: (v: VolumeStats) => Number(v[field] ?? 0n),
  })),
  {
    name: 'kubelet_volume_stats_health_status_abnormal',
    help: 'Abnormal volume health status. The count is either 1 or 0. 1 indicates the volume is unhealthy, 0 indicates volume is healthy',
    value: (v) => (v.volumeHealthStats ? Number(v.volumeHealthStats.abnormal) : undefined),
  },
];

/** Each claim's first volume stats (upstream: the first pod's, the rest ignored). */
export function statsByClaim(
  volumes: readonly VolumeStats[],
): Map<string, VolumeStats & Required<Pick<VolumeStats, 'pvcRef'>>> {
  const out = new Map<string, VolumeStats & Required<Pick<VolumeStats, 'pvcRef'>>>();
  for (const v of volumes) {
    if (!v.pvcRef) continue;
    const key = `${v.pvcRef.namespace}/${v.pvcRef.name}`;
    if (!out.has(key)) out.set(key, { ...v, pvcRef: v.pvcRef });
  }
  return out;
}

/** Registers the seven gauges on `registry`; `volumes` is read at each scrape (cached values only). */
export function registerVolumeStatsCollector(registry: Registry, volumes: () => readonly VolumeStats[]): void {
  for (const g of GAUGES) {
    // A second daemon in one process (tests) replaces the first one's source.
    registry.removeSingleMetric(g.name);
    new Gauge({
      name: g.name,
      help: g.help,
      labelNames: ['namespace', 'persistentvolumeclaim'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const v of statsByClaim(volumes()).values()) {
          const value = g.value(v);
          if (value !== undefined)
            this.set({ namespace: v.pvcRef.namespace, persistentvolumeclaim: v.pvcRef.name }, value);
        }
      },
    });
  }
}
