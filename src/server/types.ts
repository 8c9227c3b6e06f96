import type { FeatureGates } from '../config/feature-gates.js';
import type { ContainerLogsDeps } from '../logs/types.js';
import type { Pod } from '../api/types.js';
import type { KubeletAuthentication, KubeletAuthorization } from '../config/types.js';
import type { ReviewClient } from './auth/types.js';

/** A response as route handlers return it; the server code writes it. */
export interface Reply {
  status: number;
  contentType: string;
  body: string;
}

/** A GET/HEAD route of the read-only, healthz and main ports. */
export type Route = (provider: ServerProvider, query?: URLSearchParams) => Promise<Reply> | Reply;

/** What the HTTP servers read from the kubelet; nothing here can change a pod. */
export interface ServerProvider {
  /** Desired pods with their latest API status. */
  podsWithStatus(): Pod[];
  /** Empty when healthy; otherwise one line per failed check. */
  healthErrors(): string[];
  metrics(): Promise<{ contentType: string; body: string }>;
  /** /metrics/probes (prober_probe_total, prober_probe_duration_seconds); absent = 404. */
  probeMetrics?(): Promise<{ contentType: string; body: string }>;
  /** /stats/summary, /metrics/resource, /metrics/cadvisor bodies; absent: those routes answer 503. */
  stats?: {
    summary(onlyCpuAndMemory: boolean): Promise<string>;
    resourceMetrics(): Promise<string>;
    cadvisorMetrics(): Promise<string>;
  };
}

export interface ServerAddress {
  address: string;
  port: number;
}

/** The CRI calls behind /run, /exec, /attach and /portForward (upstream's streaming runtime). */
export interface StreamingRuntime {
  execSync(
    containerId: string,
    cmd: string[],
    timeoutSeconds: number,
  ): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }>;
  exec(req: {
    containerId: string;
    cmd: string[];
    tty?: boolean;
    stdin?: boolean;
    stdout?: boolean;
    stderr?: boolean;
  }): Promise<string>;
  attach(req: {
    containerId: string;
    stdin?: boolean;
    tty?: boolean;
    stdout?: boolean;
    stderr?: boolean;
  }): Promise<string>;
  portForward(podSandboxId: string, ports: number[]): Promise<string>;
}

/** What the main (authenticated) port reads and drives, beyond the read-only provider. */
export interface MainServerProvider extends ServerProvider {
  /** The running container of namespace/pod (and pod UID when given), or undefined. */
  findContainer(
    namespace: string,
    pod: string,
    container: string,
    uid?: string,
  ): Promise<{ containerId: string; podSandboxId: string } | undefined>;
  /** The ready sandbox of namespace/pod, or undefined. */
  findSandbox(namespace: string, pod: string, uid?: string): Promise<string | undefined>;
  /** Pods as the runtime sees them (upstream /runningpods/). */
  runningPods(): Promise<Pod[]>;
  /** The running configuration (upstream /configz body). */
  configz(): unknown;
  streaming: StreamingRuntime;
}

/** The main port (address:port, TLS, authenticated). */
export interface MainServerOptions extends ServerAddress {
  provider: MainServerProvider;
  nodeName: string;
  rootDir: string;
  /** Extra IP SANs of a generated serving certificate. */
  nodeIPs?: string[];
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsMinVersion: string;
  tlsCipherSuites: readonly string[];
  authentication: KubeletAuthentication;
  authorization: KubeletAuthorization;
  /** The API server client of the auth webhooks; undefined in standalone mode. */
  reviewClient?: ReviewClient;
  enableDebuggingHandlers: boolean;
  streamingConnectionIdleTimeoutMs: number;
  /** Root of /logs/ (default /var/log). */
  nodeLogDir?: string;
  /** Concurrent exec/attach/port-forward streams at most (default 64). */
  maxStreams?: number;
  /** What /containerLogs reads; absent = the route is not mounted. */
  containerLogs?: ContainerLogsDeps;
  /** The gates the main port reads (KubeletFineGrainedAuthz); absent = every gate at its default. */
  featureGates?: FeatureGates;
}

export interface ServersOptions {
  healthz?: ServerAddress;
  readOnly?: ServerAddress;
  provider: ServerProvider;
  main?: MainServerOptions;
}

export interface RunningServers {
  /** Bound ports (useful when 0 was asked for an ephemeral port in tests). */
  healthzPort?: number;
  readOnlyPort?: number;
  /** The main (TLS) port. */
  port?: number;
  /** New handshakes of the main port use this pair (a serving certificate issued or rotated). */
  setServingPair(cert: Buffer, key: Buffer): void;
  close(): Promise<void>;
}
