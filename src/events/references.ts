/**
 * The object references pod events are about (upstream ref.GetReference for a pod, and
 * kubecontainer.GenerateContainerRef for one of its containers), shared by the subsystems that
 * raise them (kuberuntime's container lifecycle, images' pulls).
 */
import type { Container, Pod } from '../api/types.js';
import type { ObjectReference } from './types.js';

/** The pod itself: a pod-scoped event (no fieldPath), e.g. FailedCreatePodSandBox. */
export function podReference(pod: Pod): ObjectReference {
  const m = pod.metadata ?? {};
  return { kind: 'Pod', name: m.name ?? '', namespace: m.namespace ?? 'default', uid: m.uid, apiVersion: 'v1' };
}

/** One container of the pod: FieldPath spec.containers{name} (or spec.initContainers{name}). */
export function containerReference(pod: Pod, container: Pick<Container, 'name'>): ObjectReference {
  const init = pod.spec?.initContainers?.some((c) => c.name === container.name) ?? false;
  return { ...podReference(pod), fieldPath: `spec.${init ? 'initContainers' : 'containers'}{${container.name}}` };
}
