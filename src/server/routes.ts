/**
 * Route handlers shared by the servers. Each returns a plain response object; the server code
 * writes it. Only GET/HEAD are served here: nothing on these ports changes state.
 */
import type { Reply, Route } from './types.js';
import { STATS_ROUTES } from './stats-routes.js';

export type { Reply, Route };

const text = (status: number, body: string): Reply => ({ status, contentType: 'text/plain; charset=utf-8', body });
const json = (body: unknown): Reply => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });

const healthzRoute: Route = (p) => {
  const errs = p.healthErrors();
  return errs.length === 0
    ? text(200, 'ok')
    : text(500, `${errs.map((e) => `[-]${e}`).join('\n')}\nhealthz check failed\n`);
};

const podsRoute: Route = (p) => json({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: p.podsWithStatus() });

const metricsRoute: Route = async (p) => {
  const m = await p.metrics();
  return { status: 200, contentType: m.contentType, body: m.body };
};

const probeMetricsRoute: Route = async (p) => {
  if (!p.probeMetrics) return notFound('/metrics/probes');
  const m = await p.probeMetrics();
  return { status: 200, contentType: m.contentType, body: m.body };
};

/** Exact-path routes of the read-only port (upstream serves /pods, /healthz, /metrics, /stats there). */
export const READ_ONLY_ROUTES: Record<string, Route> = {
  '/healthz': healthzRoute,
  '/pods': podsRoute,
  '/pods/': podsRoute,
  '/metrics': metricsRoute,
  '/metrics/probes': probeMetricsRoute,
  ...STATS_ROUTES,
};

export const HEALTHZ_ROUTES: Record<string, Route> = { '/healthz': healthzRoute };

export function notFound(path: string): Reply {
  return text(404, `404 page not found: ${path}\n`);
}
