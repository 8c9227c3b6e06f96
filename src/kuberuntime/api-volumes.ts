/**
 * configMap, secret and projected volumes (upstream pkg/volume/configmap, secret, projected):
 * the payload (relative path → content and mode) from the cached API objects, written with the
 * same atomic writer as downwardAPI volumes and refreshed on every pod sync, so that an edit of
 * the object reaches the mounted files.
 *
 *  - items select keys and give them paths (and modes); without items every key is a file;
 *  - defaultMode (0644) applies to files without their own mode;
 *  - a missing object, or a missing key named in items, is an error unless `optional`;
 *  - projected merges configMap, secret, downwardAPI and serviceAccountToken sources.
 *
 * Secret data lands on the node's disk here (upstream mounts a tmpfs for secrets).
 */
import type { Pod } from '../api/types.js';
import type { V1KeyToPath, V1VolumeProjection } from '@kubernetes/client-node';
import { downwardAPIPayload, type DownwardAPIVolumeSource, type NodeAllocatable, type PayloadFile } from './downward-api.js';
import { EnvError, type EnvContext } from './env.js';

export const CONFIGMAP_PLUGIN = 'kubernetes.io~configmap';
export const SECRET_PLUGIN = 'kubernetes.io~secret';
export const PROJECTED_PLUGIN = 'kubernetes.io~projected';

/** Default expiry of projected serviceAccountToken sources (upstream: 1 h). */
const DEFAULT_TOKEN_SECONDS = 3600;

function checkPath(path: string): void {
  if (!path || path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '')) throw new EnvError(`item path ${JSON.stringify(path)} must be a relative path without '..'`);
}

/** Key/value data of a configMap or secret (secret values decoded); undefined = absent and optional. */
function sourceData(pod: Pod, ctx: EnvContext, kind: 'configMap' | 'secret', name: string, optional: boolean | undefined): Record<string, string> | undefined {
  if (!ctx.objects) throw new EnvError(`${kind} "${name}": ${kind} volumes need API server mode (--kubeconfig)`);
  const ns = pod.metadata?.namespace ?? 'default';
  const obj = kind === 'configMap' ? ctx.objects.configMap(ns, name) : ctx.objects.secret(ns, name);
  if (obj === undefined) throw new EnvError(`${kind} "${name}" is not synced yet`);
  if (obj === null) {
    if (optional) return undefined;
    throw new EnvError(`${kind} "${name}" not found`);
  }
  if (kind === 'secret') return Object.fromEntries(Object.entries(obj.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  const cm = obj as { data?: Record<string, string>; binaryData?: Record<string, string> };
  return { ...cm.data, ...Object.fromEntries(Object.entries(cm.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('latin1')])) };
}

function keyPayload(kind: string, name: string, data: Record<string, string>, items: V1KeyToPath[] | undefined, optional: boolean | undefined, mode: number, out: Map<string, PayloadFile>): void {
  if (!items || items.length === 0) {
    for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode });
    return;
  }
  for (const item of items) {
    checkPath(item.path);
    const v = data[item.key];
    if (v === undefined) {
      if (optional) continue;
      throw new EnvError(`${kind} "${name}": key "${item.key}" not found`);
    }
    out.set(item.path, { data: v, mode: item.mode ?? mode });
  }
}

export function configMapPayload(pod: Pod, src: { name?: string; items?: V1KeyToPath[]; optional?: boolean; defaultMode?: number }, ctx: EnvContext, mode = src.defaultMode ?? 0o644): Map<string, PayloadFile> {
  const out = new Map<string, PayloadFile>();
  const data = sourceData(pod, ctx, 'configMap', src.name ?? '', src.optional);
  if (data) keyPayload('configMap', src.name ?? '', data, src.items, src.optional, mode, out);
  return out;
}

export function secretPayload(pod: Pod, src: { secretName?: string; name?: string; items?: V1KeyToPath[]; optional?: boolean; defaultMode?: number }, ctx: EnvContext, mode = src.defaultMode ?? 0o644): Map<string, PayloadFile> {
  const name = src.secretName ?? src.name ?? '';
  const out = new Map<string, PayloadFile>();
  const data = sourceData(pod, ctx, 'secret', name, src.optional);
  if (data) keyPayload('secret', name, data, src.items, src.optional, mode, out);
  return out;
}

export function projectedPayload(pod: Pod, src: { sources?: V1VolumeProjection[]; defaultMode?: number }, ctx: EnvContext, allocatable: NodeAllocatable): Map<string, PayloadFile> {
  const mode = src.defaultMode ?? 0o644;
  const out = new Map<string, PayloadFile>();
  const add = (m: Map<string, PayloadFile>) => { for (const [k, v] of m) out.set(k, v); };
  for (const s of src.sources ?? []) {
    if (s.configMap) add(configMapPayload(pod, s.configMap, ctx, mode));
    else if (s.secret) add(secretPayload(pod, s.secret, ctx, mode));
    else if (s.downwardAPI) add(downwardAPIPayload(pod, { ...(s.downwardAPI as DownwardAPIVolumeSource), defaultMode: mode }, ctx, allocatable));
    else if (s.serviceAccountToken) {
      checkPath(s.serviceAccountToken.path);
      if (!ctx.objects) throw new EnvError('serviceAccountToken projections need API server mode (--kubeconfig)');
      const token = ctx.objects.serviceAccountToken(pod, s.serviceAccountToken.audience, s.serviceAccountToken.expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
      if (token === undefined) throw new EnvError('service account token is not issued yet');
      out.set(s.serviceAccountToken.path, { data: token, mode });
    } else {
      throw new EnvError(`projected source ${Object.keys(s).join(',') || '(empty)'} is not supported`);
    }
  }
  return out;
}

/** The plugin directory and payload of a configMap/secret/projected volume; undefined for other types. */
export function apiVolumePayload(pod: Pod, volume: import('@kubernetes/client-node').V1Volume, ctx: EnvContext, allocatable: NodeAllocatable): { plugin: string; payload: () => Map<string, PayloadFile> } | undefined {
  if (volume.configMap) return { plugin: CONFIGMAP_PLUGIN, payload: () => configMapPayload(pod, volume.configMap!, ctx) };
  if (volume.secret) return { plugin: SECRET_PLUGIN, payload: () => secretPayload(pod, volume.secret!, ctx) };
  if (volume.projected) return { plugin: PROJECTED_PLUGIN, payload: () => projectedPayload(pod, volume.projected!, ctx, allocatable) };
  return undefined;
}
