/**
 * The running configuration in upstream's KubeletConfiguration JSON form (/configz): field
 * names from the schema table, durations back in Go syntax.
 */
import { FIELDS } from './schema.js';
import { CONFIG_API_VERSION, CONFIG_KIND } from './load.js';
import type { KubeletConfiguration } from './types.js';

/** ms → Go duration string ("1m30s", "500ms", "0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  if (rest > 0) out += `${rest}ms`;
  return out;
}

export function renderConfigz(kc: Readonly<KubeletConfiguration>): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: CONFIG_KIND, apiVersion: CONFIG_API_VERSION };
  for (const f of FIELDS) {
    const v = kc[f.key];
    if (f.kind === 'duration') out[f.name] = formatDuration(v as number);
    else if (f.kind === 'authentication') {
      const a = kc.authentication;
      out[f.name] = { x509: a.x509, webhook: { enabled: a.webhook.enabled, cacheTTL: formatDuration(a.webhook.cacheTTLMs) }, anonymous: a.anonymous };
    } else if (f.kind === 'authorization') {
      const a = kc.authorization;
      out[f.name] = { mode: a.mode, webhook: { cacheAuthorizedTTL: formatDuration(a.webhook.cacheAuthorizedTTLMs), cacheUnauthorizedTTL: formatDuration(a.webhook.cacheUnauthorizedTTLMs) } };
    } else out[f.name] = v;
  }
  return out;
}
