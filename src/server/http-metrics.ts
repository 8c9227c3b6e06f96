/**
 * Request metrics with upstream's labels. `path` is a bucket (the route's first segment, as
 * upstream's metrics bucket matcher) so unbounded URLs cannot blow up label cardinality.
 */
import { metrics } from '../metrics/index.js';

const BUCKETS = new Set([
  'healthz',
  'pods',
  'metrics',
  'stats',
  'run',
  'exec',
  'attach',
  'portForward',
  'containerLogs',
  'runningpods',
  'configz',
  'logs',
  'debug',
  'spec',
  'checkpoint',
]);
const SUB_BUCKETS = new Set(['metrics/cadvisor', 'metrics/probes', 'metrics/resource', 'stats/summary']);

function metricsBucket(path: string): string {
  const parts = path.split('/');
  const first = parts[1] ?? '';
  if (!BUCKETS.has(first)) return 'other';
  const two = `${first}/${parts[2] ?? ''}`;
  return SUB_BUCKETS.has(two) ? two : first;
}

export type ServerType = 'readonly' | 'readwrite';

/** Starts the in-flight gauge; the returned function ends the request (idempotent). */
export function trackRequest(method: string, path: string, serverType: ServerType, longRunning: boolean): () => void {
  const labels = { method, path: metricsBucket(path), server_type: serverType, long_running: String(longRunning) };
  metrics.httpRequests.inc(labels);
  metrics.httpInflightRequests.inc(labels);
  const end = metrics.httpRequestDuration.startTimer(labels);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    metrics.httpInflightRequests.dec(labels);
    end();
  };
}
