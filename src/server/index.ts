export { startServers } from './servers.js';
export type { ServerProvider, ServersOptions, RunningServers, ServerAddress } from './types.js';
