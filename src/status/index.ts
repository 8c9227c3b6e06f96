export type { StatusManager, PodStatusProvider, PodSyncHandler, ShouldEvictResponse } from './types.js';
export { createStatusManager } from './manager.js';
export { generateAPIPodStatus, rejectedPodStatus, type GenerateInput } from './generate.js';
export { getPhase, type PodPhase } from './phase.js';
export { type ProbeResults } from './container-statuses.js';
export { DisruptionTarget, needToReconcilePodReadiness } from './conditions.js';
export { EvictedReason, TerminationByKubelet, markTerminatedByKubelet } from './disruption.js';
export { apiTime, ApiTime } from '../util/time.js';
export { createApiStatusManager, type ApiStatusSyncDeps } from './apiserver-sync.js';
