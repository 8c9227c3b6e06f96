/**
 * The Kubernetes API object types we use, taken from @kubernetes/client-node so that field
 * names are exactly upstream's. Type-only: nothing here loads the client at run time.
 */
import type { V1Pod, V1PodCertificateProjection, V1PodSpec } from '@kubernetes/client-node';

/*
 * The v1.35 core/v1 fields the client (1.4.0, the 1.34 API) lacks, with upstream's JSON names
 * (staging/src/k8s.io/api/core/v1/types.go at release-1.35). src/kubelet/pod-fields.ts
 * classifies them with the rest (POD_FIELDS_1_35).
 */

/** upstream WorkloadReference (1.35, alpha GenericWorkload): the Workload and PodGroup of a pod. */
export interface WorkloadReference {
  name: string;
  podGroup: string;
  podGroupReplicaKey?: string;
}

/** PodSpec of 1.35: adds workloadRef (read by the scheduler's gang scheduling). */
export type PodSpec = V1PodSpec & { workloadRef?: WorkloadReference };

/** Pod of 1.35 (its spec is PodSpec). */
export type Pod = V1Pod & { spec?: PodSpec };

/** PodCertificateProjection of 1.35: adds userAnnotations, copied into the PodCertificateRequest. */
export type PodCertificateProjection = V1PodCertificateProjection & { userAnnotations?: Record<string, string> };

export type {
  V1PodStatus as ApiPodStatus,
  V1Container as Container,
  V1ContainerStatus as ApiContainerStatus,
  V1ContainerState as ApiContainerState,
  V1PodCondition as PodCondition,
  V1ObjectMeta as ObjectMeta,
  V1PodList as PodList,
  V1EnvVar as EnvVar,
  V1ContainerPort as ContainerPort,
  V1ResourceRequirements as ResourceRequirements,
  V1Probe as Probe,
  V1Lifecycle as Lifecycle,
} from '@kubernetes/client-node';

export const ConfigSourceAnnotationKey = 'kubernetes.io/config.source';
export const ConfigHashAnnotationKey = 'kubernetes.io/config.hash';
export const ConfigSeenAnnotationKey = 'kubernetes.io/config.seen';
export const ConfigMirrorAnnotationKey = 'kubernetes.io/config.mirror';
