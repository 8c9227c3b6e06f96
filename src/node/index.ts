export { computeNodeInfo, type NodeInfo } from './node-info.js';
export { detectNodeIP } from './node-ip.js';
