/** Small facts about a Pod that several subsystems ask, each defined once. */
import { PodIdentityError } from '../errors.js';
import { ConfigMirrorAnnotationKey, ConfigSourceAnnotationKey, type Container, type Pod } from './types.js';

type EphemeralContainer = NonNullable<NonNullable<Pod['spec']>['ephemeralContainers']>[number];

/** upstream VisitContainers(AllContainers): init, then regular, then ephemeral containers. */
export function allPodContainers(pod: Pod): (Container | EphemeralContainer)[] {
  const spec = pod.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

/**
 * A pod's identity. The pod sources refuse a pod without all three (podconfig's
 * validatePodIdentity), so past them a missing one is a bug: the accessors below throw a
 * PodIdentityError naming the field instead of carrying '' or undefined into a path, a cgroup, a
 * CRI call or an event.
 */
export interface PodNames {
  namespace: string;
  name: string;
  uid: string;
}

function required(pod: Pod, field: 'uid' | 'name' | 'namespace'): string {
  const v = pod.metadata?.[field];
  if (typeof v === 'string' && v !== '') return v;
  const m = pod.metadata;
  throw new PodIdentityError(
    `${m?.namespace || '?'}/${m?.name || '?'}`,
    `metadata.${field}`,
    'is missing (the pod sources require it; this is a kubelet-ts bug)',
  );
}

export function podUID(pod: Pod): string {
  return required(pod, 'uid');
}

export function podName(pod: Pod): string {
  return required(pod, 'name');
}

export function podNamespace(pod: Pod): string {
  return required(pod, 'namespace');
}

export function podNames(pod: Pod): PodNames {
  return { namespace: podNamespace(pod), name: podName(pod), uid: podUID(pod) };
}

/** upstream kubecontainer.BuildPodFullName: `<name>_<namespace>`. */
export function buildPodFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`;
}

/** upstream kubecontainer.GetPodFullName: `<name>_<namespace>`, the key of a pod in messages and back-off. */
export function podFullName(pod: Pod): string {
  return buildPodFullName(podName(pod), podNamespace(pod));
}

/**
 * upstream format.Pod, for log lines: `<name>_<namespace>(<uid>)`. Never throws (a log line
 * about a broken pod must still be written); a missing field prints empty.
 */
export function formatPod(pod: Pod): string {
  const m = pod.metadata;
  return `${buildPodFullName(m?.name ?? '', m?.namespace ?? '')}(${m?.uid ?? ''})`;
}

/**
 * upstream klog.KObj, the `pod` key of log lines: `<namespace>/<name>`, or the name alone
 * without a namespace. Never throws, as formatPod; takes a Pod's metadata or a runtime pod.
 */
export function klogRef(obj: { namespace?: string | undefined; name?: string | undefined } | undefined): string {
  const name = obj?.name ?? '';
  return obj?.namespace ? `${obj.namespace}/${name}` : name;
}

/** Succeeded and Failed are final: a pod never leaves them (upstream podutil.IsPodPhaseTerminal). */
export function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** upstream eviction.PodIsEvicted: Failed with reason Evicted. */
export function isPodEvicted(status: { phase?: string; reason?: string } | undefined): boolean {
  return status?.phase === 'Failed' && status.reason === 'Evicted';
}

/** A pod from a file or URL source (upstream kubetypes.IsStaticPod): not one from the API server. */
export function isStaticPod(pod: Pod | undefined): boolean {
  const src = pod?.metadata?.annotations?.[ConfigSourceAnnotationKey];
  return src !== undefined && src !== 'api';
}

/** The API server's copy of a static pod (upstream kubetypes.IsMirrorPod). */
export function isMirrorPod(pod: Pod | undefined): boolean {
  return pod?.metadata?.annotations?.[ConfigMirrorAnnotationKey] !== undefined;
}

/** upstream podutil.IsRestartableInitContainer: an init container with restartPolicy Always (a sidecar). */
export function isRestartableInitContainer(c: Pick<Container, 'restartPolicy'> | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

/** upstream v1.DefaultTerminationGracePeriodSeconds: what spec.terminationGracePeriodSeconds defaults to. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** spec.terminationGracePeriodSeconds, or the default when it is unset (a pod no apiserver defaulted). */
export function podTerminationGracePeriodSeconds(pod: Pod | undefined): number {
  return pod?.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}

/** upstream fileModeErrorMsg: volume file modes (defaultMode, items[].mode) are 0..0777. */
export const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';

export function isValidFileMode(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0o777;
}

/** upstream IsValidUserID / IsValidGroupID: uids and gids (runAsUser, fsGroup, ...) are 0..2^31-1. */
export const ID_MESSAGE = 'must be between 0 and 2147483647, inclusive';

export function isValidId(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2147483647;
}

/** A volume file mode as octal for messages (upstream prints decimal; 0640 is what people write). */
export function octal(mode: unknown): string {
  return typeof mode === 'number' && Number.isInteger(mode) && mode >= 0
    ? `0${mode.toString(8)} (${mode})`
    : (JSON.stringify(mode) ?? String(mode));
}
