/** The stats factory: a cgroup reader (native or twin, chosen by the caller) behind a CgroupStatsProvider. */
import { cgroupNaming, detectCgroupMounts, type CgroupDriver } from '../cm/index.js';
import type { CgroupMounts } from '../cm/types.js';
import { createCgroupLayout } from './cgroup-layout.js';
import { CgroupStatsProvider, type StatsProviderDeps } from './provider.js';
import type { CreateCgroupReader, StatsProvider } from './types.js';

export type * from './types.js';
export { buildSummary, stringifyExact, rfc3339 } from './summary.js';
export { resourceMetrics } from './resource-metrics.js';
export { cadvisorMetrics, type OomCount } from './cadvisor-metrics.js';
export { runtimeStatsPods, imageFsMount, criContainerFs, statsRoutes } from './runtime-pods.js';
export { TEXT_CONTENT_TYPE } from './exposition.js';
export { CsiVolumeStatsCache, type CsiVolumeStatsDeps } from './csi-volume-stats.js';
export { registerVolumeStatsCollector } from './volume-stats-metrics.js';
export { createCgroupLayout, type CgroupLayout } from './cgroup-layout.js';
export { F, FIELD_COUNT, K, MISSING, parseCgroupFile, type CgroupFileSpec } from './cgroup-fields.js';

export function createStatsProvider(
  deps: Omit<StatsProviderDeps, 'layout' | 'reader'> & {
    mounts?: CgroupMounts;
    createCgroupReader: CreateCgroupReader;
    cgroupDriver?: CgroupDriver;
  },
): StatsProvider {
  const layout = createCgroupLayout(
    deps.mounts ?? detectCgroupMounts(),
    false,
    cgroupNaming(deps.cgroupDriver ?? 'cgroupfs'),
  );
  return new CgroupStatsProvider({ ...deps, layout, reader: deps.createCgroupReader() });
}
