export type { PodWorkers, PodSyncer, UpdatePodOptions, UpdateType, SyncPodResult, PodWorkerState } from './types.js';
export { createPodWorkers, WORKER_BACKOFF_MS, type PodWorkersOptions } from './pod-workers.js';
