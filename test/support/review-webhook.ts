/**
 * The API server's review endpoints as the kubelet calls them, with a programmable policy:
 * POST /apis/authentication.k8s.io/v1/tokenreviews and
 * POST /apis/authorization.k8s.io/v1/subjectaccessreviews. `handler` is mountable into another
 * server (returns false for paths it does not own); `startReviewServer` wraps it in a small
 * HTTPS server and writes a kubeconfig pointing at it. Every review received is recorded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { issue, type TestCA } from './pki.js';

export interface ReviewUser {
  username: string;
  uid?: string;
  groups?: string[];
}

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface SubjectAccessReviewSpec {
  user?: string;
  groups?: string[];
  resourceAttributes?: ResourceAttributes;
}

export interface ReviewPolicy {
  /** Token → user; unknown tokens are not authenticated. */
  tokens: Record<string, ReviewUser>;
  /** Decides a SubjectAccessReview. */
  authorize(spec: SubjectAccessReviewSpec): { allowed: boolean; reason?: string };
}

export interface ReviewWebhook {
  policy: ReviewPolicy;
  tokenReviews: unknown[];
  accessReviews: SubjectAccessReviewSpec[];
  handler(req: IncomingMessage, res: ServerResponse): boolean;
}

const TOKEN_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(body) as Record<string, unknown>);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function createReviewWebhook(policy: ReviewPolicy): ReviewWebhook {
  const hook: ReviewWebhook = {
    policy,
    tokenReviews: [],
    accessReviews: [],
    handler(req, res) {
      const path = (req.url ?? '').split('?')[0];
      if (path !== TOKEN_PATH && path !== SAR_PATH) return false;
      if (req.method !== 'POST') {
        reply(res, 405, { kind: 'Status', status: 'Failure', code: 405 });
        return true;
      }
      void readJson(req).then(
        (review) => {
          const spec = (review.spec ?? {}) as Record<string, unknown>;
          if (path === TOKEN_PATH) {
            hook.tokenReviews.push(review);
            const user = hook.policy.tokens[String(spec.token)];
            reply(res, 201, {
              ...review,
              status: user ? { authenticated: true, user } : { authenticated: false, error: 'invalid token' },
            });
          } else {
            hook.accessReviews.push(spec as SubjectAccessReviewSpec);
            const d = hook.policy.authorize(spec as SubjectAccessReviewSpec);
            reply(res, 201, {
              ...review,
              status: { allowed: d.allowed, ...(d.allowed ? {} : { denied: true }), reason: d.reason ?? '' },
            });
          }
        },
        () => reply(res, 400, { kind: 'Status', status: 'Failure', code: 400, message: 'body is not JSON' }),
      );
      return true;
    },
  };
  return hook;
}

export interface ReviewServer {
  server: Server;
  port: number;
  kubeconfig: string;
  close(): Promise<void>;
}

/** HTTPS server (certificate from `ca`) serving the webhook; a kubeconfig for it in ca.dir. */
export async function startReviewServer(
  hook: ReviewWebhook,
  ca: TestCA,
  token = 'kubelet-client-token',
): Promise<ReviewServer> {
  const pair = issue(ca, 'review-server', { cn: 'review-server', server: true });
  const server = createServer({ cert: readFileSync(pair.cert), key: readFileSync(pair.key) }, (req, res) => {
    if (!hook.handler(req, res)) reply(res, 404, { kind: 'Status', status: 'Failure', code: 404 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(ca.dir, `kubeconfig-${port}`);
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: test',
      'clusters:',
      '- name: test',
      '  cluster:',
      `    server: https://127.0.0.1:${port}`,
      `    certificate-authority: ${ca.cert}`,
      'users:',
      '- name: kubelet',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: test',
      '  context: {cluster: test, user: kubelet}',
      '',
    ].join('\n'),
  );
  return {
    server,
    port,
    kubeconfig,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
