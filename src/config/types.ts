/**
 * KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields kubelet-ts honours, with upstream
 * names, plus the command-line-only settings (upstream's KubeletFlags). Durations are kept as
 * milliseconds after validation; the file uses upstream's duration strings ("20s", "1m30s").
 */
export interface KubeletConfiguration {
  staticPodPath: string;
  fileCheckFrequencyMs: number;
  httpCheckFrequencyMs: number;
  syncFrequencyMs: number;
  address: string;
  port: number;
  readOnlyPort: number;
  healthzBindAddress: string;
  healthzPort: number;
  podLogsDir: string;
  clusterDNS: string[];
  clusterDomain: string;
  runtimeRequestTimeoutMs: number;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  maxPods: number;
  nodeStatusUpdateFrequencyMs: number;
  enableDebuggingHandlers: boolean;
  /** Pod cgroups under kubepods/<qos> (upstream cgroupsPerQOS); default true. */
  cgroupsPerQOS: boolean;
  /** Cgroup under which kubepods is created (upstream cgroupRoot); '' = the root. */
  cgroupRoot: string;
  /** Resource name → quantity reserved for the OS (upstream systemReserved); default {}. */
  systemReserved: Readonly<Record<string, string>>;
  /** Resource name → quantity reserved for Kubernetes daemons (upstream kubeReserved); default {}. */
  kubeReserved: Readonly<Record<string, string>>;
  /** Eviction signal → threshold, a quantity or a percentage (upstream evictionHard). */
  evictionHard: Readonly<Record<string, string>>;
  /** API server mode: client QPS/burst (upstream kubeAPIQPS 50, kubeAPIBurst 100). */
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  registerNode: boolean;
  /** key[=value]:Effect strings (upstream takes Taint objects in the file). */
  registerWithTaints: string[];
  eventRecordQPS: number;
  eventBurst: number;
  /** Where the fields not listed here would go: kept so /configz can echo the file later. */
}

export interface KubeletFlags {
  config?: string;
  rootDir: string;
  hostnameOverride?: string;
  nodeIP?: string;
  kubeconfig?: string;
  loggingFormat: 'json' | 'text';
  verbosity: number;
  /** --node-labels: extra labels of this node (admission matches nodeSelector against them). */
  nodeLabels: Readonly<Record<string, string>>;
}

export interface Config {
  kubelet: Readonly<KubeletConfiguration>;
  flags: Readonly<KubeletFlags>;
  /** Resolved node name: --hostname-override or the host name, lowercased (as upstream). */
  nodeName: string;
}
