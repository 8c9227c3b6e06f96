/**
 * The CRI labels and annotations kubelet-ts puts on sandboxes and containers, with upstream's
 * keys (pkg/kubelet/kuberuntime/labels.go, pkg/kubelet/types/labels.go). They are the only
 * memory the agent has across its own restarts: a fresh agent recognises its sandboxes and
 * containers by these labels, and reads the spec hash, restart count and grace period back from
 * the annotations. Anything without our labels belongs to someone else and is ignored.
 */
import type { Container, ContainerPort, Pod } from '../api/types.js';
import { podNames } from '../api/pod.js';
import type { Labels } from '../cri/types.js';
import { hashContainer } from './hash.js';

const KubernetesPodNameLabel = 'io.kubernetes.pod.name';
const KubernetesPodNamespaceLabel = 'io.kubernetes.pod.namespace';
export const KubernetesPodUIDLabel = 'io.kubernetes.pod.uid';
export const KubernetesContainerNameLabel = 'io.kubernetes.container.name';

const PodDeletionGracePeriodAnnotation = 'io.kubernetes.pod.deletionGracePeriod';
export const PodTerminationGracePeriodAnnotation = 'io.kubernetes.pod.terminationGracePeriod';
export const ContainerHashAnnotation = 'io.kubernetes.container.hash';
export const ContainerRestartCountAnnotation = 'io.kubernetes.container.restartCount';
const ContainerTerminationMessagePathAnnotation = 'io.kubernetes.container.terminationMessagePath';
const ContainerTerminationMessagePolicyAnnotation = 'io.kubernetes.container.terminationMessagePolicy';
const ContainerPreStopHandlerAnnotation = 'io.kubernetes.container.preStopHandler';
export const ContainerPortsAnnotation = 'io.kubernetes.container.ports';
const ContainerTypeAnnotation = 'io.kubernetes.container.type';

type ContainerType = 'init' | 'container' | 'ephemeral';

/** Sandbox identity read back from labels (upstream labeledPodSandboxInfo). */
export interface LabeledPodSandboxInfo {
  podName: string;
  podNamespace: string;
  podUid: string;
  /** The pod's own labels (ours removed). */
  labels: Labels;
}

/** Container identity read back from labels (upstream labeledContainerInfo). */
export interface LabeledContainerInfo {
  podName: string;
  podNamespace: string;
  podUid: string;
  containerName: string;
}

/** What the annotations say about a container (upstream annotatedContainerInfo). */
export interface AnnotatedContainerInfo {
  /** As written (hex); '' when absent or malformed, which matches no spec, so the container restarts. */
  hash: string;
  restartCount: number;
  podDeletionGracePeriod?: number;
  podTerminationGracePeriod?: number;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
  preStopHandler?: unknown;
  containerPorts?: ContainerPort[];
  containerType: string;
}

/** The three labels that name the pod on its sandbox and containers. */
function podIdentityLabels(pod: Pod): Labels {
  const { name, namespace, uid } = podNames(pod);
  return { [KubernetesPodNameLabel]: name, [KubernetesPodNamespaceLabel]: namespace, [KubernetesPodUIDLabel]: uid };
}

/** Sandbox labels: the pod's labels plus our three identity labels (ours win on conflict). */
export function newPodLabels(pod: Pod): Labels {
  return {
    ...(pod.metadata?.labels ?? {}),
    ...podIdentityLabels(pod),
  };
}

/** Sandbox annotations are the pod's annotations, unchanged (CNI plugins and runtimes read them). */
export function newPodAnnotations(pod: Pod): Labels {
  return { ...(pod.metadata?.annotations ?? {}) };
}

export function newContainerLabels(container: Container, pod: Pod): Labels {
  return {
    ...podIdentityLabels(pod),
    [KubernetesContainerNameLabel]: container.name,
  };
}

export function newContainerAnnotations(container: Container, pod: Pod, restartCount: number): Labels {
  const a: Labels = {
    [ContainerHashAnnotation]: hashContainer(container),
    [ContainerRestartCountAnnotation]: String(restartCount),
    [ContainerTerminationMessagePathAnnotation]: container.terminationMessagePath ?? '',
    [ContainerTerminationMessagePolicyAnnotation]: container.terminationMessagePolicy ?? '',
  };
  if (pod.metadata?.deletionGracePeriodSeconds !== undefined && pod.metadata.deletionGracePeriodSeconds !== null) {
    a[PodDeletionGracePeriodAnnotation] = String(pod.metadata.deletionGracePeriodSeconds);
  }
  if (pod.spec?.terminationGracePeriodSeconds !== undefined && pod.spec.terminationGracePeriodSeconds !== null) {
    a[PodTerminationGracePeriodAnnotation] = String(pod.spec.terminationGracePeriodSeconds);
  }
  // JSON so that a restarted agent can run the preStop hook of an orphaned container.
  if (container.lifecycle?.preStop) a[ContainerPreStopHandlerAnnotation] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports && container.ports.length > 0) a[ContainerPortsAnnotation] = JSON.stringify(container.ports);
  const type = containerTypeOf(container.name, pod);
  if (type) a[ContainerTypeAnnotation] = type;
  return a;
}

function containerTypeOf(name: string, pod: Pod): ContainerType | undefined {
  if (pod.spec?.initContainers?.some((c) => c.name === name)) return 'init';
  if (pod.spec?.containers?.some((c) => c.name === name)) return 'container';
  if (pod.spec?.ephemeralContainers?.some((c) => c.name === name)) return 'ephemeral';
  return undefined;
}

/** undefined for a sandbox that is not ours (no pod UID label). */
export function getPodSandboxInfoFromLabels(labels: Labels | undefined): LabeledPodSandboxInfo | undefined {
  const uid = labels?.[KubernetesPodUIDLabel];
  if (!labels || !uid) return undefined;
  const own: Labels = {};
  for (const [k, v] of Object.entries(labels)) {
    if (k !== KubernetesPodNameLabel && k !== KubernetesPodNamespaceLabel && k !== KubernetesPodUIDLabel) own[k] = v;
  }
  return {
    podName: labels[KubernetesPodNameLabel] ?? '',
    podNamespace: labels[KubernetesPodNamespaceLabel] ?? '',
    podUid: uid,
    labels: own,
  };
}

/** undefined for a container that is not ours (no pod UID or container name label). */
export function getContainerInfoFromLabels(labels: Labels | undefined): LabeledContainerInfo | undefined {
  const uid = labels?.[KubernetesPodUIDLabel];
  const name = labels?.[KubernetesContainerNameLabel];
  if (!labels || !uid || !name) return undefined;
  return {
    podName: labels[KubernetesPodNameLabel] ?? '',
    podNamespace: labels[KubernetesPodNamespaceLabel] ?? '',
    podUid: uid,
    containerName: name,
  };
}

/**
 * Reads the annotations back. Malformed values never throw: each one yields a default (as
 * upstream does) and a message in `errors` naming the annotation and the bad value, which the
 * caller logs.
 */
export function getContainerInfoFromAnnotations(annotations: Labels | undefined): {
  info: AnnotatedContainerInfo;
  errors: string[];
} {
  const a = annotations ?? {};
  const errors: string[] = [];
  const info: AnnotatedContainerInfo = {
    hash: readHash(a, errors),
    restartCount: readInt(a, ContainerRestartCountAnnotation, errors) ?? 0,
    terminationMessagePath: a[ContainerTerminationMessagePathAnnotation] ?? '',
    terminationMessagePolicy: a[ContainerTerminationMessagePolicyAnnotation] ?? '',
    containerType: a[ContainerTypeAnnotation] ?? '',
  };
  const deletion = readInt(a, PodDeletionGracePeriodAnnotation, errors);
  if (deletion !== undefined) info.podDeletionGracePeriod = deletion;
  const termination = readInt(a, PodTerminationGracePeriodAnnotation, errors);
  if (termination !== undefined) info.podTerminationGracePeriod = termination;
  const preStop = readJson(
    a,
    ContainerPreStopHandlerAnnotation,
    errors,
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  );
  if (preStop !== undefined) info.preStopHandler = preStop;
  const ports = readJson(a, ContainerPortsAnnotation, errors, isPortList);
  if (ports !== undefined) info.containerPorts = ports as ContainerPort[];
  return { info, errors };
}

function bad(key: string, value: string, why: string): string {
  return `annotation ${key}=${JSON.stringify(value)}: ${why}`;
}

/** What upstream's strconv.ParseUint(v, 16, 64) accepts: hex digits of either case, at most 64 bits. */
function readHash(a: Labels, errors: string[]): string {
  const v = a[ContainerHashAnnotation];
  if (v === undefined) return '';
  if (!/^[0-9a-f]+$/i.test(v) || BigInt(`0x${v}`) > MAX_UINT64) {
    errors.push(bad(ContainerHashAnnotation, v, 'not a hexadecimal hash of at most 64 bits'));
    return '';
  }
  return v;
}

const MAX_UINT64 = (1n << 64n) - 1n;

function readInt(a: Labels, key: string, errors: string[]): number | undefined {
  const v = a[key];
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v)) {
    errors.push(bad(key, v, 'not a non-negative integer'));
    return undefined;
  }
  return Number(v);
}

function readJson(a: Labels, key: string, errors: string[], valid: (v: unknown) => boolean): unknown {
  const v = a[key];
  if (v === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    errors.push(bad(key, v, `not JSON (${(err as Error).message})`));
    return undefined;
  }
  if (!valid(parsed)) {
    errors.push(bad(key, v, 'JSON of the wrong shape'));
    return undefined;
  }
  return parsed;
}

function isPortList(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.every(
      (p) =>
        typeof p === 'object' && p !== null && typeof (p as { containerPort?: unknown }).containerPort === 'number',
    )
  );
}
