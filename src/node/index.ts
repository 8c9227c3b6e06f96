export { computeNodeInfo, type NodeInfo } from './node-info.js';
export { hostIPsOf, parseNodeIPArgument, resolveNodeIPs } from './node-ip.js';
