/**
 * The /metrics/probes registry (upstream pkg/kubelet/prober metrics, served apart from /metrics):
 * prober_probe_total and prober_probe_duration_seconds with upstream names and labels.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { DEF_BUCKETS } from './index.js';

export const probeRegistry = new Registry();

export const probeMetrics = {
  probeTotal: new Counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'] as const,
    registers: [probeRegistry],
  }),
  probeDuration: new Histogram({
    name: 'prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['probe_type', 'container', 'pod', 'namespace'] as const,
    buckets: [...DEF_BUCKETS],
    registers: [probeRegistry],
  }),
};
