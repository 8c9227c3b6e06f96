/**
 * One table for every KubeletConfiguration field we accept: its type, upstream default and the
 * flag that may override it. Validation, defaulting and --help all read this table, so a field
 * is added in exactly one place.
 */
import type { KubeletConfiguration } from './types.js';
import { DEFAULT_AUTHENTICATION, DEFAULT_AUTHORIZATION } from './auth-defaults.js';

export type FieldKind =
  | 'string'
  | 'port'
  | 'int'
  | 'duration'
  | 'bool'
  | 'stringList'
  | 'endpoint'
  | 'reservedMap'
  | 'evictionMap'
  | 'headerMap'
  | 'authentication'
  | 'authorization'
  | 'tlsVersion'
  | 'cipherSuites'
  | 'quantity'
  | 'evictionGraceMap'
  | 'taints'
  | 'userNamespaces'
  | 'featureGates';

export interface FieldSpec {
  /** Name in the YAML file (upstream KubeletConfiguration JSON name). */
  name: string;
  /** Property on KubeletConfiguration. */
  key: keyof KubeletConfiguration;
  kind: FieldKind;
  default: unknown;
  /** Upstream command-line flag that overrides the file, if any. */
  flag?: string;
  help: string;
  /** The smallest value allowed (int: the number; duration: milliseconds). */
  min?: number;
  /**
   * A zero value in the file (0, "0s", "") means the default: upstream defaults.go for a
   * non-pointer field (`if obj.SyncFrequency == zeroDuration`). Pointer fields (healthzPort,
   * eventRecordQPS, kubeAPIQPS, ...) keep an explicit 0.
   */
  zeroDefault?: true;
}

/** Resources systemReserved and kubeReserved may name (upstream: cpu, memory, ephemeral-storage, pid). */
export const RESERVABLE_RESOURCES: readonly string[] = ['cpu', 'memory', 'ephemeral-storage', 'pid'];

/** Eviction signals upstream accepts in evictionHard. */
export const EVICTION_SIGNALS: readonly string[] = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
];

/**
 * Upstream's Linux default evictionHard. As upstream (mergeDefaultEvictionSettings off), a map
 * given in the file or on the command line replaces this one entirely: a signal left out has no
 * threshold.
 */
const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
});

export const FIELDS: readonly FieldSpec[] = [
  {
    name: 'staticPodPath',
    key: 'staticPodPath',
    kind: 'string',
    default: '',
    flag: 'pod-manifest-path',
    help: 'Directory (or file) of static pod manifests.',
  },
  {
    name: 'fileCheckFrequency',
    key: 'fileCheckFrequencyMs',
    kind: 'duration',
    default: 20_000,
    flag: 'file-check-frequency',
    help: 'Full re-list of staticPodPath (inotify is the fast path).',
    zeroDefault: true,
  },
  {
    name: 'httpCheckFrequency',
    key: 'httpCheckFrequencyMs',
    kind: 'duration',
    default: 20_000,
    flag: 'http-check-frequency',
    help: 'Poll period of the manifest URL source.',
    zeroDefault: true,
  },
  {
    name: 'syncFrequency',
    key: 'syncFrequencyMs',
    kind: 'duration',
    default: 60_000,
    flag: 'sync-frequency',
    help: 'Max period between full syncs of a running pod.',
    zeroDefault: true,
  },
  {
    name: 'address',
    key: 'address',
    kind: 'string',
    default: '0.0.0.0',
    flag: 'address',
    help: 'Bind address of the main and read-only ports.',
    zeroDefault: true,
  },
  {
    name: 'port',
    key: 'port',
    kind: 'port',
    default: 10250,
    flag: 'port',
    help: 'Main (authenticated) port.',
    zeroDefault: true,
  },
  {
    name: 'readOnlyPort',
    key: 'readOnlyPort',
    kind: 'port',
    default: 0,
    flag: 'read-only-port',
    help: 'Read-only unauthenticated port; 0 disables it.',
  },
  {
    name: 'healthzBindAddress',
    key: 'healthzBindAddress',
    kind: 'string',
    default: '127.0.0.1',
    flag: 'healthz-bind-address',
    help: 'Bind address of the healthz server.',
    zeroDefault: true,
  },
  {
    name: 'healthzPort',
    key: 'healthzPort',
    kind: 'port',
    default: 10248,
    flag: 'healthz-port',
    help: 'healthz port; 0 disables it.',
  },
  {
    name: 'podLogsDir',
    key: 'podLogsDir',
    kind: 'string',
    default: '/var/log/pods',
    help: 'Where container logs are written (<ns>_<pod>_<uid>/<container>/<n>.log).',
    zeroDefault: true,
  },
  {
    name: 'clusterDNS',
    key: 'clusterDNS',
    kind: 'stringList',
    default: [],
    flag: 'cluster-dns',
    help: 'DNS server IPs given to ClusterFirst pods.',
  },
  {
    name: 'clusterDomain',
    key: 'clusterDomain',
    kind: 'string',
    default: '',
    flag: 'cluster-domain',
    help: 'Cluster DNS search domain.',
  },
  {
    name: 'resolvConf',
    key: 'resolvConf',
    kind: 'string',
    default: '/etc/resolv.conf',
    flag: 'resolv-conf',
    help: 'Resolver file whose nameservers, searches and options dnsPolicy Default pods get (kubeadm: /run/systemd/resolve/resolv.conf); "" disables.',
  },
  {
    name: 'runtimeRequestTimeout',
    key: 'runtimeRequestTimeoutMs',
    kind: 'duration',
    default: 120_000,
    flag: 'runtime-request-timeout',
    help: 'Deadline of every CRI call (except long-running ones).',
    zeroDefault: true,
  },
  {
    name: 'containerRuntimeEndpoint',
    key: 'containerRuntimeEndpoint',
    kind: 'endpoint',
    default: 'unix:///run/containerd/containerd.sock',
    flag: 'container-runtime-endpoint',
    help: 'CRI runtime socket.',
    zeroDefault: true,
  },
  {
    name: 'imageServiceEndpoint',
    key: 'imageServiceEndpoint',
    kind: 'endpoint',
    default: '',
    flag: 'image-service-endpoint',
    help: 'CRI image socket; empty = the runtime endpoint.',
  },
  {
    name: 'maxPods',
    key: 'maxPods',
    kind: 'int',
    default: 110,
    flag: 'max-pods',
    help: 'Pods this node admits at most.',
    min: 1,
    zeroDefault: true,
  },
  {
    name: 'nodeStatusUpdateFrequency',
    key: 'nodeStatusUpdateFrequencyMs',
    kind: 'duration',
    default: 10_000,
    flag: 'node-status-update-frequency',
    help: 'Node status computation period.',
    zeroDefault: true,
  },
  {
    name: 'enableDebuggingHandlers',
    key: 'enableDebuggingHandlers',
    kind: 'bool',
    default: true,
    flag: 'enable-debugging-handlers',
    help: 'Serve logs/exec/attach/debug routes.',
  },
  {
    name: 'cgroupsPerQOS',
    key: 'cgroupsPerQOS',
    kind: 'bool',
    default: true,
    flag: 'cgroups-per-qos',
    help: 'Pod cgroups under kubepods/<qos class> (burstable, besteffort).',
  },
  {
    name: 'cgroupDriver',
    key: 'cgroupDriver',
    kind: 'string',
    default: 'cgroupfs',
    flag: 'cgroup-driver',
    help: "Driver of the pod cgroups: cgroupfs, or systemd (slices made through systemd's D-Bus API); containerd's runc SystemdCgroup must agree.",
    zeroDefault: true,
  },
  {
    name: 'cgroupRoot',
    key: 'cgroupRoot',
    kind: 'string',
    default: '',
    flag: 'cgroup-root',
    help: "Cgroup where kubepods is created; '' = the root.",
  },
  {
    name: 'systemReserved',
    key: 'systemReserved',
    kind: 'reservedMap',
    default: Object.freeze({}),
    flag: 'system-reserved',
    help: 'Resources reserved for the OS (cpu=200m,memory=500Mi): subtracted from allocatable.',
  },
  {
    name: 'kubeReserved',
    key: 'kubeReserved',
    kind: 'reservedMap',
    default: Object.freeze({}),
    flag: 'kube-reserved',
    help: 'Resources reserved for Kubernetes daemons (cpu=100m,memory=256Mi): subtracted from allocatable.',
  },
  {
    name: 'enforceNodeAllocatable',
    key: 'enforceNodeAllocatable',
    kind: 'stringList',
    default: Object.freeze(['pods']),
    flag: 'enforce-node-allocatable',
    help: 'Cgroup limits to enforce: pods (kubepods), system-reserved, kube-reserved (and *-compressible), or none.',
  },
  {
    name: 'systemReservedCgroup',
    key: 'systemReservedCgroup',
    kind: 'string',
    default: '',
    flag: 'system-reserved-cgroup',
    help: 'Existing cgroup of the OS daemons, limited to systemReserved with system-reserved enforcement.',
  },
  {
    name: 'kubeReservedCgroup',
    key: 'kubeReservedCgroup',
    kind: 'string',
    default: '',
    flag: 'kube-reserved-cgroup',
    help: 'Existing cgroup of the Kubernetes daemons, limited to kubeReserved with kube-reserved enforcement.',
  },
  {
    name: 'podPidsLimit',
    key: 'podPidsLimit',
    kind: 'int',
    default: -1,
    flag: 'pod-max-pids',
    help: 'Maximum processes per pod (pids.max of each pod cgroup); 0 or -1: no per-pod limit.',
  },
  {
    name: 'staticPodURL',
    key: 'staticPodURL',
    kind: 'string',
    default: '',
    flag: 'manifest-url',
    help: 'URL of a Pod or PodList manifest polled every httpCheckFrequency.',
  },
  {
    name: 'staticPodURLHeader',
    key: 'staticPodURLHeader',
    kind: 'headerMap',
    default: Object.freeze({}),
    flag: 'manifest-url-header',
    help: 'HTTP headers sent to staticPodURL (flag: key:value,key:value; repeatable).',
  },
  {
    name: 'imageGCHighThresholdPercent',
    key: 'imageGCHighThresholdPercent',
    kind: 'int',
    default: 85,
    flag: 'image-gc-high-threshold',
    help: 'Image fs usage % that starts image GC; 100 disables it.',
    min: 0,
  },
  {
    name: 'imageGCLowThresholdPercent',
    key: 'imageGCLowThresholdPercent',
    kind: 'int',
    default: 80,
    flag: 'image-gc-low-threshold',
    help: 'Image fs usage % image GC frees down to.',
    min: 0,
  },
  {
    name: 'imageMaximumGCAge',
    key: 'imageMaximumGCAgeMs',
    kind: 'duration',
    default: 0,
    help: 'Unused images not used for longer than this are removed even without disk pressure; 0 disables it.',
  },
  {
    name: 'imageMinimumGCAge',
    key: 'imageMinimumGCAgeMs',
    kind: 'duration',
    default: 120_000,
    flag: 'minimum-image-ttl-duration',
    help: 'Unused images younger than this are never collected.',
    zeroDefault: true,
  },
  {
    name: 'serializeImagePulls',
    key: 'serializeImagePulls',
    kind: 'bool',
    default: true,
    flag: 'serialize-image-pulls',
    help: 'Pull one image at a time.',
  },
  {
    name: 'maxParallelImagePulls',
    key: 'maxParallelImagePulls',
    kind: 'int',
    default: 0,
    help: 'Most pulls at once when serializeImagePulls is false; 0 = no limit.',
    min: 0,
  },
  {
    name: 'imagePullCredentialsVerificationPolicy',
    key: 'imagePullCredentialsVerificationPolicy',
    kind: 'string',
    default: 'NeverVerifyPreloadedImages',
    help: "Which present images need the pod's pull credentials checked (KubeletEnsureSecretPulledImages): NeverVerify, NeverVerifyPreloadedImages, NeverVerifyAllowlistedImages or AlwaysVerify.",
    zeroDefault: true,
  },
  {
    name: 'preloadedImagesVerificationAllowlist',
    key: 'preloadedImagesVerificationAllowlist',
    kind: 'stringList',
    default: [],
    help: 'With NeverVerifyAllowlistedImages: repositories ("registry/path", "registry/path/*") never checked.',
  },
  {
    name: 'allowedUnsafeSysctls',
    key: 'allowedUnsafeSysctls',
    kind: 'stringList',
    default: [],
    flag: 'allowed-unsafe-sysctls',
    help: 'Unsafe sysctls pods may set besides the safe set: names or prefixes ending in * (kernel.msg*,net.core.somaxconn), each namespaced (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*).',
  },
  {
    name: 'shutdownGracePeriod',
    key: 'shutdownGracePeriodMs',
    kind: 'duration',
    default: 0,
    help: 'Total time the node shutdown manager delays shutdown for pods; 0 disables it.',
  },
  {
    name: 'shutdownGracePeriodCriticalPods',
    key: 'shutdownGracePeriodCriticalPodsMs',
    kind: 'duration',
    default: 0,
    help: 'Part of shutdownGracePeriod kept for critical pods.',
  },
  {
    name: 'containerLogMaxSize',
    key: 'containerLogMaxSize',
    kind: 'quantity',
    default: '10Mi',
    flag: 'container-log-max-size',
    help: 'A container log file reaching this size is rotated (CRI ReopenContainerLog).',
    zeroDefault: true,
  },
  {
    name: 'containerLogMaxFiles',
    key: 'containerLogMaxFiles',
    kind: 'int',
    default: 5,
    flag: 'container-log-max-files',
    help: 'Log files kept per container, the current one included.',
    min: 2,
  },
  {
    name: 'containerLogMonitorInterval',
    key: 'containerLogMonitorIntervalMs',
    kind: 'duration',
    default: 10_000,
    help: 'How often container log sizes are checked for rotation; at least 3s.',
    min: 3_000,
    zeroDefault: true,
  },
  {
    name: 'evictionHard',
    key: 'evictionHard',
    kind: 'evictionMap',
    default: DEFAULT_EVICTION_HARD,
    flag: 'eviction-hard',
    help: 'Hard eviction thresholds (memory.available<100Mi,nodefs.available<10%); memory.available is subtracted from allocatable.',
  },
  {
    name: 'authentication',
    key: 'authentication',
    kind: 'authentication',
    default: DEFAULT_AUTHENTICATION,
    help: 'Main port: x509.clientCAFile, webhook.enabled/cacheTTL (TokenReview), anonymous.enabled (default false).',
  },
  {
    name: 'authorization',
    key: 'authorization',
    kind: 'authorization',
    default: DEFAULT_AUTHORIZATION,
    help: 'Main port: mode AlwaysAllow or Webhook (SubjectAccessReview), webhook.cacheAuthorizedTTL/cacheUnauthorizedTTL.',
  },
  {
    name: 'tlsCertFile',
    key: 'tlsCertFile',
    kind: 'string',
    default: '',
    flag: 'tls-cert-file',
    help: 'Serving certificate of the main port; empty = self-signed under <root-dir>/pki.',
  },
  {
    name: 'tlsPrivateKeyFile',
    key: 'tlsPrivateKeyFile',
    kind: 'string',
    default: '',
    flag: 'tls-private-key-file',
    help: 'Private key of tlsCertFile.',
  },
  {
    name: 'rotateCertificates',
    key: 'rotateCertificates',
    kind: 'bool',
    default: false,
    flag: 'rotate-certificates',
    help: 'Renew the client certificate in --cert-dir (kubelet-client-current.pem) through the certificates API before it expires.',
  },
  {
    name: 'serverTLSBootstrap',
    key: 'serverTLSBootstrap',
    kind: 'bool',
    default: false,
    flag: 'rotate-server-certificates',
    help: "Request the main port's serving certificate from the certificates API (signer kubernetes.io/kubelet-serving) and rotate it.",
  },
  {
    name: 'tlsMinVersion',
    key: 'tlsMinVersion',
    kind: 'tlsVersion',
    default: '',
    flag: 'tls-min-version',
    help: 'Minimum TLS version (VersionTLS12, VersionTLS13); empty = TLS 1.2.',
  },
  {
    name: 'tlsCipherSuites',
    key: 'tlsCipherSuites',
    kind: 'cipherSuites',
    default: Object.freeze([]),
    flag: 'tls-cipher-suites',
    help: 'Allowed TLS 1.2 cipher suites (Go names); empty = defaults.',
  },
  {
    name: 'streamingConnectionIdleTimeout',
    key: 'streamingConnectionIdleTimeoutMs',
    kind: 'duration',
    default: 14_400_000,
    flag: 'streaming-connection-idle-timeout',
    help: 'Close exec/attach/port-forward streams idle this long.',
    zeroDefault: true,
  },
  {
    name: 'evictionSoft',
    key: 'evictionSoft',
    kind: 'evictionMap',
    default: Object.freeze({}),
    flag: 'eviction-soft',
    help: 'Soft eviction thresholds: evict only after the signal stays past the threshold for its evictionSoftGracePeriod.',
  },
  {
    name: 'evictionSoftGracePeriod',
    key: 'evictionSoftGracePeriod',
    kind: 'evictionGraceMap',
    default: Object.freeze({}),
    flag: 'eviction-soft-grace-period',
    help: 'Grace period per soft threshold (memory.available=1m30s).',
  },
  {
    name: 'evictionPressureTransitionPeriod',
    key: 'evictionPressureTransitionPeriodMs',
    kind: 'duration',
    default: 300_000,
    flag: 'eviction-pressure-transition-period',
    help: 'How long a pressure condition stays True after its threshold is no longer met.',
    zeroDefault: true,
  },
  {
    name: 'evictionMaxPodGracePeriod',
    key: 'evictionMaxPodGracePeriod',
    kind: 'int',
    default: 0,
    flag: 'eviction-max-pod-grace-period',
    help: "Max grace period (s) for pods evicted on a soft threshold; 0 = the pod's own.",
  },
  {
    name: 'kubeAPIQPS',
    key: 'kubeAPIQPS',
    kind: 'int',
    default: 50,
    flag: 'kube-api-qps',
    help: 'QPS of requests to the API server (0 = unlimited; node status and lease are not limited).',
    min: 0,
  },
  {
    name: 'kubeAPIBurst',
    key: 'kubeAPIBurst',
    kind: 'int',
    default: 100,
    flag: 'kube-api-burst',
    help: 'Burst of requests to the API server.',
    min: 0,
    zeroDefault: true,
  },
  {
    name: 'nodeStatusReportFrequency',
    key: 'nodeStatusReportFrequencyMs',
    kind: 'duration',
    default: 300_000,
    help: 'Node status is posted at least this often even when unchanged.',
    zeroDefault: true,
  },
  {
    name: 'nodeLeaseDurationSeconds',
    key: 'nodeLeaseDurationSeconds',
    kind: 'int',
    default: 40,
    help: 'Duration of the node lease; renewed every quarter of it.',
    min: 1,
    zeroDefault: true,
  },
  {
    name: 'registerNode',
    key: 'registerNode',
    kind: 'bool',
    default: true,
    flag: 'register-node',
    help: 'Register the Node with the API server (else it must exist).',
  },
  {
    name: 'registerWithTaints',
    key: 'registerWithTaints',
    kind: 'taints',
    default: [],
    flag: 'register-with-taints',
    help: 'Taints of the registered node: Taint objects {key, value, effect} in the file, key[=value]:Effect, comma separated, on the flag.',
  },
  {
    name: 'eventRecordQPS',
    key: 'eventRecordQPS',
    kind: 'int',
    default: 50,
    flag: 'event-qps',
    help: 'Events posted to the API server per second (0 = unlimited).',
    min: 0,
  },
  {
    name: 'eventBurst',
    key: 'eventBurst',
    kind: 'int',
    default: 100,
    flag: 'event-burst',
    help: 'Burst of events posted to the API server.',
    min: 0,
    zeroDefault: true,
  },
  {
    name: 'failCgroupV1',
    key: 'failCgroupV1',
    kind: 'bool',
    default: true,
    flag: 'fail-cgroupv1',
    help: 'Refuse to start on a cgroup v1 host (upstream 1.35 default); false starts with a warning.',
  },
  {
    name: 'seccompDefault',
    key: 'seccompDefault',
    kind: 'bool',
    default: false,
    flag: 'seccomp-default',
    help: "Run containers that set no seccompProfile (pod or container) with the runtime's default profile (RuntimeDefault) instead of Unconfined.",
  },
  {
    name: 'failSwapOn',
    key: 'failSwapOn',
    kind: 'bool',
    default: true,
    flag: 'fail-swap-on',
    help: 'Refuse to start when swap is on (/proc/swaps lists a device); false starts, pods run with NoSwap semantics.',
  },
  {
    name: 'userNamespaces',
    key: 'userNamespaces',
    kind: 'userNamespaces',
    default: {},
    help: 'User namespaces of hostUsers: false pods: {idsPerPod: N}, the host IDs each pod gets (default 65536; a multiple of 65536, at most 4294967295).',
  },
  {
    name: 'featureGates',
    key: 'featureGates',
    kind: 'featureGates',
    default: {},
    flag: 'feature-gates',
    help: 'Feature gates, A=true,B=false (the flag adds to the file, winning per gate); a value kubelet-ts does not implement is refused.',
  },
];
