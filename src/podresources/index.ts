/** The pod resources API v1 (upstream pkg/kubelet/apis/podresources): server and provider interfaces. */
export {
  PodResourcesServer,
  PodResourcesLister,
  DEFAULT_QPS,
  DEFAULT_BURST_TOKENS,
  RATE_LIMIT_MESSAGE,
} from './server.js';
export type { PodResourcesServerOptions } from './server.js';
export type {
  ContainerDevices,
  ContainerResources,
  DevicesProvider,
  PodResources,
  PodResourcesProviders,
  PodsProvider,
  TopologyInfo,
} from './types.js';
export { containerDevicesOf, devicesProvider } from './devices.js';
export { POD_RESOURCES_SERVICE, podResourcesProtoPath } from './proto.js';
