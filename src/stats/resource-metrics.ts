/**
 * GET /metrics/resource (upstream server/metrics/collectors/resource_metrics.go): the node's,
 * pods' and containers' cpu and working set with explicit sample timestamps. A container whose
 * cgroup gave no cpu counter this pass is left out rather than reported as 0.
 */
import { Exposition, nsToSeconds } from './exposition.js';
import type { StatsSnapshot } from './types.js';

export function resourceMetrics(s: StatsSnapshot): string {
  const e = new Exposition()
    .family(
      'container_cpu_usage_seconds_total',
      'counter',
      '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    )
    .family('container_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the container in bytes')
    .family('container_start_time_seconds', 'gauge', '[STABLE] Start time of the container since unix epoch in seconds')
    .family(
      'node_cpu_usage_seconds_total',
      'counter',
      '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    )
    .family('node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes')
    .family(
      'pod_cpu_usage_seconds_total',
      'counter',
      '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    )
    .family('pod_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the pod in bytes')
    .family(
      'resource_scrape_error',
      'gauge',
      '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    );
  const ts = s.time.getTime();
  const n = s.node;
  if (n.cpu.usageCoreNanoSeconds !== undefined)
    e.sample('node_cpu_usage_seconds_total', {}, nsToSeconds(n.cpu.usageCoreNanoSeconds), ts);
  if (n.memory.workingSetBytes !== undefined)
    e.sample('node_memory_working_set_bytes', {}, n.memory.workingSetBytes, ts);
  for (const p of s.pods) {
    const pl = { namespace: p.namespace, pod: p.name };
    if (p.cpu.usageCoreNanoSeconds !== undefined)
      e.sample('pod_cpu_usage_seconds_total', pl, nsToSeconds(p.cpu.usageCoreNanoSeconds), ts);
    if (p.memory.workingSetBytes !== undefined)
      e.sample('pod_memory_working_set_bytes', pl, p.memory.workingSetBytes, ts);
    for (const c of p.containers) {
      if (c.cpu.usageCoreNanoSeconds === undefined) continue;
      const cl = { container: c.name, namespace: p.namespace, pod: p.name };
      e.sample('container_cpu_usage_seconds_total', cl, nsToSeconds(c.cpu.usageCoreNanoSeconds), ts);
      if (c.memory.workingSetBytes !== undefined)
        e.sample('container_memory_working_set_bytes', cl, c.memory.workingSetBytes, ts);
      e.sample('container_start_time_seconds', cl, c.startTime.getTime() / 1000, ts);
    }
  }
  e.sample('resource_scrape_error', {}, s.error ? 1 : 0);
  return e.text();
}
