/**
 * Whether the agent's JavaScript may be compiled by V8's optimizing tiers (Maglev, TurboFan).
 *
 * With the addon, every hot path is C++ and what runs in JavaScript is glue: many functions,
 * each warm for a moment (a pod's sync, a watch event, a CRI reply). TurboFan compiles them all
 * the same, on its worker thread, with zone memory in malloc, and keeps the code. Stopping at the
 * baseline tier (Sparkplug) measured, API server mode at 100 pods, two paired runs each: RSS
 * 90 → 84–85 MiB, the delete peak 103–106 → 93–94 MiB, CPU 0.041 → 0.034 cores, and a 100-pod
 * burst took 1.1 CPU-seconds less (docs/perf-log.md, issue 30). The TypeScript twins are the
 * opposite: tight loops over bytes, 9× slower without TurboFan (the relist differ, bench
 * pleg-diff), so a host that runs any twin keeps every tier.
 *
 * V8 reads the flag at each tier-up decision, so setting it after start-up works (unlike the heap
 * sizes the launcher passes). An operator's own --max-opt (in the command or NODE_OPTIONS) wins.
 */
import { setFlagsFromString } from 'node:v8';
import type { Implementation } from '../native/index.js';
import { nativeStatus } from './hot-paths.js';

/** V8's --max-opt value for "ignition and sparkplug only". */
const BASELINE_TIER = 1;

function operatorChose(execArgv: readonly string[], nodeOptions: string): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => /^--max[-_]opt(=|$)/.test(a));
}

/** The --max-opt the agent should run with, or undefined to leave V8's default. */
export function maxOptFor(
  impls: readonly Implementation[],
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env['NODE_OPTIONS'] ?? '',
): number | undefined {
  if (operatorChose(execArgv, nodeOptions)) return undefined;
  return impls.length > 0 && impls.every((i) => i === 'native') ? BASELINE_TIER : undefined;
}

let applied: number | undefined;

/**
 * Applies maxOptFor to this process, from the launcher (bin/kubelet-ts.js) before the agent's
 * modules load: set later, V8 has already optimized their start-up code (the compiler's own
 * pages then sit in RSS: 3.4 MiB more in one run). Returns what it set.
 */
export function limitOptimizingTiers(): number | undefined {
  applied = maxOptFor(Object.values(nativeStatus()));
  if (applied !== undefined) setFlagsFromString(`--max-opt=${applied}`);
  return applied;
}

/** What limitOptimizingTiers set in this process (undefined: V8's default, or it did not run). */
export function optimizingTierLimit(): number | undefined {
  return applied;
}
