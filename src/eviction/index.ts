/** The eviction manager factory and the pressure view other subsystems (node status, admission) use. */
import { parseThresholds } from './thresholds.js';
import { ThresholdEvictionManager, type EvictionManagerDeps } from './manager.js';

export type * from './types.js';
export { parseThresholds, observe } from './thresholds.js';
export { rankForEviction } from './ranking.js';

export function createEvictionManager(
  deps: Omit<EvictionManagerDeps, 'thresholds'> & {
    evictionHard: Readonly<Record<string, string>>;
    evictionSoft: Readonly<Record<string, string>>;
    evictionSoftGracePeriod: Readonly<Record<string, string>>;
  },
): ThresholdEvictionManager {
  return new ThresholdEvictionManager({
    ...deps,
    thresholds: parseThresholds(deps.evictionHard, deps.evictionSoft, deps.evictionSoftGracePeriod),
  });
}
