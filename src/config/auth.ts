/**
 * The nested KubeletConfiguration objects of the main port (authentication, authorization) and
 * the TLS settings, with upstream's v1beta1 field names. The file gives partial objects merged
 * over the defaults; the upstream flags (--client-ca-file, --anonymous-auth, ...) set single
 * members and override the file.
 */
import { parseDuration } from '../util/duration.js';
import type { KubeletAuthentication, KubeletAuthorization } from './types.js';
import {
  AUTHORIZATION_MODES,
  CIPHER_SUITES,
  DEFAULT_AUTHENTICATION,
  DEFAULT_AUTHORIZATION,
  TLS_VERSIONS,
} from './auth-defaults.js';

export { AUTHORIZATION_MODES, CIPHER_SUITES, DEFAULT_AUTHENTICATION, DEFAULT_AUTHORIZATION, TLS_VERSIONS };

type Converted = { value?: unknown; problem?: string };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Reads the members of one nested object; each problem found goes to `problems`. */
class FieldReader {
  readonly problems: string[] = [];

  /** `obj[key]` as a sub-object; unknown members are problems (as upstream's strict decoding). */
  section(obj: Record<string, unknown>, key: string, known: readonly string[], where: string): Record<string, unknown> {
    const v = obj[key];
    if (v === undefined) return {};
    if (!isObject(v)) {
      this.problems.push(`${where}.${key}: must be an object (got ${JSON.stringify(v)})`);
      return {};
    }
    for (const k of Object.keys(v)) if (!known.includes(k)) this.problems.push(`${where}.${key}: unknown field "${k}"`);
    return v;
  }

  /** `v` as a `kind`; `fallback` when it is absent or wrong (then a problem). */
  pick<T>(v: unknown, fallback: T, where: string, kind: 'bool' | 'string' | 'duration'): T {
    if (v === undefined) return fallback;
    if (kind === 'bool' && typeof v === 'boolean') return v as T;
    if (kind === 'string' && typeof v === 'string') return v as T;
    // A zero cache TTL means the default, as upstream's defaulting (`== zeroDuration`): kubeadm writes 0s.
    if (kind === 'duration' && typeof v === 'string' && parseDuration(v) !== undefined)
      return (parseDuration(v) || fallback) as T;
    const what = kind === 'bool' ? 'true or false' : kind === 'string' ? 'a string' : 'a duration such as "2m"';
    this.problems.push(`${where}: must be ${what} (got ${JSON.stringify(v)})`);
    return fallback;
  }
}

function done(value: unknown, problems: string[]): Converted {
  return problems.length > 0 ? { problem: problems.join('; ') } : { value };
}

export function convertAuthentication(raw: unknown, where: string): Converted {
  if (!isObject(raw))
    return { problem: `${where}: must be an object with x509, webhook, anonymous (got ${JSON.stringify(raw)})` };
  const r = new FieldReader();
  const problems = r.problems;
  for (const k of Object.keys(raw))
    if (!['x509', 'webhook', 'anonymous'].includes(k)) problems.push(`${where}: unknown field "${k}"`);
  const d = DEFAULT_AUTHENTICATION;
  const x509 = r.section(raw, 'x509', ['clientCAFile'], where);
  const webhook = r.section(raw, 'webhook', ['enabled', 'cacheTTL'], where);
  const anonymous = r.section(raw, 'anonymous', ['enabled'], where);
  const value: KubeletAuthentication = {
    x509: { clientCAFile: r.pick(x509.clientCAFile, d.x509.clientCAFile, `${where}.x509.clientCAFile`, 'string') },
    webhook: {
      enabled: r.pick(webhook.enabled, d.webhook.enabled, `${where}.webhook.enabled`, 'bool'),
      cacheTTLMs: r.pick(webhook.cacheTTL, d.webhook.cacheTTLMs, `${where}.webhook.cacheTTL`, 'duration'),
    },
    anonymous: { enabled: r.pick(anonymous.enabled, d.anonymous.enabled, `${where}.anonymous.enabled`, 'bool') },
  };
  return done(value, problems);
}

export function convertAuthorization(raw: unknown, where: string): Converted {
  if (!isObject(raw)) return { problem: `${where}: must be an object with mode, webhook (got ${JSON.stringify(raw)})` };
  const r = new FieldReader();
  const problems = r.problems;
  for (const k of Object.keys(raw))
    if (!['mode', 'webhook'].includes(k)) problems.push(`${where}: unknown field "${k}"`);
  const d = DEFAULT_AUTHORIZATION;
  const mode = r.pick(raw.mode, d.mode as string, `${where}.mode`, 'string');
  if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode))
    problems.push(`${where}.mode: must be one of ${AUTHORIZATION_MODES.join(', ')} (got ${JSON.stringify(mode)})`);
  const webhook = r.section(raw, 'webhook', ['cacheAuthorizedTTL', 'cacheUnauthorizedTTL'], where);
  const value: KubeletAuthorization = {
    mode: mode as KubeletAuthorization['mode'],
    webhook: {
      cacheAuthorizedTTLMs: r.pick(
        webhook.cacheAuthorizedTTL,
        d.webhook.cacheAuthorizedTTLMs,
        `${where}.webhook.cacheAuthorizedTTL`,
        'duration',
      ),
      cacheUnauthorizedTTLMs: r.pick(
        webhook.cacheUnauthorizedTTL,
        d.webhook.cacheUnauthorizedTTLMs,
        `${where}.webhook.cacheUnauthorizedTTL`,
        'duration',
      ),
    },
  };
  return done(value, problems);
}

export function convertTlsVersion(raw: unknown, where: string): Converted {
  if (raw === '' || (typeof raw === 'string' && raw in TLS_VERSIONS)) return { value: raw };
  return { problem: `${where}: must be one of ${Object.keys(TLS_VERSIONS).join(', ')} (got ${JSON.stringify(raw)})` };
}

export function convertCipherSuites(raw: unknown, where: string): Converted {
  const list =
    typeof raw === 'string'
      ? raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : raw;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string'))
    return { problem: `${where}: must be a list of cipher suite names (got ${JSON.stringify(raw)})` };
  const unknown = list.filter((s) => !(s in CIPHER_SUITES));
  if (unknown.length > 0)
    return {
      problem: `${where}: unsupported cipher suite(s) ${unknown.join(', ')} (supported: ${Object.keys(CIPHER_SUITES).join(', ')})`,
    };
  return { value: Object.freeze([...list]) };
}

/** Upstream flags that set one member of authentication / authorization. */
export const AUTH_FLAGS: Readonly<Record<string, { bool: boolean; help: string }>> = {
  'client-ca-file': {
    bool: false,
    help: 'CA bundle that signs client certificates (authentication.x509.clientCAFile).',
  },
  'anonymous-auth': {
    bool: true,
    help: 'Serve unauthenticated requests as system:anonymous (authentication.anonymous.enabled, default false).',
  },
  'authentication-token-webhook': {
    bool: true,
    help: 'Authenticate bearer tokens by TokenReview (authentication.webhook.enabled, default true; needs --kubeconfig).',
  },
  'authentication-token-webhook-cache-ttl': {
    bool: false,
    help: 'TokenReview cache TTL (authentication.webhook.cacheTTL, default 2m0s).',
  },
  'authorization-mode': {
    bool: false,
    help: 'AlwaysAllow or Webhook (authorization.mode, default Webhook; needs --kubeconfig).',
  },
  'authorization-webhook-cache-authorized-ttl': {
    bool: false,
    help: 'SubjectAccessReview cache TTL of allowed answers (default 5m0s).',
  },
  'authorization-webhook-cache-unauthorized-ttl': {
    bool: false,
    help: 'SubjectAccessReview cache TTL of denied answers (default 30s).',
  },
};

/** Applies the AUTH_FLAGS given on the command line over kubelet.authentication/authorization. */
export function applyAuthFlags(
  kubelet: Record<string, unknown>,
  values: ReadonlyMap<string, string>,
  problems: string[],
): void {
  const authn = kubelet.authentication as KubeletAuthentication;
  const authz = kubelet.authorization as KubeletAuthorization;
  const flag = (name: string) => values.get(name);
  const bool = (name: string, fallback: boolean) => {
    const v = flag(name);
    if (v === undefined) return fallback;
    if (v === 'true' || v === 'false') return v === 'true';
    problems.push(`--${name}: must be true or false (got "${v}")`);
    return fallback;
  };
  const duration = (name: string, fallback: number) => {
    const v = flag(name);
    if (v === undefined) return fallback;
    const ms = parseDuration(v);
    if (ms === undefined) problems.push(`--${name}: must be a duration such as "2m" (got "${v}")`);
    return ms ?? fallback;
  };
  kubelet.authentication = Object.freeze({
    x509: Object.freeze({ clientCAFile: flag('client-ca-file') ?? authn.x509.clientCAFile }),
    webhook: Object.freeze({
      enabled: bool('authentication-token-webhook', authn.webhook.enabled),
      cacheTTLMs: duration('authentication-token-webhook-cache-ttl', authn.webhook.cacheTTLMs),
    }),
    anonymous: Object.freeze({ enabled: bool('anonymous-auth', authn.anonymous.enabled) }),
  });
  const mode = flag('authorization-mode') ?? authz.mode;
  if (!(AUTHORIZATION_MODES as readonly string[]).includes(mode))
    problems.push(`--authorization-mode: must be one of ${AUTHORIZATION_MODES.join(', ')} (got "${mode}")`);
  kubelet.authorization = Object.freeze({
    mode,
    webhook: Object.freeze({
      cacheAuthorizedTTLMs: duration('authorization-webhook-cache-authorized-ttl', authz.webhook.cacheAuthorizedTTLMs),
      cacheUnauthorizedTTLMs: duration(
        'authorization-webhook-cache-unauthorized-ttl',
        authz.webhook.cacheUnauthorizedTTLMs,
      ),
    }),
  });
}
