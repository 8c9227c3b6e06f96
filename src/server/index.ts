export { startServers } from './servers.js';
export type {
  ServerProvider,
  ServersOptions,
  RunningServers,
  ServerAddress,
  MainServerOptions,
  MainServerProvider,
  StreamingRuntime,
} from './types.js';
export { Router, type Handler, type Params, type RequestContext, type RouteOptions } from './router.js';
export { reviewClientFromKubeconfig, type ReviewClient, type UserInfo } from './auth/index.js';
export { mainServerProvider, readServerProvider, runtimeContainerLogs } from './server-provider.js';
