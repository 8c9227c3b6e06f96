/**
 * The scale bench's reading of /metrics (bench/scale-bench.ts): a histogram parsed from
 * prom-client's own exposition, the difference of two scrapes, and Prometheus'
 * histogram_quantile interpolation inside the bucket that holds the rank.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { histoDelta, histogramQuantile, parseHistogram } from '../../bench/scale-bench.js';
import { DEF_BUCKETS } from '../../src/metrics/index.js';

function setup() {
  const registry = new Registry();
  const h = new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG.',
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  });
  const sync = new Histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: 'x',
    labelNames: ['operation_type'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [registry],
  });
  return { registry, h, sync };
}

test('parses buckets, sum and count; a label filter picks one series', async () => {
  const { registry, h, sync } = setup();
  for (const v of [0.003, 0.004, 0.02]) h.observe(v);
  sync.observe({ operation_type: 'sync' }, 0.2);
  sync.observe({ operation_type: 'create' }, 3);
  const text = await registry.metrics();
  const relist = parseHistogram(text, 'kubelet_pleg_relist_duration_seconds')!;
  assert.equal(relist.count, 3);
  assert.ok(Math.abs(relist.sum - 0.027) < 1e-9);
  assert.equal(relist.buckets.get(0.005), 2);
  assert.equal(relist.buckets.get(Infinity), 3);
  const s = parseHistogram(text, 'kubelet_pod_worker_duration_seconds', 'operation_type="sync"')!;
  assert.equal(s.count, 1);
  assert.equal(parseHistogram(text, 'kubelet_ts_housekeeping_duration_seconds'), undefined);
});

test('the window is the difference of two scrapes; p99 interpolates inside its bucket', async () => {
  const { registry, h } = setup();
  h.observe(5); // before the window: must not count
  const before = parseHistogram(await registry.metrics(), 'kubelet_pleg_relist_duration_seconds');
  for (let i = 0; i < 99; i++) h.observe(0.004);
  h.observe(0.04); // the one slow relist of 100
  const w = histoDelta(before, parseHistogram(await registry.metrics(), 'kubelet_pleg_relist_duration_seconds')!);
  assert.equal(w.count, 100);
  assert.equal(w.buckets.get(0.025), 99);
  // rank 99 of 100 is the last of the ≤ 5 ms bucket: its upper bound.
  assert.ok(Math.abs(histogramQuantile(w, 0.99) - 0.005) < 1e-9);
  // rank 99.5 falls half-way into (25 ms, 50 ms].
  assert.ok(Math.abs(histogramQuantile(w, 0.995) - 0.0375) < 1e-9);
  assert.ok(Number.isNaN(histogramQuantile(histoDelta(before, before!), 0.99)));
});
