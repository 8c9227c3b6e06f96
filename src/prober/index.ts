/** The prober factory: the only way other subsystems get a ProbeManager. */
export type { ProbeManager, ProbeType, ProbeReply, Prober, ProbeTarget } from './types.js';
export { createManager as createProbeManager, type ProbeManagerDeps } from './manager.js';
export { HEALTH_SERVICE, SERVING_STATUS } from './grpc.js';
