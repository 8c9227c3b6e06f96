/**
 * The kubelet's authenticators (upstream BuildAuth → union of x509 and TokenReview, then
 * anonymous): a presented credential that fails is a failure, never a fall-through to anonymous.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { errorMessage, kubeletErrorClass } from '../../errors.js';
import { log } from '../../util/log.js';
import { TtlCache } from './ttl-cache.js';
import type { Authenticator, ReviewClient, UserInfo } from './types.js';

/** Thrown when a credential was presented and rejected: the request is 401 even if anonymous is on. */
export class AuthenticationFailed extends kubeletErrorClass('KTS_ERR_HTTP') {}

const AUTHENTICATED = 'system:authenticated';

function withAuthenticatedGroup(u: UserInfo): UserInfo {
  return u.groups.includes(AUTHENTICATED) ? u : { ...u, groups: [...u.groups, AUTHENTICATED] };
}

/**
 * Client certificates: Node verified the chain against the client CA during the handshake
 * (requestCert with `ca` set); CN is the user, O the groups (as upstream's CommonNameUserConversion).
 */
export function x509Authenticator(): Authenticator {
  return {
    async authenticate(req) {
      const socket = req.socket as TLSSocket;
      if (typeof socket.getPeerCertificate !== 'function') return undefined;
      const cert = socket.getPeerCertificate();
      if (!cert || Object.keys(cert).length === 0) return undefined;
      if (!socket.authorized)
        throw new AuthenticationFailed(`client certificate rejected: ${String(socket.authorizationError)}`);
      const cn = cert.subject?.CN;
      const name = Array.isArray(cn) ? cn[0] : cn;
      if (!name) throw new AuthenticationFailed('client certificate has no common name');
      const o = cert.subject?.O;
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      return withAuthenticatedGroup({ name, groups });
    },
  };
}

function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m ? m[1] : undefined;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  error?: string;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** Bearer tokens through TokenReview (authentication.k8s.io/v1); answers cached for cacheTTL by token hash. */
export function tokenReviewAuthenticator(client: ReviewClient, cacheTtlMs: number): Authenticator {
  const cache = new TtlCache<UserInfo | null>();
  return {
    async authenticate(req) {
      const token = bearerToken(req);
      if (token === undefined) return undefined;
      const key = createHash('sha256').update(token).digest('hex');
      let user = cache.get(key);
      if (user === undefined) {
        const reply = await client
          .post('/apis/authentication.k8s.io/v1/tokenreviews', {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token },
          })
          .catch((err: unknown) => {
            log('server').warn({ err: String(err) }, 'TokenReview failed');
            throw new AuthenticationFailed(`token review failed: ${errorMessage(err)}`, { cause: err });
          });
        const status = ((reply ?? {}) as { status?: TokenReviewStatus }).status ?? {};
        user =
          status.authenticated && status.user?.username
            ? withAuthenticatedGroup({
                name: status.user.username,
                uid: status.user.uid,
                groups: status.user.groups ?? [],
                extra: status.user.extra,
              })
            : null;
        cache.set(key, user, cacheTtlMs);
      }
      if (user === null) throw new AuthenticationFailed('invalid bearer token');
      return user;
    },
  };
}

export const ANONYMOUS: UserInfo = Object.freeze({ name: 'system:anonymous', groups: ['system:unauthenticated'] });

/**
 * The first authenticator with a user wins (as upstream's union: a rejected certificate does not
 * stop a valid token); if none has one, a rejected credential fails the request; with no
 * credential at all the request is anonymous when allowed, else unauthenticated (undefined).
 */
export function unionAuthenticator(authenticators: readonly Authenticator[], anonymous: boolean): Authenticator {
  return {
    async authenticate(req) {
      const failures: string[] = [];
      for (const a of authenticators) {
        try {
          const u = await a.authenticate(req);
          if (u) return u;
        } catch (err) {
          if (!(err instanceof AuthenticationFailed)) throw err;
          failures.push(err.message);
        }
      }
      if (failures.length > 0) throw new AuthenticationFailed(failures.join('; '));
      return anonymous ? ANONYMOUS : undefined;
    },
  };
}
