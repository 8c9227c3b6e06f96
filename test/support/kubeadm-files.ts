/**
 * The files kubeadm v1.35 leaves on a node for its kubelet (checked against upstream
 * cmd/kubeadm/app/componentconfigs/kubelet.go): /var/lib/kubelet/config.yaml with every
 * non-omitempty zero value marshalled, and kubeadm-flags.env's KUBELET_KUBEADM_ARGS. kubeadm
 * does not write failCgroupV1: on a cgroup v1 host the drop-in (deploy/kubeadm/10-kubeadm.conf)
 * passes --fail-cgroupv1=false.
 */
export const KUBEADM_CONFIG = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
`;

/**
 * kubeadm-flags.env's KUBELET_KUBEADM_ARGS, as systemd splits it. kubeadm 1.35 no longer writes
 * --pod-infra-container-image (the 1.35 kubelet removed it; the runtime pins its sandbox image).
 */
export const KUBEADM_FLAGS_ENV = ['--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock'];
