/**
 * Bench parts (a) and (e) of issue 4: decode + diff per relist at 100 / 1,000 / 10,000 / 50,000
 * containers (quick: up to 10,000) with 1 % churn per relist.
 *   native        the addon's RelistDiffer (skim decode + diff in C++, retained state in C++)
 *   ts            the TypeScript twin (skim decode over the Buffer + diff in TS)
 *   conventional  protobufjs decoding into JS objects (as @grpc/grpc-js does for the CRI client),
 *                 then a TS diff over those objects (bench/fixtures/relist-conventional.ts)
 * All three get the same bytes: a few node states S0..S3, each 1 % churn (exits, restarts as new
 * containers, removals) from the previous, replayed back and forth so every relist has ~1 %
 * changes. Time per relist is measured around diff() only, on the reply bytes just copied into a
 * receive buffer (as the CRI client's raw path hands over a Buffer just assembled from the HTTP/2
 * frames: in the cache, as a real reply would be). Each implementation is warmed up first.
 */
import { performance } from 'node:perf_hooks';
import { implementations } from '../src/cmd/hot-paths.js';
import type { RelistDiffer } from '../src/pleg/relist-types.js';
import { createConventionalDiffer } from './fixtures/relist-conventional.js';
import { benchRelists, STATES } from './pleg-replies.js';
import { nearestRank } from './stats.js';

export interface DiffBenchRow {
  containers: number;
  native_median_ms: number | null;
  native_p99_ms: number | null;
  ts_median_ms: number;
  ts_p99_ms: number;
  conventional_median_ms: number | null;
  conventional_p99_ms: number | null;
  /** Sandboxes in the replies (4 containers per pod). */
  sandboxes: number;
  /** Bytes of the ListContainersResponse. */
  reply_bytes: number;
  /** Mean events per relist. */
  events_per_relist: number;
  iterations: { native: number; ts: number; conventional: number };
}

export interface DiffBenchResult {
  diff: DiffBenchRow[];
  /** Why the native columns are null, when they are. */
  reason?: string;
}

interface Size {
  containers: number;
  iterations: number;
  /** Per implementation: stop early after this much measuring. */
  budgetMs: number;
}

function sizes(quick: boolean): Size[] {
  return quick
    ? [
        { containers: 100, iterations: 400, budgetMs: 1500 },
        { containers: 1_000, iterations: 200, budgetMs: 1500 },
        { containers: 10_000, iterations: 40, budgetMs: 2500 },
      ]
    : [
        { containers: 100, iterations: 3000, budgetMs: 8000 },
        { containers: 1_000, iterations: 1500, budgetMs: 8000 },
        { containers: 10_000, iterations: 400, budgetMs: 15000 },
        { containers: 50_000, iterations: 120, budgetMs: 30000 },
      ];
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/** 0, 1, 2, 3, 2, 1, 0, 1, ...: every step is one churn step away from the last. */
function pingPong(i: number): number {
  const period = 2 * (STATES - 1);
  const k = i % period;
  return k < STATES ? k : period - k;
}

function measure(
  d: RelistDiffer,
  relists: Array<{ sb: Buffer; ct: Buffer }>,
  size: Size,
): { median: number; p99: number; n: number; events: number } {
  d.diff(relists[0]!.sb, relists[0]!.ct); // the first relist: everything is new
  let step = 1;
  const warmup = Math.max(5, Math.min(200, Math.floor(size.iterations / 5)));
  for (let i = 0; i < warmup; i++, step++) {
    const r = relists[pingPong(step)]!;
    d.diff(r.sb, r.ct);
  }
  const recv = {
    sb: Buffer.alloc(Math.max(...relists.map((r) => r.sb.length))),
    ct: Buffer.alloc(Math.max(...relists.map((r) => r.ct.length))),
  };
  const times: number[] = [];
  let events = 0;
  const deadline = performance.now() + size.budgetMs;
  for (let i = 0; i < size.iterations; i++, step++) {
    const r = relists[pingPong(step)]!;
    // "Received": copied into a receive buffer, as the CRI client hands over a Buffer just
    // assembled from the reply. Reused, so that the bench's own copies add no GC work.
    const sb = recv.sb.subarray(0, r.sb.copy(recv.sb));
    const ct = recv.ct.subarray(0, r.ct.copy(recv.ct));
    const t0 = performance.now();
    const out = d.diff(sb, ct);
    times.push(performance.now() - t0);
    events += out.events.length;
    if (i >= 20 && performance.now() > deadline) break;
  }
  d.close();
  times.sort((a, b) => a - b);
  return {
    median: round(nearestRank(times, 0.5)),
    p99: round(nearestRank(times, 0.99)),
    n: times.length,
    events: events / Math.max(1, times.length),
  };
}

export async function runDiffBench(opts: { quick: boolean }): Promise<DiffBenchResult> {
  const impls = implementations('pleg');
  const native = impls.find((i) => i.name === 'native');
  const ts = impls.find((i) => i.name === 'ts')!;
  const result: DiffBenchResult = { diff: [] };
  if (!native) result.reason = 'native addon not built (npm run build:native)';
  for (const size of sizes(opts.quick)) {
    const { relists, sandboxes } = benchRelists(size.containers);
    const nat = native ? measure(native.createRelistDiffer(), relists, size) : undefined;
    const tsr = measure(ts.createRelistDiffer(), relists, size);
    const conv = measure(createConventionalDiffer(), relists, size);
    result.diff.push({
      containers: size.containers,
      native_median_ms: nat?.median ?? null,
      native_p99_ms: nat?.p99 ?? null,
      ts_median_ms: tsr.median,
      ts_p99_ms: tsr.p99,
      conventional_median_ms: conv.median,
      conventional_p99_ms: conv.p99,
      sandboxes,
      reply_bytes: relists[0]!.ct.length,
      events_per_relist: Math.round(tsr.events * 10) / 10,
      iterations: { native: nat?.n ?? 0, ts: tsr.n, conventional: conv.n },
    });
    // Let the event loop breathe between sizes (and a pending GC run).
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

// `node dist/bench/pleg-diff.js [--quick]`: this part alone.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  runDiffBench({ quick: process.argv.includes('--quick') }).then(
    (r) => {
      console.log(
        'containers   native p50   native p99     ts p50     ts p99   ts/native   conv p50   conv p99   events/relist',
      );
      for (const d of r.diff) {
        const f = (v: number | null) => (v === null ? '     n/a' : v.toFixed(3).padStart(8));
        const ratio = d.native_median_ms ? `${(d.ts_median_ms / d.native_median_ms).toFixed(1)}x` : 'n/a';
        console.log(
          `${String(d.containers).padStart(10)}   ${f(d.native_median_ms)}     ${f(d.native_p99_ms)}   ${f(d.ts_median_ms)}   ${f(d.ts_p99_ms)}   ${ratio.padStart(9)}   ${f(d.conventional_median_ms)}   ${f(d.conventional_p99_ms)}   ${d.events_per_relist}`,
        );
      }
      if (r.reason) console.log(`native: ${r.reason}`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
