/**
 * configMap, secret, projected and downwardAPI volumes (upstream pkg/volume/configmap, secret,
 * projected, downwardapi): the payload (relative path → content, mode, owner) from the cached API
 * objects and the pod, written by the atomic writer (volumes.ts) and refreshed on every pod sync,
 * so that an edit of an object or of the pod's labels reaches the mounted files.
 *
 *  - items select keys and give them paths (and modes); without items every key is a file;
 *  - modes and owners as volume-payload.ts says (defaultMode 0644, items[].mode, fsGroup,
 *    the token's 0600);
 *  - a missing object, or a missing key named in items, is an error unless `optional`;
 *  - projected merges configMap, secret, downwardAPI and serviceAccountToken sources;
 *  - the medium under each is upstream's wrapped emptyDir: secret, projected and downwardAPI
 *    volumes live on a tmpfs (memory-backed), configMap volumes on the node's disk (upstream:
 *    "this should be on a tmpfs instead of the local disk; the problem is charging the memory").
 */
import type { Pod } from '../api/types.js';
import type { V1KeyToPath, V1Volume, V1VolumeProjection } from '@kubernetes/client-node';
import { downwardAPIPayload, type DownwardAPIVolumeSource, type NodeAllocatable } from './downward-api.js';
import { EnvError, type EnvContext } from './env.js';
import {
  DEFAULT_FILE_MODE, fileMode, ownedPayload, payloadPathProblem, tokenFile, volumeDirOwnership, volumeOwnership,
  type PayloadFile, type VolumeOwnership,
} from './volume-payload.js';

export const CONFIGMAP_PLUGIN = 'kubernetes.io~configmap';
export const SECRET_PLUGIN = 'kubernetes.io~secret';
export const PROJECTED_PLUGIN = 'kubernetes.io~projected';
export const DOWNWARD_API_PLUGIN = 'kubernetes.io~downward-api';

/** Default expiry of projected serviceAccountToken sources (upstream: 1 h). */
const DEFAULT_TOKEN_SECONDS = 3600;

function checkPath(path: string, field: string): void {
  const problem = payloadPathProblem(path);
  if (problem) throw new EnvError(`${field}: ${JSON.stringify(path)} ${problem}`);
}

/** Key/value data of a configMap or secret (secret values and binaryData decoded to bytes); undefined = absent and optional. */
function sourceData(pod: Pod, ctx: EnvContext, kind: 'configMap' | 'secret', name: string, optional: boolean | undefined): Record<string, string | Buffer> | undefined {
  if (!ctx.objects) throw new EnvError(`${kind} "${name}": ${kind} volumes need API server mode (--kubeconfig)`);
  const ns = pod.metadata?.namespace ?? 'default';
  const obj = kind === 'configMap' ? ctx.objects.configMap(ns, name) : ctx.objects.secret(ns, name);
  if (obj === undefined) throw new EnvError(`${kind} "${name}" is not synced yet`);
  if (obj === null) {
    if (optional) return undefined;
    throw new EnvError(`${kind} "${name}" not found`);
  }
  const bytes = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const);
  if (kind === 'secret') return Object.fromEntries(bytes(obj.data));
  const cm = obj as { data?: Record<string, string>; binaryData?: Record<string, string> };
  return { ...cm.data, ...Object.fromEntries(bytes(cm.binaryData)) };
}

interface KeySource {
  name: string;
  items?: V1KeyToPath[];
  optional?: boolean;
}

/** `field` names the items list in messages (`items`, `sources[1].secret.items`). */
function keyPayload(kind: string, src: KeySource, data: Record<string, string | Buffer>, mode: number, field: string, out: Map<string, PayloadFile>): void {
  if (!src.items || src.items.length === 0) {
    for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode });
    return;
  }
  for (const [i, item] of src.items.entries()) {
    checkPath(item.path, `${field}[${i}].path`);
    const itemMode = fileMode(item.mode, mode, `${field}[${i}].mode`);
    const v = data[item.key];
    if (v === undefined) {
      if (src.optional) continue;
      throw new EnvError(`${kind} "${src.name}": key "${item.key}" not found`);
    }
    out.set(item.path, { data: v, mode: itemMode });
  }
}

function objectPayload(pod: Pod, kind: 'configMap' | 'secret', src: KeySource, ctx: EnvContext, mode: number, field: string): Map<string, PayloadFile> {
  const out = new Map<string, PayloadFile>();
  const data = sourceData(pod, ctx, kind, src.name, src.optional);
  if (data) keyPayload(kind, src, data, mode, field, out);
  return out;
}

type ConfigMapSource = { name?: string; items?: V1KeyToPath[]; optional?: boolean; defaultMode?: number };
type SecretSource = { secretName?: string; name?: string; items?: V1KeyToPath[]; optional?: boolean; defaultMode?: number };

export function configMapPayload(pod: Pod, src: ConfigMapSource, ctx: EnvContext, mode = fileMode(src.defaultMode, DEFAULT_FILE_MODE, 'defaultMode'), field = 'items'): Map<string, PayloadFile> {
  return objectPayload(pod, 'configMap', { ...src, name: src.name ?? '' }, ctx, mode, field);
}

export function secretPayload(pod: Pod, src: SecretSource, ctx: EnvContext, mode = fileMode(src.defaultMode, DEFAULT_FILE_MODE, 'defaultMode'), field = 'items'): Map<string, PayloadFile> {
  return objectPayload(pod, 'secret', { ...src, name: src.secretName ?? src.name ?? '' }, ctx, mode, field);
}

/** `own`: the pod's fsUser / fsGroup, which decide the token's mode and owner. */
export function projectedPayload(pod: Pod, src: { sources?: V1VolumeProjection[]; defaultMode?: number }, ctx: EnvContext, allocatable: NodeAllocatable, own: VolumeOwnership = {}): Map<string, PayloadFile> {
  const mode = fileMode(src.defaultMode, DEFAULT_FILE_MODE, 'defaultMode');
  const out = new Map<string, PayloadFile>();
  const add = (m: Map<string, PayloadFile>) => { for (const [k, v] of m) out.set(k, v); };
  for (const [i, s] of (src.sources ?? []).entries()) {
    if (s.configMap) add(configMapPayload(pod, s.configMap, ctx, mode, `sources[${i}].configMap.items`));
    else if (s.secret) add(secretPayload(pod, s.secret, ctx, mode, `sources[${i}].secret.items`));
    else if (s.downwardAPI) add(downwardAPIPayload(pod, { ...(s.downwardAPI as DownwardAPIVolumeSource), defaultMode: mode }, ctx, allocatable));
    else if (s.serviceAccountToken) {
      checkPath(s.serviceAccountToken.path, `sources[${i}].serviceAccountToken.path`);
      if (!ctx.objects) throw new EnvError('serviceAccountToken projections need API server mode (--kubeconfig)');
      const token = ctx.objects.serviceAccountToken(pod, s.serviceAccountToken.audience, s.serviceAccountToken.expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
      if (token === undefined) throw new EnvError('service account token is not issued yet');
      out.set(s.serviceAccountToken.path, tokenFile(token, mode, own));
    } else {
      throw new EnvError(`projected source ${Object.keys(s).join(',') || '(empty)'} is not supported`);
    }
  }
  return out;
}

/** What backs a volume's directory: a tmpfs ('Memory') or the node's disk (''). */
export type Medium = 'Memory' | '';

/** A volume the atomic writer fills: its plugin directory, medium, and what to write. */
export interface AtomicVolume {
  plugin: string;
  medium: Medium;
  /** The files (modes and owners final) and the mode/group of the volume's directories; throws EnvError. */
  contents(): { files: Map<string, PayloadFile>; dir: { mode: number; gid?: number } };
}

function sourceOf(pod: Pod, volume: V1Volume, ctx: EnvContext, allocatable: NodeAllocatable): { plugin: string; medium: Medium; payload: (own: VolumeOwnership) => Map<string, PayloadFile> } | undefined {
  if (volume.configMap) return { plugin: CONFIGMAP_PLUGIN, medium: '', payload: () => configMapPayload(pod, volume.configMap!, ctx) };
  if (volume.secret) return { plugin: SECRET_PLUGIN, medium: 'Memory', payload: () => secretPayload(pod, volume.secret!, ctx) };
  if (volume.projected) return { plugin: PROJECTED_PLUGIN, medium: 'Memory', payload: (own) => projectedPayload(pod, volume.projected!, ctx, allocatable, own) };
  if (volume.downwardAPI) return { plugin: DOWNWARD_API_PLUGIN, medium: 'Memory', payload: () => downwardAPIPayload(pod, volume.downwardAPI as DownwardAPIVolumeSource, ctx, allocatable) };
  return undefined;
}

/** The configMap / secret / projected / downwardAPI volume behind `volume`; undefined for other types. */
export function atomicVolume(pod: Pod, volume: V1Volume, ctx: EnvContext, allocatable: NodeAllocatable): AtomicVolume | undefined {
  const source = sourceOf(pod, volume, ctx, allocatable);
  if (!source) return undefined;
  return {
    plugin: source.plugin,
    medium: source.medium,
    contents: () => {
      const own = volumeOwnership(pod);
      return { files: ownedPayload(source.payload(own), own), dir: volumeDirOwnership(own) };
    },
  };
}
