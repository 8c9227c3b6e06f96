/**
 * The payloads of configMap, secret, projected and downwardAPI volumes (upstream
 * pkg/volume/configmap, secret, projected, downwardapi collectData): relative path → content,
 * mode, owner, from the cached API objects and the pod. Their plugins (plugins/api-data.ts)
 * write them with the atomic writer and refresh them on every pod sync, so that an edit of an
 * object or of the pod's labels reaches the mounted files.
 *
 *  - items select keys and give them paths (and modes); without items every key is a file;
 *  - modes and owners as volume-payload.ts says (defaultMode 0644, items[].mode, fsGroup,
 *    the token's 0600);
 *  - a missing object, or a missing key named in items, is an error unless `optional`;
 *  - projected merges configMap, secret, downwardAPI and serviceAccountToken sources;
 *  - a downwardAPI volume holds one file per item: `fieldRef` (metadata.name, namespace, uid,
 *    labels, annotations, or one label / annotation) or `resourceFieldRef` (containerName
 *    required), with the item's mode or the volume's defaultMode (0644).
 */
import { podNamespace } from '../api/pod.js';
import type { Pod } from '../api/types.js';
import type { V1KeyToPath, V1VolumeProjection } from '@kubernetes/client-node';
import {
  EnvError,
  fieldRefValue,
  isSubscriptedFieldPath,
  resourceFieldRefValue,
  type FieldPathContext,
  type NodeAllocatable,
  type ResourceFieldSelector,
} from '../fieldpath/index.js';
import type { PodObjectSource } from './types.js';
import {
  DEFAULT_FILE_MODE,
  fileMode,
  payloadPathProblem,
  tokenFile,
  type PayloadFile,
  type VolumeOwnership,
} from './volume-payload.js';

/** What the payloads read besides the pod: the downward API's context and the API objects. */
export interface ApiDataContext extends FieldPathContext {
  /** ConfigMaps, Secrets and tokens (API server mode); without it those sources are EnvErrors. */
  objects?: PodObjectSource | undefined;
}

/**
 * What a payload builder reads besides its volume source: the pod, the downward API's context
 * and the API objects, the node's allocatable (resourceFieldRef items) and the pod's fsUser /
 * fsGroup (the projected token's mode and owner; none when absent). One per volume set-up.
 */
export interface PayloadContext extends ApiDataContext {
  pod: Pod;
  allocatable: NodeAllocatable;
  own?: VolumeOwnership | undefined;
}

/** What configMap and secret payloads read: the pod's namespace and the API objects. */
export type ObjectPayloadContext = Pick<PayloadContext, 'pod' | 'objects'>;

/**
 * How a configMap or secret source's keys become files: the mode of a file without its own
 * (the volume's defaultMode, or a projected volume's), and the name of the items list in
 * messages (`items`, `sources[1].secret.items`).
 */
export interface ItemDefaults {
  mode: number;
  field: string;
}

/** Default expiry of projected serviceAccountToken sources (upstream: 1 h). */
const DEFAULT_TOKEN_SECONDS = 3600;

function checkPath(path: string, field: string): void {
  const problem = payloadPathProblem(path);
  if (problem) throw new EnvError(`${field}: ${JSON.stringify(path)} ${problem}`);
}

interface KeySource {
  name: string;
  items?: V1KeyToPath[];
  optional?: boolean;
}

/** Key/value data of a configMap or secret (secret values and binaryData decoded to bytes); undefined = absent and optional. */
function sourceData(
  pc: ObjectPayloadContext,
  kind: 'configMap' | 'secret',
  src: KeySource,
): Record<string, string | Buffer> | undefined {
  const { name } = src;
  if (!pc.objects) throw new EnvError(`${kind} "${name}": ${kind} volumes need API server mode (--kubeconfig)`);
  const ns = podNamespace(pc.pod);
  const obj = kind === 'configMap' ? pc.objects.configMap(ns, name) : pc.objects.secret(ns, name);
  if (obj === undefined) throw new EnvError(`${kind} "${name}" is not synced yet`);
  if (obj === null) {
    if (src.optional) return undefined;
    throw new EnvError(`${kind} "${name}" not found`);
  }
  const bytes = (m: Record<string, string> | undefined) =>
    Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const);
  if (kind === 'secret') return Object.fromEntries(bytes(obj.data));
  const cm = obj as { data?: Record<string, string>; binaryData?: Record<string, string> };
  return { ...cm.data, ...Object.fromEntries(bytes(cm.binaryData)) };
}

function keyPayload(
  kind: string,
  src: KeySource,
  data: Record<string, string | Buffer>,
  { mode, field }: ItemDefaults,
): Map<string, PayloadFile> {
  const out = new Map<string, PayloadFile>();
  if (!src.items || src.items.length === 0) {
    for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode });
    return out;
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
  return out;
}

function objectPayload(
  pc: ObjectPayloadContext,
  kind: 'configMap' | 'secret',
  src: KeySource,
  items: ItemDefaults,
): Map<string, PayloadFile> {
  const data = sourceData(pc, kind, src);
  return data ? keyPayload(kind, src, data, items) : new Map();
}

type ConfigMapSource = { name?: string; items?: V1KeyToPath[]; optional?: boolean; defaultMode?: number };
type SecretSource = {
  secretName?: string;
  name?: string;
  items?: V1KeyToPath[];
  optional?: boolean;
  defaultMode?: number;
};

/** The volume's own defaults: its defaultMode (0644 without), its `items`. */
const volumeItems = (src: { defaultMode?: number }): ItemDefaults => ({
  mode: fileMode(src.defaultMode, DEFAULT_FILE_MODE, 'defaultMode'),
  field: 'items',
});

/** `items`: a projected volume's mode and field; a configMap volume's own without. */
export function configMapPayload(
  pc: ObjectPayloadContext,
  src: ConfigMapSource,
  items = volumeItems(src),
): Map<string, PayloadFile> {
  return objectPayload(pc, 'configMap', { ...src, name: src.name ?? '' }, items);
}

/** `items`: a projected volume's mode and field; a secret volume's own without. */
export function secretPayload(
  pc: ObjectPayloadContext,
  src: SecretSource,
  items = volumeItems(src),
): Map<string, PayloadFile> {
  return objectPayload(pc, 'secret', { ...src, name: src.secretName ?? src.name ?? '' }, items);
}

/** `pc.own`: the pod's fsUser / fsGroup, which decide the token's mode and owner. */
export function projectedPayload(
  pc: PayloadContext,
  src: { sources?: V1VolumeProjection[]; defaultMode?: number },
): Map<string, PayloadFile> {
  const mode = fileMode(src.defaultMode, DEFAULT_FILE_MODE, 'defaultMode');
  const out = new Map<string, PayloadFile>();
  const add = (m: Map<string, PayloadFile>) => {
    for (const [k, v] of m) out.set(k, v);
  };
  for (const [i, s] of (src.sources ?? []).entries()) {
    if (s.configMap) add(configMapPayload(pc, s.configMap, { mode, field: `sources[${i}].configMap.items` }));
    else if (s.secret) add(secretPayload(pc, s.secret, { mode, field: `sources[${i}].secret.items` }));
    else if (s.downwardAPI)
      add(downwardAPIPayload(pc, { ...(s.downwardAPI as DownwardAPIVolumeSource), defaultMode: mode }));
    else if (s.serviceAccountToken) {
      checkPath(s.serviceAccountToken.path, `sources[${i}].serviceAccountToken.path`);
      if (!pc.objects) throw new EnvError('serviceAccountToken projections need API server mode (--kubeconfig)');
      const token = pc.objects.serviceAccountToken(
        pc.pod,
        s.serviceAccountToken.audience,
        s.serviceAccountToken.expirationSeconds ?? DEFAULT_TOKEN_SECONDS,
      );
      if (token === undefined) throw new EnvError('service account token is not issued yet');
      out.set(s.serviceAccountToken.path, tokenFile(token, mode, pc.own ?? {}));
    } else {
      throw new EnvError(`projected source ${Object.keys(s).join(',') || '(empty)'} is not supported`);
    }
  }
  return out;
}

/** Field paths a downwardAPI volume may read (upstream validation of DownwardAPIVolumeFile). */
const VOLUME_FIELD_PATHS = new Set([
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'metadata.labels',
  'metadata.annotations',
]);

export interface DownwardAPIVolumeItem {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

export interface DownwardAPIVolumeSource {
  items?: DownwardAPIVolumeItem[];
  defaultMode?: number;
}

/** upstream downwardapi CollectData: relative path → content and mode. Throws EnvError for a bad item. */
export function downwardAPIPayload(pc: PayloadContext, source: DownwardAPIVolumeSource): Map<string, PayloadFile> {
  const { pod } = pc;
  const defaultMode = fileMode(source.defaultMode, DEFAULT_FILE_MODE, 'defaultMode');
  const out = new Map<string, PayloadFile>();
  for (const [i, item] of (source.items ?? []).entries()) {
    const path = item.path;
    const problem = payloadPathProblem(path);
    if (problem) throw new EnvError(`downwardAPI item path ${JSON.stringify(path)} ${problem}`);
    let data: string;
    if (item.fieldRef) {
      const fp = item.fieldRef.fieldPath;
      if (!VOLUME_FIELD_PATHS.has(fp) && !isSubscriptedFieldPath(fp))
        throw new EnvError(`downwardAPI item ${path}: fieldRef ${fp} is not supported in volumes`);
      data = fieldRefValue(pod, fp, item.fieldRef.apiVersion, pc);
    } else if (item.resourceFieldRef) {
      data = resourceFieldRefValue(pod, undefined, item.resourceFieldRef, pc.allocatable);
    } else {
      throw new EnvError(`downwardAPI item ${path}: needs fieldRef or resourceFieldRef`);
    }
    out.set(path, { data, mode: fileMode(item.mode, defaultMode, `items[${i}].mode`) });
  }
  return out;
}
