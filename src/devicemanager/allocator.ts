/**
 * Which devices a container gets of one resource (upstream ManagerImpl.devicesToAllocate),
 * without topology: devices it already holds, then reusable ones (from init containers), then the
 * plugin's preferred choice among the available, then any available device. Pure: the manager's
 * state comes in as sets and GetPreferredAllocation as a function. Errors carry upstream's text.
 */
import { DeviceAllocationError } from '../errors.js';

/** What devicesToAllocate reads for one (pod, container, resource). */
export interface AllocationInput {
  podUid: string;
  containerName: string;
  resource: string;
  /** The container's limit for the resource. */
  required: number;
  /** Devices the container already holds of it (upstream containerDevices; undefined: none recorded). */
  held: ReadonlySet<string> | undefined;
  /** The healthy devices; undefined when the resource is not registered. */
  healthy: ReadonlySet<string> | undefined;
  /** Devices allocated to any container (upstream allocatedDevices[resource]). */
  inUse: ReadonlySet<string>;
  /** Devices of this pod's finished init containers, to give first. */
  reusable: ReadonlySet<string>;
  /** The agent found this container running at start (initial CRI snapshot). */
  runningAtStart: boolean;
  /** Every pod source has been seen once. */
  sourcesReady: boolean;
}

/** GetPreferredAllocation, when the plugin advertises it; undefined when it does not. */
export type PreferredAllocation = (available: string[], mustInclude: string[], size: number) => Promise<string[]>;

const collator = new Intl.Collator('en', { numeric: true });
/** Devices in a stable order (upstream: Go set order, i.e. random): dev2 before dev10. */
export const sortIds = (ids: Iterable<string>): string[] => [...ids].sort(collator.compare);

/**
 * Our restart rule (upstream issue #133382): a container found running at start keeps what the
 * checkpoint says it holds, whether or not the sources are ready; upstream only skips while
 * sources are not ready. Before sources are ready we also skip as upstream does.
 */
export function keepsRunningContainer(input: AllocationInput): boolean {
  return input.runningAtStart && (input.held !== undefined || !input.sourcesReady);
}

/**
 * The devices to send to Allocate; undefined when nothing is to be allocated (the container holds
 * its devices already, or was found running at start).
 */
export async function devicesToAllocate(
  input: AllocationInput,
  preferred: PreferredAllocation | undefined,
): Promise<Set<string> | undefined> {
  const { podUid, containerName, resource, required, held } = input;
  let needed = required;
  if (held !== undefined) {
    needed -= held.size;
    if (needed !== 0)
      throw new DeviceAllocationError(
        `pod ${JSON.stringify(podUid)} container ${JSON.stringify(containerName)} changed request for resource ` +
          `${JSON.stringify(resource)} from ${held.size} to ${required}`,
      );
  }
  if (keepsRunningContainer(input)) return undefined;
  const healthy = input.healthy;
  if (healthy === undefined) throw new DeviceAllocationError(`cannot allocate unregistered device ${resource}`);
  if (healthy.size === 0)
    throw new DeviceAllocationError(`no healthy devices present; cannot allocate unhealthy devices ${resource}`);
  if (held && [...held].some((id) => !healthy.has(id)))
    throw new DeviceAllocationError(
      `previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${resource}`,
    );
  if (needed === 0) return undefined;
  return choose(input, needed, preferred);
}

async function choose(
  input: AllocationInput,
  needed: number,
  preferred: PreferredAllocation | undefined,
): Promise<Set<string>> {
  const allocated = new Set<string>();
  const takeFrom = (ids: Iterable<string>): boolean => {
    for (const id of sortIds(ids)) {
      if (allocated.has(id)) continue;
      allocated.add(id);
      if (--needed === 0) return true;
    }
    return false;
  };
  if (takeFrom(input.reusable)) return allocated;
  const available = new Set([...input.healthy!].filter((id) => !input.inUse.has(id)));
  if (available.size < needed)
    throw new DeviceAllocationError(
      `requested number of devices unavailable for ${input.resource}. Requested: ${needed}, Available: ${available.size}`,
    );
  // No topology: upstream's aligned and unaligned sets are empty, every device is "no affinity".
  if (preferred) {
    const offer = sortIds(new Set([...available, ...allocated]));
    const chosen = await preferred(offer, sortIds(allocated), input.required);
    if (takeFrom(chosen.filter((id) => available.has(id)))) return allocated;
  }
  if (takeFrom(available)) return allocated;
  throw new DeviceAllocationError(
    `unexpectedly allocated less resources than required. Requested: ${input.required}, Got: ${input.required - needed}`,
  );
}
