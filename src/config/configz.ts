/**
 * The running configuration in upstream's KubeletConfiguration JSON form (/configz): field
 * names from the schema table, durations back in Go syntax. Credentials are not echoed: every
 * header value of staticPodURLHeader (an Authorization header, a token) and the user
 * information of staticPodURL read `<redacted>`; the header names stay, so an operator can still
 * see which headers are configured.
 */
import { FIELDS } from './schema.js';
import { formatDuration } from '../util/duration.js';
import { CONFIG_API_VERSION, CONFIG_KIND } from './load.js';
import type { KubeletConfiguration } from './types.js';

export { formatDuration };

export const REDACTED = '<redacted>';

function redactHeaders(headers: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.map(() => REDACTED)]));
}

/** `https://user:secret@host/p` → `https://<redacted>@host/p`; a URL without user information unchanged. */
function redactUrlUserinfo(url: string): string {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*@)/.exec(url);
  return m ? `${m[1]}${REDACTED}@${url.slice(m[0].length)}` : url;
}

export function renderConfigz(kc: Readonly<KubeletConfiguration>): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: CONFIG_KIND, apiVersion: CONFIG_API_VERSION };
  for (const f of FIELDS) {
    const v = kc[f.key];
    if (f.kind === 'duration') out[f.name] = formatDuration(v as number);
    else if (f.kind === 'headerMap') out[f.name] = redactHeaders(v as Record<string, readonly string[]>);
    else if (f.key === 'staticPodURL') out[f.name] = redactUrlUserinfo(v as string);
    else if (f.kind === 'authentication') {
      const a = kc.authentication;
      out[f.name] = {
        x509: a.x509,
        webhook: { enabled: a.webhook.enabled, cacheTTL: formatDuration(a.webhook.cacheTTLMs) },
        anonymous: a.anonymous,
      };
    } else if (f.kind === 'authorization') {
      const a = kc.authorization;
      out[f.name] = {
        mode: a.mode,
        webhook: {
          cacheAuthorizedTTL: formatDuration(a.webhook.cacheAuthorizedTTLMs),
          cacheUnauthorizedTTL: formatDuration(a.webhook.cacheUnauthorizedTTLMs),
        },
      };
    } else if (f.kind === 'taints') out[f.name] = (v as readonly string[]).map(taintObject);
    else out[f.name] = v;
  }
  return out;
}

/** key[=value]:Effect → the Taint object upstream's /configz shows. */
function taintObject(s: string): { key: string; value?: string; effect: string } {
  const colon = s.lastIndexOf(':');
  const [key, value] = s.slice(0, colon).split('=', 2) as [string, string | undefined];
  return value === undefined ? { key, effect: s.slice(colon + 1) } : { key, value, effect: s.slice(colon + 1) };
}
