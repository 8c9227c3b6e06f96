import type { Pod } from '../api/types.js';

/** What the HTTP servers read from the kubelet; nothing here can change a pod. */
export interface ServerProvider {
  /** Desired pods with their latest API status. */
  podsWithStatus(): Pod[];
  /** Empty when healthy; otherwise one line per failed check. */
  healthErrors(): string[];
  metrics(): Promise<{ contentType: string; body: string }>;
  /** /stats/summary, /metrics/resource, /metrics/cadvisor bodies; absent: those routes answer 503. */
  stats?: {
    summary(onlyCpuAndMemory: boolean): Promise<string>;
    resourceMetrics(): Promise<string>;
    cadvisorMetrics(): Promise<string>;
  };
}

export interface ServerAddress { address: string; port: number }

export interface ServersOptions {
  healthz?: ServerAddress;
  readOnly?: ServerAddress;
  provider: ServerProvider;
}

export interface RunningServers {
  /** Bound ports (useful when 0 was asked for an ephemeral port in tests). */
  healthzPort?: number;
  readOnlyPort?: number;
  close(): Promise<void>;
}
