/**
 * Hands freed malloc memory back to the kernel every few seconds (the addon's mallocTrim, glibc
 * malloc_trim). glibc keeps what bursts of allocations freed (V8 compiler zones, Buffer backing
 * stores) in its arenas: at 100 pods one trim took the agent from 118 to 89 MiB, and ~13 MiB
 * came back within 20 s, so once is not enough (docs/perf-log.md). Without the addon (or
 * with KUBELET_TS_NATIVE=0) nothing runs.
 */
import { addonFunction } from '../native/index.js';

export const MALLOC_TRIM_INTERVAL_MS = 5_000;

/** The addon's mallocTrim, or undefined (no addon, native disabled, or a binary without it). */
export function addonMallocTrim(): (() => boolean) | undefined {
  return addonFunction<() => boolean>('mallocTrim');
}

/** Calls `trim` every `intervalMs` (not keeping the process alive) until stop(). */
export function startMallocTrim(
  trim: (() => unknown) | undefined,
  intervalMs = MALLOC_TRIM_INTERVAL_MS,
): { stop(): void } {
  if (!trim) return { stop: () => undefined };
  const timer = setInterval(trim, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
