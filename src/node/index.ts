export { computeNodeInfo, type NodeInfo } from './node-info.js';
export { hostIPsOf, parseNodeIPArgument, resolveNodeIPs } from './node-ip.js';
export {
  allocatableAbsolute,
  allocatableForScheduling,
  allocatableReservation,
  fsCapacity,
  hardEvictionReservation,
  hostMaxPID,
  nodeAllocatableProblems,
  resourceList,
  thresholdQuantity,
  type NodeAllocatableConfig,
  type ResourceList,
} from './allocatable.js';
