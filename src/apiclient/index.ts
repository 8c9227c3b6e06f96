/** apiclient: the kube-apiserver clients of API server mode (see client.ts). */
export type { ApiClient, ApiClients, ApiClientOptions, ApiRequest, WatchEvent } from './types.js';
export { createApiClients, loadKubeconfig } from './client.js';
export { TokenBucket } from './rate-limiter.js';
export { runReflector, type ReflectorOptions } from './reflector.js';
export { listAll, type ListResult } from './pager.js';
export { API_LIMITS } from './limits.js';
