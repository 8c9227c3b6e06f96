/**
 * The machine's idle share from /proc/stat, for benches that measure one process among others:
 * a relist tail measured while containerd still tears down the previous part's pods says more
 * about the machine than about the agent (issue 30's 250-pod rows). Load average is a minute's
 * moving average and lags a burst by minutes; the idle share over the last seconds does not.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface CpuTimes {
  idle: number;
  total: number;
}

/** The aggregate "cpu" line: idle + iowait against all the jiffies. */
export function cpuTimes(): CpuTimes {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  return { idle: (t[3] ?? 0) + (t[4] ?? 0), total: t.reduce((a, b) => a + b, 0) };
}

/** Share of the machine's CPU time that was idle between two readings (0..1). */
export function idleShare(a: CpuTimes, b: CpuTimes): number {
  const total = b.total - a.total;
  return total > 0 ? Math.round(((b.idle - a.idle) / total) * 1000) / 1000 : 1;
}

/**
 * Waits until the machine was at least `minIdle` idle over a `sampleMs` interval, at most
 * `maxWaitMs`; returns the last interval's idle share and how long it waited.
 */
export async function untilQuiet(
  opts: { minIdle?: number; sampleMs?: number; maxWaitMs?: number } = {},
): Promise<{ idle: number; waited_ms: number }> {
  const { minIdle = 0.85, sampleMs = 2000, maxWaitMs = 60_000 } = opts;
  const start = performance.now();
  for (;;) {
    const a = cpuTimes();
    await sleep(sampleMs);
    const idle = idleShare(a, cpuTimes());
    const waited = performance.now() - start;
    if (idle >= minIdle || waited >= maxWaitMs) return { idle, waited_ms: Math.round(waited) };
  }
}
