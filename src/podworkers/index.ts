export type {
  PodWorkers,
  PodSyncer,
  UpdatePodOptions,
  UpdateType,
  SyncPodResult,
  PodWorkerState,
  KillPodOptions,
  PodStatusFunc,
  SyncContext,
  TerminationOptions,
} from './types.js';
export { killPodNow, type KillPodFunc } from './kill-pod-now.js';
export { createPodWorkers, WORKER_BACKOFF_MS, TERMINATION_RETRY_MS, type PodWorkersOptions } from './pod-workers.js';
export {
  EDGES,
  HANDLERS,
  effectiveGracePeriod,
  isAllowedEdge,
  initialState,
  type TerminationCause,
  type Successor,
  type UpdateDecision,
  type WorkerView,
  type WorkDone,
} from './states.js';
