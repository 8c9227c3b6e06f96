/**
 * Identity of pods that come from a file or a URL rather than the apiserver (upstream's
 * applyDefaults in pkg/kubelet/config/common.go): node-qualified name, a UID derived from the
 * node, the source and the manifest's content, the config.hash/config.source annotations, the
 * node name, and a toleration of every NoExecute taint for file pods.
 */
import { createHash } from 'node:crypto';
import type { Pod } from '../api/types.js';
import { ConfigHashAnnotationKey, ConfigSourceAnnotationKey } from '../api/types.js';
import { FileSource, type HTTPSource } from './types.js';

export interface StaticPodIdentityOptions {
  /** The manifest's file path (file source) or URL (http source). */
  source: string;
  nodeName: string;
  kind: typeof FileSource | typeof HTTPSource;
}

/** generatePodName: unique among nodes by appending the (lowercased) node name. */
export function generatePodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

/** JSON with object keys sorted at every level, so equal objects hash equally. */
function stableStringify(v: unknown): string {
  return JSON.stringify(v, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = (value as Record<string, unknown>)[k];
    return out;
  });
}

/**
 * The UID of a file or URL pod: md5 hex of the node name, the source and the decoded,
 * API-defaulted manifest. An edit to the manifest gives a new UID (so the kubelet replaces the
 * pod); the same content on the same node and path always gives the same one. The config.seen
 * annotation is added later by PodConfig and never takes part.
 */
export function staticPodUID(pod: Pod, opts: StaticPodIdentityOptions): string {
  const h = createHash('md5');
  if (opts.kind === FileSource) {
    h.update(`host:${opts.nodeName}`);
    h.update(`file:${opts.source}`);
  } else {
    h.update(`url:${opts.source}`);
  }
  h.update(stableStringify(pod));
  return h.digest('hex');
}

/** Applies the static pod identity in place to a decoded, defaulted and validated pod. */
export function applyStaticPodIdentity(pod: Pod, opts: StaticPodIdentityOptions): Pod {
  const meta = (pod.metadata ??= {});
  if (!meta.uid) meta.uid = staticPodUID(pod, opts);
  meta.name = generatePodName(meta.name ?? '', opts.nodeName);
  if (!meta.namespace) meta.namespace = 'default';
  const spec = pod.spec!;
  spec.nodeName = opts.nodeName;
  meta.annotations = {
    ...meta.annotations,
    [ConfigHashAnnotationKey]: meta.uid,
    [ConfigSourceAnnotationKey]: opts.kind,
  };
  if (opts.kind === FileSource) {
    // Static pods are not evicted for node problems: tolerate every NoExecute taint.
    const tolerations = (spec.tolerations ??= []);
    const has = tolerations.some(
      (t) => t.operator === 'Exists' && t.effect === 'NoExecute' && !t.key && t.tolerationSeconds === undefined,
    );
    if (!has) tolerations.push({ operator: 'Exists', effect: 'NoExecute' });
  }
  pod.status = { ...pod.status, phase: 'Pending' };
  return pod;
}
