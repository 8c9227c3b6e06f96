/**
 * The downward API's resource values (upstream api/v1/resource ExtractContainerResourceValue and
 * the kubelet's defaultPodLimitsForDownwardAPI): `resourceFieldRef` reads a container's
 * limits.cpu / limits.memory / limits.ephemeral-storage / requests.* in units of `divisor`
 * (default 1), rounded up; a limit the container does not set is the node's allocatable amount,
 * a request left out next to a limit is that limit (the apiserver's defaulting). Env
 * (valueFrom.resourceFieldRef) and downwardAPI volume files both read them here.
 */
import type { Container, Pod } from '../api/types.js';
import { parseMilliValue } from '../util/quantity.js';
import { EnvError } from './fieldpath.js';

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
export function containerResourceValue(
  fs: ResourceFieldSelector,
  container: Container,
  allocatable: NodeAllocatable,
): string {
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
  const fallback: Record<string, number> = {
    cpu: allocatable.cpu,
    memory: allocatable.memory * 1000,
    'ephemeral-storage': (allocatable.ephemeralStorage ?? 0) * 1000,
  };
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(fs.resource);
  if (!m) throw new EnvError(`unsupported container resource : ${fs.resource}`);
  const kind = m[1] as 'limits' | 'requests';
  const name = m[2]!;
  let milli: number;
  try {
    const limit = milliOf(get('limits', name)) ?? fallback[name]!;
    milli = kind === 'limits' ? limit : (milliOf(get('requests', name)) ?? milliOf(get('limits', name)) ?? 0);
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
export function resourceFieldRefValue(
  pod: Pod,
  current: Container | undefined,
  fs: ResourceFieldSelector,
  allocatable: NodeAllocatable,
): string {
  let container = current;
  if (fs.containerName) {
    container = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
      (c) => c.name === fs.containerName,
    );
    if (!container)
      throw new EnvError(`resourceFieldRef ${fs.resource}: container ${fs.containerName} not found in the pod`);
  }
  if (!container) throw new EnvError(`resourceFieldRef ${fs.resource}: containerName is required`);
  return containerResourceValue(fs, container, allocatable);
}
