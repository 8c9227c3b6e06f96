/**
 * The downward API's resource values and volume files (upstream api/v1/resource
 * ExtractContainerResourceValue, kubelet defaultPodLimitsForDownwardAPI, volume/downwardapi
 * CollectData):
 *
 *  - `resourceFieldRef` reads a container's limits.cpu / limits.memory /
 *    limits.ephemeral-storage / requests.* in units of `divisor` (default 1), rounded up; a limit
 *    the container does not set is the node's allocatable amount, a request left out next to a
 *    limit is that limit (the apiserver's defaulting);
 *  - a downwardAPI volume holds one file per item: `fieldRef` (metadata.name, namespace, uid,
 *    labels, annotations, or one label / annotation) or `resourceFieldRef` (containerName
 *    required), with the item's mode or the volume's defaultMode (0644).
 */
import type { Container, Pod } from '../api/types.js';
import { parseMilliValue, parseQuantity } from '../util/quantity.js';
import { EnvError, fieldRefValue, type EnvContext } from './env.js';
import { DEFAULT_FILE_MODE, fileMode, payloadPathProblem, type PayloadFile } from './volume-payload.js';

/** What a missing limit stands for. */
export interface NodeAllocatable {
  /** milli-CPU. */
  cpu: number;
  /** bytes. */
  memory: number;
  /** bytes; 0 when unknown. */
  ephemeralStorage?: number;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string | number;
}

function milliOf(v: string | number | undefined): number | undefined {
  return v === undefined || v === null ? undefined : parseMilliValue(v);
}

/**
 * upstream ExtractContainerResourceValue on the container with its limits defaulted to the
 * node's allocatable. Throws EnvError for a resource it does not know.
 */
export function containerResourceValue(fs: ResourceFieldSelector, container: Container, allocatable: NodeAllocatable): string {
  let divisorMilli: number;
  try {
    divisorMilli = fs.divisor === undefined || fs.divisor === '' ? 1000 : parseMilliValue(fs.divisor);
  } catch (err) {
    throw new EnvError(`resourceFieldRef ${fs.resource}: divisor: ${(err as Error).message}`);
  }
  if (divisorMilli <= 0) divisorMilli = 1000;
  const res = container.resources ?? {};
  const get = (kind: 'limits' | 'requests', name: string): string | number | undefined => {
    const v = (res[kind] as Record<string, string | number> | undefined)?.[name];
    return v === undefined || v === null ? undefined : v;
  };
  const fallback: Record<string, number> = { cpu: allocatable.cpu, memory: allocatable.memory * 1000, 'ephemeral-storage': (allocatable.ephemeralStorage ?? 0) * 1000 };
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(fs.resource);
  if (!m) throw new EnvError(`unsupported container resource : ${fs.resource}`);
  const kind = m[1] as 'limits' | 'requests';
  const name = m[2]!;
  let milli: number;
  try {
    const limit = milliOf(get('limits', name)) ?? fallback[name]!;
    milli = kind === 'limits' ? limit : milliOf(get('requests', name)) ?? milliOf(get('limits', name)) ?? 0;
  } catch (err) {
    throw new EnvError(`container ${container.name}: resources.${kind}.${name}: ${(err as Error).message}`);
  }
  if (name === 'cpu') return String(Math.ceil(milli / divisorMilli));
  // Memory and storage divide whole values (Quantity.Value()), like upstream.
  const value = Math.ceil(milli / 1000);
  const divisor = Math.ceil(divisorMilli / 1000);
  return String(Math.ceil(value / divisor));
}

/** upstream ExtractResourceValueByContainerName: the named container among init and regular ones. */
export function resourceFieldRefValue(pod: Pod, current: Container | undefined, fs: ResourceFieldSelector, allocatable: NodeAllocatable): string {
  let container = current;
  if (fs.containerName) {
    container = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((c) => c.name === fs.containerName);
    if (!container) throw new EnvError(`resourceFieldRef ${fs.resource}: container ${fs.containerName} not found in the pod`);
  }
  if (!container) throw new EnvError(`resourceFieldRef ${fs.resource}: containerName is required`);
  return containerResourceValue(fs, container, allocatable);
}

/** Field paths a downwardAPI volume may read (upstream validation of DownwardAPIVolumeFile). */
const VOLUME_FIELD_PATHS = new Set(['metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.labels', 'metadata.annotations']);
const SUBSCRIPT_RE = /^metadata\.(labels|annotations)\['(.*)'\]$/;

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
export function downwardAPIPayload(pod: Pod, source: DownwardAPIVolumeSource, ctx: EnvContext, allocatable: NodeAllocatable): Map<string, PayloadFile> {
  const defaultMode = fileMode(source.defaultMode, DEFAULT_FILE_MODE, 'defaultMode');
  const out = new Map<string, PayloadFile>();
  for (const [i, item] of (source.items ?? []).entries()) {
    const path = item.path;
    const problem = payloadPathProblem(path);
    if (problem) throw new EnvError(`downwardAPI item path ${JSON.stringify(path)} ${problem}`);
    let data: string;
    if (item.fieldRef) {
      const fp = item.fieldRef.fieldPath;
      if (!VOLUME_FIELD_PATHS.has(fp) && !SUBSCRIPT_RE.test(fp)) throw new EnvError(`downwardAPI item ${path}: fieldRef ${fp} is not supported in volumes`);
      data = fieldRefValue(pod, fp, item.fieldRef.apiVersion, ctx);
    } else if (item.resourceFieldRef) {
      data = resourceFieldRefValue(pod, undefined, item.resourceFieldRef, allocatable);
    } else {
      throw new EnvError(`downwardAPI item ${path}: needs fieldRef or resourceFieldRef`);
    }
    out.set(path, { data, mode: fileMode(item.mode, defaultMode, `items[${i}].mode`) });
  }
  return out;
}

/** Parses a quantity that must be positive (sizeLimit); undefined when absent. */
export function positiveQuantity(v: string | number | undefined): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Math.ceil(parseQuantity(v));
  return n > 0 ? n : undefined;
}
