/**
 * The kubelet's view of the kube-apiserver: JSON requests and watch streams. Interfaces only;
 * client.ts implements them over node:https with the TLS material and credentials of a
 * kubeconfig (loaded by kubeconfig.ts).
 */

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path, e.g. /api/v1/nodes/n1/status. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Default application/json; patches name their type (strategic-merge-patch+json, merge-patch+json). */
  contentType?: string;
  /** Overrides the client's default whole-request deadline. */
  timeoutMs?: number;
  /** Body cap of this answer (default API_LIMITS.objectBytes; a LIST page gets its share of responseBodyBytes). */
  maxBodyBytes?: number;
  /** Told the size of the body read (the pager charges pages against one budget). */
  onBodyBytes?: (bytes: number) => void;
}

export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface ApiClient {
  /** One request; resolves with the decoded JSON body, rejects with ApiError. */
  request<T = unknown>(req: ApiRequest): Promise<T>;
  /**
   * A watch: calls `onEvent` for every event of the chunked stream until the server ends it
   * (resolves), the connection fails or goes quiet for longer than the idle timeout (rejects),
   * or `signal` aborts (resolves).
   */
  watch<T = Record<string, unknown>>(
    path: string,
    query: ApiRequest['query'],
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** Drops every pooled connection: the next request dials a fresh one. */
  resetConnections(): void;
  close(): void;
}

/** The clients of one kubeconfig: rate-limited `main`, and `heartbeat` for node status and lease. */
export interface ApiClients {
  main: ApiClient;
  /** Own connections, own (short) timeout, no client-side rate limit (as upstream's heartbeat client). */
  heartbeat: ApiClient;
  /** The server URL, for logs. */
  server: string;
  close(): void;
  /** Re-reads the kubeconfig's TLS material (a rotated client certificate) and drops every connection. */
  reloadTls(): Promise<void>;
}

export interface ApiClientOptions {
  /** kubeAPIQPS (default 50) and kubeAPIBurst (default 100) of the main client. */
  qps?: number;
  burst?: number;
  /** Whole-request deadline of the main client (default 30 s, API_LIMITS.requestDeadlineMs). */
  timeoutMs?: number;
  /** Whole-request deadline of the heartbeat client (default 10 s: nodeStatusUpdateFrequency). */
  heartbeatTimeoutMs?: number;
  /** A watch that receives nothing (not even a bookmark) this long is restarted (default 5 min). */
  watchIdleTimeoutMs?: number;
  userAgent?: string;
}
