/**
 * The downward API's field paths (upstream pkg/fieldpath and the kubelet's
 * podFieldSelectorRuntimeValue): the value of a `fieldRef` for a container's env
 * (valueFrom.fieldRef) and for downwardAPI volume files. What a pod object does not hold (the
 * node's name, the host's and the pod's IPs) comes from a FieldPathContext.
 */
import type { Pod } from '../api/types.js';
import { kubeletErrorClass } from '../errors.js';

/**
 * A field path, resource or env reference the pod asks for that cannot be resolved: a
 * configuration problem of the pod, which its container reports as CreateContainerConfigError.
 */
export class EnvError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

/** What the downward API needs that is not in the pod object. */
export interface FieldPathContext {
  nodeName: string;
  hostIP: string;
  /** Every node IP (dual stack), for status.hostIPs; default [hostIP]. */
  hostIPs?: readonly string[];
  podIP: string;
  podIPs: string[];
}

const SUBSCRIPT_RE = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** True for `metadata.labels['key']` and `metadata.annotations['key']`. */
export function isSubscriptedFieldPath(fieldPath: string): boolean {
  return SUBSCRIPT_RE.test(fieldPath);
}

/** Downward API field values (upstream podFieldSelectorRuntimeValue + ExtractFieldPathAsString). */
export function fieldRefValue(
  pod: Pod,
  fieldPath: string,
  apiVersion: string | undefined,
  ctx: FieldPathContext,
): string {
  if (apiVersion && apiVersion !== 'v1')
    throw new EnvError(`fieldRef ${fieldPath}: unsupported apiVersion ${apiVersion}`);
  const sub = SUBSCRIPT_RE.exec(fieldPath);
  if (sub) {
    const map = sub[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[sub[2]!] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata?.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata?.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName || ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIP;
    case 'status.hostIPs':
      return (ctx.hostIPs ?? (ctx.hostIP ? [ctx.hostIP] : [])).join(',');
    case 'status.podIP':
      return ctx.podIPs[0] ?? ctx.podIP;
    case 'status.podIPs':
      return (ctx.podIPs.length > 0 ? ctx.podIPs : ctx.podIP ? [ctx.podIP] : []).join(',');
    default:
      throw new EnvError(`fieldRef ${fieldPath}: unsupported field path`);
  }
}

/** upstream fieldpath.FormatMap: sorted `key="value"` lines. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}
