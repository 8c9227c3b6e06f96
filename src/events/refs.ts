/**
 * The object an event about a pod names (upstream ref.GetReference and, for one of its
 * containers, kubecontainer.GenerateContainerRef), built in one place so every subsystem's
 * events about the same pod or container carry the same reference.
 */
import { podName, podNamespace, podUID } from '../api/pod.js';
import type { Pod } from '../api/types.js';
import type { ObjectReference } from './types.js';

/** The pod itself: kind, apiVersion, namespace, name and UID. */
export function podEventRef(pod: Pod): ObjectReference {
  return { kind: 'Pod', apiVersion: 'v1', name: podName(pod), namespace: podNamespace(pod), uid: podUID(pod) };
}

/**
 * One container of the pod: the pod's reference with the container's field path,
 * `spec.initContainers{name}` for an init container (sidecars included),
 * `spec.ephemeralContainers{name}` for an ephemeral one, else `spec.containers{name}`.
 */
export function containerEventRef(pod: Pod, containerName: string): ObjectReference {
  const list = pod.spec?.initContainers?.some((c) => c.name === containerName)
    ? 'initContainers'
    : pod.spec?.ephemeralContainers?.some((c) => c.name === containerName)
      ? 'ephemeralContainers'
      : 'containers';
  return { ...podEventRef(pod), fieldPath: `spec.${list}{${containerName}}` };
}
