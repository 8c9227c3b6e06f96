/** The kubelet's authorizers: AlwaysAllow, or Webhook through SubjectAccessReview with caches. */
import { log } from '../../util/log.js';
import { TtlCache } from './ttl-cache.js';
import type { Authorizer, Decision, RequestAttributes, ReviewClient } from './types.js';

export function alwaysAllow(): Authorizer {
  return { authorize: async () => ({ allowed: true, reason: '' }) };
}

/** Closed door: Webhook mode with no API server to ask denies everything, with the reason. */
export function denyAll(reason: string): Authorizer {
  return { authorize: async () => ({ allowed: false, reason }) };
}

function reviewSpec(a: RequestAttributes): Record<string, unknown> {
  return {
    user: a.user.name,
    ...(a.user.uid ? { uid: a.user.uid } : {}),
    groups: a.user.groups,
    ...(a.user.extra ? { extra: a.user.extra } : {}),
    resourceAttributes: {
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    },
  };
}

export interface WebhookAuthorizerOptions {
  cacheAuthorizedTtlMs: number;
  cacheUnauthorizedTtlMs: number;
}

/**
 * SubjectAccessReview (authorization.k8s.io/v1). Allowed answers are cached for
 * cacheAuthorizedTTL, denied ones for cacheUnauthorizedTTL; a failed call is a denial, not cached.
 */
export function webhookAuthorizer(client: ReviewClient, opts: WebhookAuthorizerOptions): Authorizer {
  const cache = new TtlCache<Decision>();
  return {
    async authorize(a) {
      const spec = reviewSpec(a);
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      if (hit) return hit;
      let reply: unknown;
      try {
        reply = await client.post('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec,
        });
      } catch (err) {
        log('server').warn({ err: String(err) }, 'SubjectAccessReview failed');
        return { allowed: false, reason: 'authorization webhook unavailable' };
      }
      const status = ((reply ?? {}) as { status?: { allowed?: boolean; reason?: string } }).status ?? {};
      const decision = { allowed: status.allowed === true, reason: status.reason ?? '' };
      cache.set(key, decision, decision.allowed ? opts.cacheAuthorizedTtlMs : opts.cacheUnauthorizedTtlMs);
      return decision;
    },
  };
}
