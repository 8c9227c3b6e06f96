/**
 * Node allocatable arithmetic (upstream cm/node_container_manager_linux.go): what the scheduler
 * may place on the node, and what the kubepods cgroup is limited to. Resource lists are in base
 * units: cpu in milli-CPU, memory / ephemeral-storage / hugepages-* in bytes, pid in processes.
 *
 *  - reservation for scheduling (GetNodeAllocatableReservation): systemReserved + kubeReserved +
 *    the hard eviction thresholds memory.available (memory) and nodefs.available (ephemeral-storage);
 *  - allocatable for scheduling (the node status): capacity − that reservation;
 *  - absolute allocatable (GetNodeAllocatableAbsolute): capacity − systemReserved − kubeReserved,
 *    never below zero: no eviction threshold, so pods are evicted before the kernel's OOM killer
 *    acts on kubepods.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { tryParseQuantity } from '../util/quantity.js';

export type ResourceList = Readonly<Record<string, number>>;

export interface NodeAllocatableConfig {
  /** The node's capacity (with `pid` for the internal capacity). */
  capacity: ResourceList;
  systemReserved?: ResourceList;
  kubeReserved?: ResourceList;
  /** evictionHard as configured (signal → "100Mi" or "10%"). */
  evictionHard?: Readonly<Record<string, string>>;
}

/** A reservation map of the config (resource → quantity string) in base units. */
export function resourceList(map: Readonly<Record<string, string>> | undefined): ResourceList {
  const out: Record<string, number> = {};
  for (const [k, raw] of Object.entries(map ?? {})) {
    const v = tryParseQuantity(raw) ?? 0;
    out[k] = k === 'cpu' ? Math.ceil(v * 1000) : Math.ceil(v);
  }
  return out;
}

/**
 * upstream GetThresholdQuantity: a quantity, or a percentage of capacity computed as upstream
 * does it, through a float32 (parsePercentage), so 5% of 10Gi is 536870920 there and here.
 */
export function thresholdQuantity(threshold: string, capacity: number): number {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(threshold);
  if (pct) return Math.trunc(capacity * Math.fround(Math.fround(Number(pct[1])) / 100));
  return Math.ceil(tryParseQuantity(threshold) ?? 0);
}

/** upstream hardEvictionReservation: memory.available → memory, nodefs.available → ephemeral-storage. */
export function hardEvictionReservation(
  evictionHard: Readonly<Record<string, string>> | undefined,
  capacity: ResourceList,
): ResourceList {
  const out: Record<string, number> = {};
  const signals: Record<string, string> = { 'memory.available': 'memory', 'nodefs.available': 'ephemeral-storage' };
  for (const [signal, resource] of Object.entries(signals)) {
    const t = evictionHard?.[signal];
    if (t !== undefined) out[resource] = thresholdQuantity(t, capacity[resource] ?? 0);
  }
  return out;
}

function addLists(...lists: (ResourceList | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lists) for (const [k, v] of Object.entries(l ?? {})) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** upstream GetNodeAllocatableReservation: what scheduling must leave free of each resource. */
export function allocatableReservation(cfg: NodeAllocatableConfig): ResourceList {
  return addLists(cfg.systemReserved, cfg.kubeReserved, hardEvictionReservation(cfg.evictionHard, cfg.capacity));
}

/** Capacity minus a reservation, per resource of the capacity, never below zero. */
function subtract(capacity: ResourceList, reserved: ResourceList): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(capacity)) out[k] = Math.max(0, v - (reserved[k] ?? 0));
  return out;
}

/** The node status's allocatable (upstream setters.go MachineInfo): capacity − reservation for scheduling. */
export function allocatableForScheduling(cfg: NodeAllocatableConfig): ResourceList {
  return subtract(cfg.capacity, allocatableReservation(cfg));
}

/** upstream getNodeAllocatableAbsoluteImpl: capacity − systemReserved − kubeReserved. */
export function allocatableAbsolute(cfg: NodeAllocatableConfig): ResourceList {
  return subtract(cfg.capacity, addLists(cfg.systemReserved, cfg.kubeReserved));
}

/** upstream validateNodeAllocatable: a reservation larger than the capacity is an error (one line each). */
export function nodeAllocatableProblems(cfg: NodeAllocatableConfig): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(allocatableReservation(cfg))) {
    const cap = cfg.capacity[k] ?? 0;
    if (cap - v < 0)
      out.push(`resource "${k}" has a reservation of ${v} but a capacity of ${cap}: expected capacity >= reservation`);
  }
  return out;
}

/** upstream pidlimit.Stats MaxPID: the smaller of kernel.pid_max and kernel.threads-max. */
export function hostMaxPID(procSys = '/proc/sys/kernel'): number | undefined {
  const read = (f: string) => Number(readFileSync(`${procSys}/${f}`, 'utf8').trim());
  try {
    const values = ['pid_max', 'threads-max'].map(read).filter((n) => Number.isFinite(n) && n > 0);
    return values.length > 0 ? Math.min(...values) : undefined;
  } catch {
    return undefined;
  }
}

/** The ephemeral-storage capacity: the size of the filesystem holding dir (cAdvisor's rootfs); 0 when unknown. */
export function fsCapacity(dir: string): number {
  try {
    const s = statfsSync(dir);
    return Number(s.blocks) * Number(s.bsize);
  } catch {
    return 0;
  }
}
