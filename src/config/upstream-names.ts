/**
 * Every name upstream's kubelet knows, so a kubeadm (or any upstream) config file and command line
 * load unchanged: what kubelet-ts acts on is in schema.ts FIELDS / load.ts flags; every other name
 * here is accepted, its value type-checked loosely, and reported once as "accepted, not acted on".
 * A name in neither place is still an error (typos must fail).
 *
 * Read from kubernetes/kubernetes:
 *   staging/src/k8s.io/kubelet/config/v1beta1/types.go   @ 001332b0422071acf4860769f18e34b5e9b7c1bc
 *   pkg/kubelet/apis/config/v1beta1/defaults.go           @ 030891da1212d8ad441099a56ea89ceab67e97a1 (podHousekeepingPeriod)
 *   cmd/kubelet/app/options/options.go                    @ 6785e9ed401a526cfb4ae33d498b088e27237ad1 (KubeletFlags.AddFlags, AddKubeletConfigFlags)
 *   pkg/kubelet/config/flags.go                           @ 030880a5dc5449403c6d1f0aa146a7dc21d6c6dc (ContainerRuntimeOptions)
 *   cmd/kubelet/app/options/globalflags_linux.go          @ 04bb4ce9d3382933c7542d1925ea4e3af66eb2a5 (cAdvisor flags, '_' -> '-')
 *   component-base logs/api/v1 AddFlags (logging flags), verflag (--version), pflag (--help).
 * Windows-only flags (--windows-service, --windows-priorityclass) are left out, as a Linux kubelet does.
 */

/** How loosely a value is checked: enough that a typo'd value fails with a clear message. */
export type LooseKind = 'duration' | 'bool' | 'int' | 'number' | 'string' | 'stringList' | 'intList'
  | 'stringMap' | 'boolMap' | 'object' | 'objectList';

/** Every v1beta1 KubeletConfiguration field (JSON name) and the kind of its value. */
export const UPSTREAM_FIELDS: Readonly<Record<string, LooseKind>> = {
  enableServer: 'bool', staticPodPath: 'string', podLogsDir: 'string', syncFrequency: 'duration',
  fileCheckFrequency: 'duration', httpCheckFrequency: 'duration', staticPodURL: 'string', staticPodURLHeader: 'object',
  address: 'string', port: 'int', readOnlyPort: 'int', tlsCertFile: 'string', tlsPrivateKeyFile: 'string',
  tlsCipherSuites: 'stringList', tlsCurvePreferences: 'intList', tlsMinVersion: 'string', rotateCertificates: 'bool',
  serverTLSBootstrap: 'bool', authentication: 'object', authorization: 'object', registryPullQPS: 'int', registryBurst: 'int',
  imagePullCredentialsVerificationPolicy: 'string', preloadedImagesVerificationAllowlist: 'stringList',
  eventRecordQPS: 'int', eventBurst: 'int', enableDebuggingHandlers: 'bool', enableContentionProfiling: 'bool',
  healthzPort: 'int', healthzBindAddress: 'string', oomScoreAdj: 'int', clusterDomain: 'string', clusterDNS: 'stringList',
  streamingConnectionIdleTimeout: 'duration', nodeStatusUpdateFrequency: 'duration', nodeStatusReportFrequency: 'duration',
  nodeLeaseDurationSeconds: 'int', imageMinimumGCAge: 'duration', imageMaximumGCAge: 'duration',
  imageGCHighThresholdPercent: 'int', imageGCLowThresholdPercent: 'int', volumeStatsAggPeriod: 'duration',
  kubeletCgroups: 'string', systemCgroups: 'string', cgroupRoot: 'string', cgroupsPerQOS: 'bool', cgroupDriver: 'string',
  cpuManagerPolicy: 'string', singleProcessOOMKill: 'bool', cpuManagerPolicyOptions: 'stringMap',
  cpuManagerReconcilePeriod: 'duration', draManagerReconcilePeriod: 'duration', memoryManagerPolicy: 'string',
  topologyManagerPolicy: 'string', topologyManagerScope: 'string', topologyManagerPolicyOptions: 'stringMap',
  qosReserved: 'stringMap', runtimeRequestTimeout: 'duration', hairpinMode: 'string', maxPods: 'int', podCIDR: 'string',
  podPidsLimit: 'int', resolvConf: 'string', runOnce: 'bool', cpuCFSQuota: 'bool', cpuCFSQuotaPeriod: 'duration',
  nodeStatusMaxImages: 'int', maxOpenFiles: 'int', contentType: 'string', kubeAPIQPS: 'int', kubeAPIBurst: 'int',
  serializeImagePulls: 'bool', maxParallelImagePulls: 'int', evictionHard: 'stringMap', evictionSoft: 'stringMap',
  evictionSoftGracePeriod: 'stringMap', evictionPressureTransitionPeriod: 'duration', evictionMaxPodGracePeriod: 'int',
  evictionMinimumReclaim: 'stringMap', mergeDefaultEvictionSettings: 'bool', podsPerCore: 'int',
  enableControllerAttachDetach: 'bool', protectKernelDefaults: 'bool', makeIPTablesUtilChains: 'bool',
  iptablesMasqueradeBit: 'int', iptablesDropBit: 'int', featureGates: 'boolMap', failSwapOn: 'bool', memorySwap: 'object',
  containerLogMaxSize: 'string', containerLogMaxFiles: 'int', containerLogMaxWorkers: 'int',
  containerLogMonitorInterval: 'duration', configMapAndSecretChangeDetectionStrategy: 'string',
  systemReserved: 'stringMap', kubeReserved: 'stringMap', reservedSystemCPUs: 'string', showHiddenMetricsForVersion: 'string',
  systemReservedCgroup: 'string', kubeReservedCgroup: 'string', enforceNodeAllocatable: 'stringList',
  allowedUnsafeSysctls: 'stringList', volumePluginDir: 'string', providerID: 'string', kernelMemcgNotification: 'bool',
  logging: 'object', enableSystemLogHandler: 'bool', enableSystemLogQuery: 'bool', shutdownGracePeriod: 'duration',
  shutdownGracePeriodCriticalPods: 'duration', shutdownGracePeriodByPodPriority: 'objectList', crashLoopBackOff: 'object',
  reservedMemory: 'objectList', enableProfilingHandler: 'bool', enableDebugFlagsHandler: 'bool', seccompDefault: 'bool',
  memoryThrottlingFactor: 'number', memoryReservationPolicy: 'string', registerWithTaints: 'objectList', registerNode: 'bool',
  tracing: 'object', localStorageCapacityIsolation: 'bool', containerRuntimeEndpoint: 'string', imageServiceEndpoint: 'string',
  failCgroupV1: 'bool', userNamespaces: 'object', podHousekeepingPeriod: 'duration',
};

/**
 * Members of the nested objects we accept without acting on them (upstream MemorySwapConfiguration,
 * CrashLoopBackOffConfig, UserNamespaces): a misspelt member fails like a misspelt field.
 * logging and tracing belong to component-base and are only checked to be objects.
 */
export const UPSTREAM_NESTED: Readonly<Record<string, Readonly<Record<string, LooseKind>>>> = {
  memorySwap: { swapBehavior: 'string' },
  crashLoopBackOff: { maxContainerRestartPeriod: 'duration' },
  userNamespaces: { idsPerPod: 'int' },
};

/** The kind of a flag's value: bool flags may stand alone (--fail-swap-on), the others need one. */
export type FlagKind = 'bool' | 'duration' | 'int' | 'string';

/** Every current upstream kubelet flag (Linux build), deprecated ones included. */
export const UPSTREAM_FLAGS: Readonly<Record<string, FlagKind>> = {
  // KubeletFlags.AddFlags and ContainerRuntimeOptions.AddFlags
  'runtime-cgroups': 'string', 'pod-infra-container-image': 'string', 'image-credential-provider-config': 'string',
  'image-credential-provider-bin-dir': 'string', config: 'string', 'config-dir': 'string', kubeconfig: 'string',
  'bootstrap-kubeconfig': 'string', 'hostname-override': 'string', 'node-ip': 'string', 'cert-dir': 'string',
  'cloud-provider': 'string', 'root-dir': 'string', 'seccomp-default': 'bool', 'node-labels': 'string', 'lock-file': 'string',
  'exit-on-lock-contention': 'bool', 'minimum-container-ttl-duration': 'duration',
  'maximum-dead-containers-per-container': 'int', 'maximum-dead-containers': 'int', 'register-schedulable': 'bool',
  'keep-terminated-pod-volumes': 'bool', 'experimental-mounter-path': 'string', 'cloud-config': 'string',
  'experimental-allocatable-ignore-eviction': 'bool',
  // AddKubeletConfigFlags
  'enable-server': 'bool', 'fail-swap-on': 'bool', 'pod-manifest-path': 'string', 'sync-frequency': 'duration',
  'file-check-frequency': 'duration', 'http-check-frequency': 'duration', 'manifest-url': 'string',
  'manifest-url-header': 'string', address: 'string', port: 'int', 'read-only-port': 'int',
  'container-runtime-endpoint': 'string', 'image-service-endpoint': 'string', 'anonymous-auth': 'bool',
  'authentication-token-webhook': 'bool', 'authentication-token-webhook-cache-ttl': 'duration', 'client-ca-file': 'string',
  'authorization-mode': 'string', 'authorization-webhook-cache-authorized-ttl': 'duration',
  'authorization-webhook-cache-unauthorized-ttl': 'duration', 'tls-cert-file': 'string', 'tls-private-key-file': 'string',
  'rotate-server-certificates': 'bool', 'tls-cipher-suites': 'string', 'tls-min-version': 'string',
  'rotate-certificates': 'bool', 'registry-qps': 'int', 'registry-burst': 'int', 'event-qps': 'int', 'event-burst': 'int',
  'enable-debugging-handlers': 'bool', 'contention-profiling': 'bool', 'healthz-port': 'int',
  'healthz-bind-address': 'string', 'oom-score-adj': 'int', 'cluster-domain': 'string', 'volume-plugin-dir': 'string',
  'cluster-dns': 'string', 'streaming-connection-idle-timeout': 'duration', 'node-status-update-frequency': 'duration',
  'minimum-image-ttl-duration': 'duration', 'image-gc-high-threshold': 'int', 'image-gc-low-threshold': 'int',
  'volume-stats-agg-period': 'duration', 'feature-gates': 'string', 'kubelet-cgroups': 'string', 'system-cgroups': 'string',
  'provider-id': 'string', 'cgroups-per-qos': 'bool', 'cgroup-driver': 'string', 'cgroup-root': 'string',
  'cpu-manager-policy': 'string', 'cpu-manager-policy-options': 'string', 'cpu-manager-reconcile-period': 'duration',
  'qos-reserved': 'string', 'topology-manager-policy': 'string', 'runtime-request-timeout': 'duration',
  'hairpin-mode': 'string', 'max-pods': 'int', 'pod-cidr': 'string', 'pod-max-pids': 'int', 'resolv-conf': 'string',
  runonce: 'bool', 'cpu-cfs-quota': 'bool', 'cpu-cfs-quota-period': 'duration', 'enable-controller-attach-detach': 'bool',
  'make-iptables-util-chains': 'bool', 'iptables-masquerade-bit': 'int', 'iptables-drop-bit': 'int',
  'container-log-max-size': 'string', 'container-log-max-files': 'int', 'allowed-unsafe-sysctls': 'string',
  'node-status-max-images': 'int', 'kernel-memcg-notification': 'bool', 'local-storage-capacity-isolation': 'bool',
  'max-open-files': 'int', 'kube-api-content-type': 'string', 'kube-api-qps': 'int', 'kube-api-burst': 'int',
  'serialize-image-pulls': 'bool', 'eviction-hard': 'string', 'eviction-soft': 'string',
  'eviction-soft-grace-period': 'string', 'eviction-pressure-transition-period': 'duration',
  'eviction-max-pod-grace-period': 'int', 'eviction-minimum-reclaim': 'string', 'pods-per-core': 'int',
  'protect-kernel-defaults': 'bool', 'reserved-cpus': 'string', 'topology-manager-scope': 'string',
  'topology-manager-policy-options': 'string', 'system-reserved': 'string', 'kube-reserved': 'string',
  'enforce-node-allocatable': 'string', 'system-reserved-cgroup': 'string', 'kube-reserved-cgroup': 'string',
  'memory-manager-policy': 'string', 'reserved-memory': 'string', 'register-node': 'bool', 'register-with-taints': 'string',
  // component-base logging (logsapi.AddFlags), --version, --help
  'logging-format': 'string', 'log-flush-frequency': 'duration', v: 'int', vmodule: 'string',
  'log-json-split-stream': 'bool', 'log-json-info-buffer-size': 'string', 'log-text-split-stream': 'bool',
  'log-text-info-buffer-size': 'string', version: 'bool', help: 'bool',
  // cAdvisor flags registered with the kubelet (globalflags_linux.go), deprecated but accepted
  'docker-root': 'string', 'housekeeping-interval': 'duration', 'application-metrics-count-limit': 'int',
  'boot-id-file': 'string', 'container-hints': 'string', containerd: 'string', docker: 'string',
  'docker-env-metadata-whitelist': 'string', 'docker-only': 'bool', 'docker-tls': 'bool', 'docker-tls-ca': 'string',
  'docker-tls-cert': 'string', 'docker-tls-key': 'string', 'enable-load-reader': 'bool', 'event-storage-age-limit': 'string',
  'event-storage-event-limit': 'string', 'global-housekeeping-interval': 'duration', 'log-cadvisor-usage': 'bool',
  'machine-id-file': 'string', 'storage-driver-user': 'string', 'storage-driver-password': 'string',
  'storage-driver-host': 'string', 'storage-driver-db': 'string', 'storage-driver-table': 'string',
  'storage-driver-secure': 'bool', 'storage-driver-buffer-duration': 'duration', 'containerd-namespace': 'string',
};
