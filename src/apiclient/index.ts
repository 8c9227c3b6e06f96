/** apiclient: the kube-apiserver clients of API server mode (see client.ts). */
export type { ApiClient, ApiClients, ApiClientOptions, ApiRequest, WatchEvent } from './types.js';
export { createApiClients } from './client.js';
export { loadKubeconfig, parseKubeconfig, KubeconfigError, type Kubeconfig } from './kubeconfig.js';
export { transportOf, type Transport } from './transport.js';
export { TokenBucket } from './rate-limiter.js';
export { runReflector, type ReflectorOptions } from './reflector.js';
export { listAll, type ListResult } from './pager.js';
export { API_LIMITS } from './limits.js';
