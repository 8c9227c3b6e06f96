/**
 * The /metrics/probes registry (upstream pkg/kubelet/prober metrics, served apart from /metrics):
 * prober_probe_total and prober_probe_duration_seconds with upstream names and labels.
 */
import { Counter, Histogram, Registry } from 'prom-client';

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
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [probeRegistry],
  }),
};
