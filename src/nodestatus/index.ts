/** nodestatus: node registration, status updates and the node lease (API server mode). */
import { newNodeStatusManager } from './node-status.js';
import { newLeaseController } from './lease.js';
import type { LeaseController, LeaseDeps, NodeStatusDeps, NodeStatusManager } from './types.js';

export type {
  NodeStatusManager,
  NodeStatusDeps,
  LeaseController,
  LeaseDeps,
  NodeCondition,
  Taint,
  ApiNode,
  ExtendedResourceCounts,
} from './types.js';
export {
  defaultPressureConditions,
  parseTaints,
  nodeStatus,
  initialNode,
  volumesInUseStatus,
  CONTROLLER_MANAGED_ATTACH_DETACH,
} from './node-object.js';
export { LEASE_NAMESPACE, microTime } from './lease.js';

export function createNodeStatusManager(deps: NodeStatusDeps): NodeStatusManager {
  return newNodeStatusManager(deps);
}

export function createLeaseController(deps: LeaseDeps): LeaseController {
  return newLeaseController(deps);
}
