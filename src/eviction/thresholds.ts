/**
 * Thresholds from the configuration (evictionHard, evictionSoft + evictionSoftGracePeriod) and
 * the signals observed in a stats pass (upstream eviction/helpers.go makeSignalObservations).
 */
import { parseDuration } from '../util/duration.js';
import type { StatsSnapshot } from '../stats/types.js';
import { tryParseQuantity } from '../util/quantity.js';
import type { NodeConditionType, Observation, Signal, Threshold } from './types.js';

const SIGNALS: readonly Signal[] = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
];

function parseValue(v: string): Pick<Threshold, 'quantity' | 'percentage'> | undefined {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(v);
  if (pct) return { percentage: Number(pct[1]) / 100 };
  const q = tryParseQuantity(v);
  return q === undefined ? undefined : { quantity: BigInt(Math.ceil(q)) };
}

/** Signals we do not observe (allocatableMemory, containerfs) are skipped; config validated the rest. */
export function parseThresholds(
  hard: Readonly<Record<string, string>>,
  soft: Readonly<Record<string, string>>,
  softGrace: Readonly<Record<string, string>>,
): Threshold[] {
  const out: Threshold[] = [];
  for (const [map, isHard] of [
    [hard, true],
    [soft, false],
  ] as const) {
    for (const [signal, value] of Object.entries(map)) {
      if (!SIGNALS.includes(signal as Signal)) continue;
      const v = parseValue(value);
      if (!v) continue;
      // upstream ignores 0% and 100% (the way to turn a default threshold off: 100% would always
      // be met and evict every pod). A 0 quantity, which upstream refuses, is taken the same way.
      if ((v.quantity === 0n && v.percentage === undefined) || v.percentage === 0 || v.percentage === 1) continue;
      out.push({
        signal: signal as Signal,
        ...v,
        hard: isHard,
        gracePeriodMs: isHard ? 0 : (parseDuration(softGrace[signal] ?? '0') ?? 0),
      });
    }
  }
  return out;
}

/** Bytes / inodes / pids that must stay available for a threshold. */
export function thresholdAmount(t: Threshold, capacity: bigint): bigint {
  if (t.quantity !== undefined) return t.quantity;
  return BigInt(Math.ceil(Number(capacity) * (t.percentage ?? 0)));
}

export function observe(s: StatsSnapshot, memoryCapacity: bigint): Map<Signal, Observation> {
  const out = new Map<Signal, Observation>();
  const n = s.node;
  if (n.memory.availableBytes !== undefined)
    out.set('memory.available', { available: n.memory.availableBytes, capacity: memoryCapacity });
  if (n.fs?.availableBytes !== undefined && n.fs.capacityBytes !== undefined)
    out.set('nodefs.available', { available: n.fs.availableBytes, capacity: n.fs.capacityBytes });
  if (n.fs?.inodesFree !== undefined && n.fs.inodes !== undefined)
    out.set('nodefs.inodesFree', { available: n.fs.inodesFree, capacity: n.fs.inodes });
  if (n.imageFs?.availableBytes !== undefined && n.imageFs.capacityBytes !== undefined)
    out.set('imagefs.available', { available: n.imageFs.availableBytes, capacity: n.imageFs.capacityBytes });
  if (n.imageFs?.inodesFree !== undefined && n.imageFs.inodes !== undefined)
    out.set('imagefs.inodesFree', { available: n.imageFs.inodesFree, capacity: n.imageFs.inodes });
  if (n.maxPid !== undefined && n.curProc !== undefined)
    out.set('pid.available', { available: n.maxPid > n.curProc ? n.maxPid - n.curProc : 0n, capacity: n.maxPid });
  return out;
}

export const SIGNAL_CONDITION = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
} as const;

/** The resource a signal reclaims, as upstream names it in the eviction message. */
export const SIGNAL_RESOURCE = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
} as const;

/** Quantity in upstream's short binary form for messages (100Mi, 1536Ki, 12345). */
export function formatQuantity(v: bigint, signal: Signal): string {
  if (signal.endsWith('inodesFree') || signal === 'pid.available') return v.toString();
  for (const [unit, size] of [
    ['Gi', 1n << 30n],
    ['Mi', 1n << 20n],
    ['Ki', 1n << 10n],
  ] as const) {
    if (v >= size && v % size === 0n) return `${v / size}${unit}`;
  }
  return v >= 1n << 10n ? `${v / (1n << 10n)}Ki` : v.toString();
}

/** upstream thresholdsMet: the thresholds whose signal is observed below the amount they keep available. */
export function thresholdsMet(
  thresholds: readonly Threshold[],
  observations: ReadonlyMap<Signal, Observation>,
): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations.get(t.signal);
    return o !== undefined && o.available < thresholdAmount(t, o.capacity);
  });
}

/** upstream thresholdsFirstObservedAt: when each met threshold was first seen met (kept while it stays met). */
export function thresholdsFirstObservedAt(
  met: readonly Threshold[],
  last: ReadonlyMap<Threshold, number>,
  now: number,
): Map<Threshold, number> {
  return new Map(met.map((t) => [t, last.get(t) ?? now]));
}

/** upstream thresholdsMetGracePeriod: the thresholds met for at least their grace period (0 for hard ones). */
export function thresholdsMetGracePeriod(observedAt: ReadonlyMap<Threshold, number>, now: number): Threshold[] {
  return [...observedAt].filter(([t, at]) => now - at >= t.gracePeriodMs).map(([t]) => t);
}

/** upstream nodeConditions: the pressure conditions of the met thresholds, each once. */
export function nodeConditions(met: readonly Threshold[]): NodeConditionType[] {
  return [...new Set(met.map((t) => SIGNAL_CONDITION[t.signal]))];
}

/** upstream nodeConditionsLastObservedAt: now for the conditions observed, the earlier time for the others. */
export function nodeConditionsLastObservedAt(
  observed: readonly NodeConditionType[],
  last: ReadonlyMap<NodeConditionType, number>,
  now: number,
): Map<NodeConditionType, number> {
  const out = new Map(last);
  for (const c of observed) out.set(c, now);
  return out;
}

/** upstream nodeConditionsObservedSince: the conditions last observed less than `periodMs` ago. */
export function nodeConditionsObservedSince(
  observedAt: ReadonlyMap<NodeConditionType, number>,
  periodMs: number,
  now: number,
): NodeConditionType[] {
  return [...observedAt].filter(([, at]) => now - at < periodMs).map(([c]) => c);
}

/**
 * upstream byEvictionPriority: memory thresholds are acted on first (a node out of memory fails
 * faster than one out of disk); then, ours, hard before soft; otherwise the configured order.
 */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const rank = (t: Threshold) => (t.signal === 'memory.available' ? 0 : 2) + (t.hard ? 0 : 1);
  return [...thresholds].sort((a, b) => rank(a) - rank(b));
}
