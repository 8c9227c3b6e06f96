/**
 * The CRI client: `connectRuntime(endpoint)` gives the RuntimeService and ImageService of the
 * container runtime listening on a unix socket (kubelet's --container-runtime-endpoint).
 */
import { RemoteImageService } from './image.js';
import { RemoteRuntimeService, type CriClientOptions } from './runtime.js';

export { CriChannel, grpcTarget, DEFAULT_TIMEOUT_MS, SHORT_TIMEOUT_MS, MAX_MESSAGE_BYTES } from './channel.js';
export { criErrorFrom, errorCodeForGrpc, grpcCodeName, isNotFound, replyError, runtimeMessage } from './errors.js';
export { protoPath, packageDefinition, LOADER_OPTIONS, RUNTIME_SERVICE, IMAGE_SERVICE } from './proto.js';
export { RemoteRuntimeService, KUBE_RUNTIME_API_VERSION, type CriClientOptions } from './runtime.js';
export { RemoteImageService, DEFAULT_PULL_TIMEOUT_MS } from './image.js';
export {
  cdiRefusal,
  cdiSupportFromStatusInfo,
  cdiUnsupportedMessage,
  CdiSupportCache,
  CDI_SUPPORT_TTL_MS,
  type CdiSupport,
} from './cdi.js';
export { runtimeConfigFromWire, type RuntimeConfigInfo, type RuntimeCgroupDriver } from './runtime-config.js';
export * from './types.js';

export interface CriConnection {
  runtime: RemoteRuntimeService;
  images: RemoteImageService;
}

/**
 * Connects lazily (the first call dials). `endpoint`: `unix:///path/to.sock` or a bare path.
 * opts.timeoutMs is the runtime request timeout (default 2 min). Close both when done.
 */
export function connectRuntime(endpoint: string, opts: CriClientOptions = {}): CriConnection {
  return { runtime: new RemoteRuntimeService(endpoint, opts), images: new RemoteImageService(endpoint, opts) };
}
