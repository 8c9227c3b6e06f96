/**
 * Stats routes (upstream server/stats and server/metrics): /stats/summary (Summary API JSON,
 * ?only_cpu_and_memory=true as metrics-server asks), /metrics/resource and /metrics/cadvisor.
 * The provider renders; these only pick the route and the content type.
 */
import type { Reply, Route } from './types.js';

const PROM = 'text/plain; version=0.0.4; charset=utf-8';
const unavailable: Reply = {
  status: 503,
  contentType: 'text/plain; charset=utf-8',
  body: 'stats are not available on this node\n',
};

const statsSummaryRoute: Route = async (p, query) => {
  if (!p.stats) return unavailable;
  const only = query?.get('only_cpu_and_memory') === 'true';
  return { status: 200, contentType: 'application/json', body: await p.stats.summary(only) };
};

const resourceMetricsRoute: Route = async (p) =>
  p.stats ? { status: 200, contentType: PROM, body: await p.stats.resourceMetrics() } : unavailable;

const cadvisorMetricsRoute: Route = async (p) =>
  p.stats ? { status: 200, contentType: PROM, body: await p.stats.cadvisorMetrics() } : unavailable;

export const STATS_ROUTES: Record<string, Route> = {
  '/stats/summary': statsSummaryRoute,
  '/stats/summary/': statsSummaryRoute,
  '/metrics/resource': resourceMetricsRoute,
  '/metrics/cadvisor': cadvisorMetricsRoute,
};
