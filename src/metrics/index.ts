/**
 * Every kubelet_* metric in one registry, with upstream names, labels and (where upstream sets
 * them) buckets. Subsystems import `metrics` and update it; servers expose `registry`.
 */
import { Registry, Gauge, Histogram, Counter, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
// The event-loop lag histogram samples with a libuv timer: prom-client's default 10 ms wakes the
// agent 100 times a second (measured: 99 wakeups/s and ~0.003 cores in a bare node, a tenth of
// the agent's CPU at 100 pods); 100 ms still measures each delay in ns, 10 times a second.
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
// prom-client's gauges named *_total fail `promtool check metrics` (a gauge must not end in
// _total), and upstream's Go process has nothing like them; the rest of the defaults stay.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
  registry.removeSingleMetric(name);

/** Upstream's prometheus.DefBuckets, which most kubelet histograms use. */
export const DEF_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
/** Upstream prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}
const podStartBuckets = [
  0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
];

export const metrics = {
  credentialProviderPluginErrors: new Counter({
    name: 'kubelet_credential_provider_plugin_errors_total',
    help: 'Number of errors from credential provider plugin',
    labelNames: ['plugin_name'] as const,
    registers: [registry],
  }),
  credentialProviderPluginDuration: new Histogram({
    name: 'kubelet_credential_provider_plugin_duration',
    help: 'Duration of execution in seconds for credential provider plugin',
    labelNames: ['plugin_name'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  credentialProviderConfigInfo: new Gauge({
    name: 'kubelet_credential_provider_config_info',
    help: 'Information about the last applied credential provider configuration with hash as label',
    labelNames: ['hash'] as const,
    registers: [registry],
  }),
  certificateManagerServerTtl: new Gauge({
    name: 'kubelet_certificate_manager_server_ttl_seconds',
    help: "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. The value is in seconds until certificate expiry (negative if already expired).",
    registers: [registry],
  }),
  serverExpirationRenewErrors: new Counter({
    name: 'kubelet_server_expiration_renew_errors',
    help: 'Counter of certificate renewal errors.',
    registers: [registry],
  }),
  certificateManagerClientTtl: new Gauge({
    name: 'kubelet_certificate_manager_client_ttl_seconds',
    help: "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. The value is in seconds until certificate expiry (negative if already expired).",
    registers: [registry],
  }),
  certificateManagerClientRenewErrors: new Counter({
    name: 'kubelet_certificate_manager_client_expiration_renew_errors',
    help: 'Counter of certificate renewal errors.',
    registers: [registry],
  }),
  criLosingSupport: new Gauge({
    name: 'kubelet_cri_losing_support',
    help: 'the Kubernetes version that the currently running CRI implementation will lose support on if not upgraded.',
    labelNames: ['version'] as const,
    registers: [registry],
  }),
  runningPods: new Gauge({
    name: 'kubelet_running_pods',
    help: 'Number of pods that have a running pod sandbox',
    registers: [registry],
  }),
  runningContainers: new Gauge({
    name: 'kubelet_running_containers',
    help: 'Number of containers currently running',
    labelNames: ['container_state'] as const,
    registers: [registry],
  }),
  plegRelistDuration: new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG.',
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  plegRelistInterval: new Histogram({
    name: 'kubelet_pleg_relist_interval_seconds',
    help: 'Interval in seconds between relisting in PLEG.',
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  plegDiscardEvents: new Counter({
    name: 'kubelet_pleg_discard_events',
    help: 'The number of discard events in PLEG.',
    registers: [registry],
  }),
  plegLastSeen: new Gauge({
    name: 'kubelet_pleg_last_seen_seconds',
    help: 'Timestamp in seconds when PLEG was last seen active.',
    registers: [registry],
  }),
  /** HandlePodCleanups, one housekeeping tick (upstream has no histogram of it; issue 30's 250-pod bench reads it). */
  housekeepingDuration: new Histogram({
    name: 'kubelet_ts_housekeeping_duration_seconds',
    help: 'Duration in seconds of one housekeeping pass (HandlePodCleanups) of the sync loop.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  }),
  /** One stats pass of the stats provider (cAdvisor's housekeeping: every cgroup read once). */
  statsPassDuration: new Histogram({
    name: 'kubelet_ts_stats_pass_duration_seconds',
    help: 'Duration in seconds of one stats pass over every pod and container cgroup.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  }),
  plegExitToEvent: new Histogram({
    name: 'kubelet_ts_pleg_exit_to_event_seconds',
    help: 'Time from a container exit (runtime finishedAt) to its ContainerDied PLEG event.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  }),
  eventedPlegConnectionError: new Counter({
    name: 'kubelet_evented_pleg_connection_error_count',
    help: 'The number of errors encountered during the establishment of streaming connection with the CRI runtime.',
    registers: [registry],
  }),
  eventedPlegConnectionSuccess: new Counter({
    name: 'kubelet_evented_pleg_connection_success_count',
    help: 'The number of times a streaming client was obtained to receive CRI Events.',
    registers: [registry],
  }),
  podStartDuration: new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
    buckets: podStartBuckets,
    registers: [registry],
  }),
  podWorkerDuration: new Histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
    labelNames: ['operation_type'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  /** Upstream instrumented_services.go: one count and one duration per CRI call, by operation. */
  runtimeOperations: new Counter({
    name: 'kubelet_runtime_operations_total',
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames: ['operation_type'] as const,
    registers: [registry],
  }),
  runtimeOperationsDuration: new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: 'Duration in seconds of runtime operations. Broken down by operation type.',
    labelNames: ['operation_type'] as const,
    buckets: exponentialBuckets(0.005, 2.5, 14),
    registers: [registry],
  }),
  runPodSandboxDuration: new Histogram({
    name: 'kubelet_run_podsandbox_duration_seconds',
    help: 'Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.',
    labelNames: ['runtime_handler'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  runPodSandboxErrors: new Counter({
    name: 'kubelet_run_podsandbox_errors_total',
    help: 'Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.',
    labelNames: ['runtime_handler'] as const,
    registers: [registry],
  }),
  runtimeOperationsErrors: new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames: ['operation_type'] as const,
    registers: [registry],
  }),
  evictions: new Counter({
    name: 'kubelet_evictions',
    help: 'Cumulative number of pod evictions by eviction signal',
    labelNames: ['eviction_signal'] as const,
    registers: [registry],
  }),
  oomKillToEvent: new Histogram({
    name: 'kubelet_ts_oom_kill_to_event_seconds',
    help: "Time from the kernel's OOM-kill log record to the kubelet's OOM event.",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  }),
  restClientRequests: new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests to the API server, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'] as const,
    registers: [registry],
  }),
  restClientRequestDuration: new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'] as const,
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  }),
  /** Always 1; the label names the node (upstream SetNodeName). */
  nodeName: new Gauge({
    name: 'kubelet_node_name',
    help: "The node's name. The count is always 1.",
    labelNames: ['node'] as const,
    registers: [registry],
  }),
  podStartSLIDuration: new Histogram({
    name: 'kubelet_pod_start_sli_duration_seconds',
    help: 'Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    labelNames: ['first_with_network'] as const,
    buckets: podStartBuckets,
    registers: [registry],
  }),
  podStartTotalDuration: new Histogram({
    name: 'kubelet_pod_start_total_duration_seconds',
    help: 'Duration in seconds to start a pod since creation, including time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    labelNames: ['first_with_network'] as const,
    buckets: podStartBuckets,
    registers: [registry],
  }),
  cgroupManagerDuration: new Histogram({
    name: 'kubelet_cgroup_manager_duration_seconds',
    help: 'Duration in seconds for cgroup manager operations. Broken down by method.',
    labelNames: ['operation_type'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  startedPods: new Counter({
    name: 'kubelet_started_pods_total',
    help: 'Cumulative number of pods started',
    registers: [registry],
  }),
  startedPodsErrors: new Counter({
    name: 'kubelet_started_pods_errors_total',
    help: 'Cumulative number of errors when starting pods',
    registers: [registry],
  }),
  /** upstream's Linux-only pair: sandboxes of hostUsers: false pods, and their failures. */
  startedUserNamespacedPods: new Counter({
    name: 'kubelet_started_user_namespaced_pods_total',
    help: 'Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.',
    registers: [registry],
  }),
  startedUserNamespacedPodsErrors: new Counter({
    name: 'kubelet_started_user_namespaced_pods_errors_total',
    help: 'Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.',
    registers: [registry],
  }),
  startedContainers: new Counter({
    name: 'kubelet_started_containers_total',
    help: 'Cumulative number of containers started',
    labelNames: ['container_type'] as const,
    registers: [registry],
  }),
  /** code: the gRPC status name as Go prints it (Unknown, DeadlineExceeded, ...). */
  startedContainersErrors: new Counter({
    name: 'kubelet_started_containers_errors_total',
    help: 'Cumulative number of errors when starting containers',
    labelNames: ['container_type', 'code'] as const,
    registers: [registry],
  }),
  desiredPods: new Gauge({
    name: 'kubelet_desired_pods',
    help: 'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.',
    labelNames: ['static'] as const,
    registers: [registry],
  }),
  activePods: new Gauge({
    name: 'kubelet_active_pods',
    help: 'The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.',
    labelNames: ['static'] as const,
    registers: [registry],
  }),
  orphanedRuntimePods: new Counter({
    name: 'kubelet_orphaned_runtime_pods_total',
    help: 'Number of pods that have been detected in the container runtime without being already known to the pod worker. This typically indicates the kubelet was restarted while a pod was force deleted in the API or in the local configuration, which is unusual.',
    registers: [registry],
  }),
  containersPerPod: new Histogram({
    name: 'kubelet_containers_per_pod_count',
    help: 'The number of containers per pod.',
    buckets: exponentialBuckets(1, 2, 5),
    registers: [registry],
  }),
  cgroupVersion: new Gauge({
    name: 'kubelet_cgroup_version',
    help: 'cgroup version on the hosts.',
    registers: [registry],
  }),
  featureEnabled: new Gauge({
    name: 'kubernetes_feature_enabled',
    help: 'This metric records the data about the stage and enablement of a k8s feature.',
    labelNames: ['name', 'stage'] as const,
    registers: [registry],
  }),
  nativeEnabled: new Gauge({
    name: 'kubelet_ts_native_enabled',
    help: '1 when the hot path runs in the C++ addon, 0 when it runs the TypeScript twin.',
    labelNames: ['path'] as const,
    registers: [registry],
  }),
  /** Upstream pkg/kubelet/server/metrics: path is the route bucket, server_type readonly|readwrite. */
  httpRequests: new Counter({
    name: 'kubelet_http_requests_total',
    help: 'Number of the http requests received since the server started',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    registers: [registry],
  }),
  httpRequestDuration: new Histogram({
    name: 'kubelet_http_requests_duration_seconds',
    help: 'Duration in seconds to serve http requests',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  httpInflightRequests: new Gauge({
    name: 'kubelet_http_inflight_requests',
    help: 'Number of the inflight http requests',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    registers: [registry],
  }),
  /** upstream server/metrics VolumeStatCalDuration; metric_source = the CSI driver's name, as csi_metrics.go. */
  volumeMetricCollectionDuration: new Histogram({
    name: 'kubelet_volume_metric_collection_duration_seconds',
    help: 'Duration in seconds to calculate volume stats',
    labelNames: ['metric_source'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
  /** upstream DevicePluginRegistrationCount: Register calls on kubelet.sock, before validation. */
  devicePluginRegistrationTotal: new Counter({
    name: 'kubelet_device_plugin_registration_total',
    help: 'Cumulative number of device plugin registrations. Broken down by resource name.',
    labelNames: ['resource_name'] as const,
    registers: [registry],
  }),
  /** upstream DevicePluginAllocationDuration: one Allocate call, failed ones too. */
  devicePluginAllocDuration: new Histogram({
    name: 'kubelet_device_plugin_alloc_duration_seconds',
    help: 'Duration in seconds to serve a device plugin Allocation request. Broken down by resource name.',
    labelNames: ['resource_name'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  }),
};

// upstream: the certificate TTL gauges read +Inf until a certificate is in use (no expiry alert fires for a node without one).
metrics.certificateManagerClientTtl.set(Infinity);
metrics.certificateManagerServerTtl.set(Infinity);
