export type { StatusManager, PodStatusProvider } from './types.js';
export { createStatusManager } from './manager.js';
export { generateAPIPodStatus, rejectedPodStatus, type GenerateInput } from './generate.js';
export { getPhase, isStaticPod, type PodPhase } from './phase.js';
export { type ProbeResults } from './container-statuses.js';
export { DisruptionTarget } from './conditions.js';
export { apiTime, ApiTime } from './time.js';
export { podQOSClass } from './qos.js';
export { createApiStatusManager, type ApiStatusSyncDeps } from './apiserver-sync.js';
