/**
 * The extended resources the node reports and admits against, from the device manager's
 * capacity (upstream: the MachineInfo node status setter calls GetCapacity each pass). A
 * resource whose plugin's grace period ended is reported as 0 from then on ("managed by device
 * plugin and registered before"), upstream keeps that in the Node object; here it is kept in
 * memory so standalone admission and status see it too. Every caller (node status, admission)
 * refreshes through here, so the one-shot `removed` list of getCapacity is never lost.
 */
import type { DeviceManager } from './types.js';

export interface ExtendedResourceCounts {
  /** resource → devices (healthy + unhealthy); removed resources are 0. */
  capacity: Record<string, number>;
  /** resource → healthy devices; removed resources are 0. */
  allocatable: Record<string, number>;
}

export class ExtendedResources {
  private readonly removed = new Set<string>();
  /** The counts last read (none at first), to tell a change. */
  private last = '[[],[]]';
  private readonly listeners: Array<(counts: ExtendedResourceCounts) => void> = [];

  constructor(private readonly dm: Pick<DeviceManager, 'getCapacity'>) {}

  /** Reads the device manager now; tells the listeners when the counts changed since the last read. */
  refresh(): ExtendedResourceCounts {
    const { capacity, allocatable, removed } = this.dm.getCapacity();
    for (const r of removed) this.removed.add(r);
    for (const r of Object.keys(capacity)) this.removed.delete(r);
    for (const r of this.removed) capacity[r] = allocatable[r] = 0;
    const counts = { capacity, allocatable };
    const key = JSON.stringify([sorted(capacity), sorted(allocatable)]);
    if (key !== this.last) {
      this.last = key;
      for (const l of this.listeners) l(counts);
    }
    return counts;
  }

  /** Called when a refresh sees counts different from the last read. */
  onChange(listener: (counts: ExtendedResourceCounts) => void): void {
    this.listeners.push(listener);
  }
}

const sorted = (r: Record<string, number>) => Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
