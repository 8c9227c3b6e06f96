/**
 * The Kubernetes API object types we use, taken from @kubernetes/client-node so that field
 * names are exactly upstream's. Type-only: nothing here loads the client at run time.
 */
export type {
  V1Pod as Pod,
  V1PodSpec as PodSpec,
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
