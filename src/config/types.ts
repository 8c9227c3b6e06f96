/**
 * KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields kubelet-ts honours, with upstream
 * names, plus the command-line-only settings (upstream's KubeletFlags). Durations are kept as
 * milliseconds after validation; the file uses upstream's duration strings ("20s", "1m30s").
 */
import type { CgroupDriver } from './cgroup-drivers.js';

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
  /** The resolver file pods with dnsPolicy Default get (upstream resolvConf); '' = none. */
  resolvConf: string;
  runtimeRequestTimeoutMs: number;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  maxPods: number;
  nodeStatusUpdateFrequencyMs: number;
  enableDebuggingHandlers: boolean;
  /** Pod cgroups under kubepods/<qos> (upstream cgroupsPerQOS); default true. */
  cgroupsPerQOS: boolean;
  /**
   * Driver of the pod cgroups (upstream cgroupDriver): cgroupfs (the agent makes the directories)
   * or systemd (transient slices through systemd's D-Bus API, src/cm/systemd-cgroup-manager.ts).
   * A runtime that reports its driver through CRI RuntimeConfig overrides it.
   */
  cgroupDriver: CgroupDriver;
  /** Cgroup under which kubepods is created (upstream cgroupRoot); '' = the root. */
  cgroupRoot: string;
  /** Resource name → quantity reserved for the OS (upstream systemReserved); default {}. */
  systemReserved: Readonly<Record<string, string>>;
  /** Resource name → quantity reserved for Kubernetes daemons (upstream kubeReserved); default {}. */
  kubeReserved: Readonly<Record<string, string>>;
  /** Cgroups limited to node allocatable / the reservations (upstream enforceNodeAllocatable); default [pods]. */
  enforceNodeAllocatable: readonly string[];
  /** Existing cgroups limited with system-reserved / kube-reserved enforcement ('' = none). */
  systemReservedCgroup: string;
  kubeReservedCgroup: string;
  /** pids.max of each pod cgroup (upstream podPidsLimit); 0 or negative: no per-pod limit. */
  podPidsLimit: number;
  /** Eviction signal → threshold, a quantity or a percentage (upstream evictionHard). */
  evictionHard: Readonly<Record<string, string>>;
  /** Manifest URL source (upstream staticPodURL / staticPodURLHeader); '' disables it. */
  staticPodURL: string;
  staticPodURLHeader: Readonly<Record<string, readonly string[]>>;
  /** Image GC (upstream imageGCHigh/LowThresholdPercent, imageMinimumGCAge). */
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;
  /** Unused images not used for this long are removed without disk pressure (upstream imageMaximumGCAge); 0 = off. */
  imageMaximumGCAgeMs: number;
  serializeImagePulls: boolean;
  /** 0 = no limit (upstream: unset). */
  maxParallelImagePulls: number;
  /** KEP-2535: which images already present need the pod's credentials checked (src/images/pullmanager). */
  imagePullCredentialsVerificationPolicy: string;
  /** Repositories ("registry/path" or "registry/path/*") NeverVerifyAllowlistedImages never checks. */
  preloadedImagesVerificationAllowlist: string[];
  /** Unsafe sysctls (names or `prefix*`, namespaced ones only) pods may set besides the safe set. */
  allowedUnsafeSysctls: string[];
  /** Graceful node shutdown (upstream shutdownGracePeriod / shutdownGracePeriodCriticalPods); 0 disables. */
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  /** Main-port authentication (upstream KubeletAuthentication); anonymous off by default. */
  authentication: Readonly<KubeletAuthentication>;
  /** Main-port authorization (upstream KubeletAuthorization); Webhook by default. */
  authorization: Readonly<KubeletAuthorization>;
  /** Serving certificate and key; empty = a self-signed pair under <rootDir>/pki. */
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** Go name (VersionTLS12, ...); '' = Node's default (TLS 1.2). */
  /** Client certificate rotation through the certificates API (src/certificate/rotation.ts). */
  rotateCertificates: boolean;
  /** The main port's certificate from the certificates API, rotated (src/cmd/main-apiserver.ts servingCertificateRotation). */
  serverTLSBootstrap: boolean;
  tlsMinVersion: string;
  /** Go/IANA cipher suite names; empty = Node's defaults. */
  tlsCipherSuites: readonly string[];
  /** An exec/attach/port-forward stream idle this long is closed (upstream default 4h). */
  streamingConnectionIdleTimeoutMs: number;
  /** Rotate a container log at this size, a quantity (upstream containerLogMaxSize, default 10Mi). */
  containerLogMaxSize: string;
  /** Files kept per container log, current included (upstream containerLogMaxFiles, default 5). */
  containerLogMaxFiles: number;
  /** Rotation check period (upstream containerLogMonitorInterval, default 10 s). */
  containerLogMonitorIntervalMs: number;
  /** Soft eviction thresholds (upstream evictionSoft); default {}. */
  evictionSoft: Readonly<Record<string, string>>;
  /** Eviction signal → grace period duration string (upstream evictionSoftGracePeriod). */
  evictionSoftGracePeriod: Readonly<Record<string, string>>;
  /** Upstream evictionPressureTransitionPeriod (default 5m), ms. */
  evictionPressureTransitionPeriodMs: number;
  /** Upstream evictionMaxPodGracePeriod (s); 0 = the pod's own grace period. */
  evictionMaxPodGracePeriod: number;
  /** API server mode: client QPS/burst (upstream kubeAPIQPS 50, kubeAPIBurst 100). */
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  registerNode: boolean;
  /** key[=value]:Effect strings: the flag's form; the file's Taint objects are converted to it. */
  registerWithTaints: string[];
  eventRecordQPS: number;
  eventBurst: number;
  /** Refuse a cgroup v1 host at start (upstream failCgroupV1; default true since 1.35). */
  failCgroupV1: boolean;
  /** RuntimeDefault seccomp for containers without a profile (upstream seccompDefault; default false). */
  seccompDefault: boolean;
  /** Refuse to start when swap is on (upstream failSwapOn; default true). */
  failSwapOn: boolean;
  /** Feature gates set in the file or on --feature-gates (unset ones keep their default). */
  featureGates: Readonly<Record<string, boolean>>;
  /** upstream UserNamespaces: idsPerPod absent means 65536 (kubelet/userns). */
  userNamespaces: { readonly idsPerPod?: number };
  /** Where the fields not listed here would go: kept so /configz can echo the file later. */
}

export interface KubeletAuthentication {
  x509: { clientCAFile: string };
  webhook: { enabled: boolean; cacheTTLMs: number };
  anonymous: { enabled: boolean };
}

export interface KubeletAuthorization {
  mode: 'AlwaysAllow' | 'Webhook';
  webhook: { cacheAuthorizedTTLMs: number; cacheUnauthorizedTTLMs: number };
}

export interface KubeletFlags {
  config?: string;
  rootDir: string;
  hostnameOverride?: string;
  nodeIP?: string;
  /** --node-ip split and parsed (upstream ParseNodeIPArgument): [] = detect; one IP; or a dual-stack pair. */
  nodeIPs: readonly string[];
  kubeconfig?: string;
  /** --bootstrap-kubeconfig: credentials for TLS bootstrap (src/certificate). */
  bootstrapKubeconfig?: string;
  /** --cert-dir: issued certificates (kubelet-client-current.pem); default <rootDir>/pki. */
  certDir: string;
  loggingFormat: 'json' | 'text';
  verbosity: number;
  /** --node-labels: extra labels of this node (admission matches nodeSelector against them). */
  nodeLabels: Readonly<Record<string, string>>;
  /** --runonce: run the pods of the sources once, report, exit. */
  runOnce: boolean;
  /** --lock-file: hold an exclusive lock on this file while running. */
  lockFile?: string;
  /** --image-credential-provider-config: CredentialProviderConfig file or directory (src/images/credentialprovider). */
  imageCredentialProviderConfig?: string | undefined;
  /** --image-credential-provider-bin-dir: the credential provider plugins' executables. */
  imageCredentialProviderBinDir?: string | undefined;
  /** --exit-on-lock-contention: exit cleanly when another process opens the lock file. */
  exitOnLockContention: boolean;
  /** --housekeeping-interval (upstream's cAdvisor flag): stats pass and eviction monitoring period, ms. */
  housekeepingIntervalMs: number;
  /**
   * Tests only (env KUBELET_TS_TEST_DEVICE_PLUGIN_STOP_GRACE): the device manager's
   * endpointStopGracePeriod, upstream's constant of 5 min; not a flag or a config field.
   */
  deviceEndpointStopGraceMs?: number;
}

export interface Config {
  kubelet: Readonly<KubeletConfiguration>;
  flags: Readonly<KubeletFlags>;
  /** Resolved node name: --hostname-override or the host name, lowercased (as upstream). */
  nodeName: string;
  /** Upstream fields and flags (as --name) that were set but are not acted on, for the start-up log line. */
  acceptedNotActedOn: readonly string[];
}
