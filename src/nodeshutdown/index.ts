/** nodeshutdown: the graceful node shutdown manager and its triggers. */
export type { NodeShutdownManager, ShutdownTrigger, KillPodForShutdown } from './types.js';
export {
  newNodeShutdownManager as createNodeShutdownManager,
  signalTrigger,
  shutdownGroups,
  podPriority,
  NodeShutdownReason,
  NodeShutdownMessage,
  SystemCriticalPriority,
  type NodeShutdownOptions,
} from './manager.js';
