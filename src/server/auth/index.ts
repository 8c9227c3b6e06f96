/** Builds the main port's authenticator and authorizer from KubeletConfiguration (upstream BuildAuth). */
import type { KubeletAuthentication, KubeletAuthorization } from '../../config/types.js';
import { log } from '../../util/log.js';
import { tokenReviewAuthenticator, unionAuthenticator, x509Authenticator } from './authenticators.js';
import { alwaysAllow, denyAll, webhookAuthorizer } from './authorizers.js';
import type { Authenticator, Authorizer, ReviewClient } from './types.js';

export { AuthenticationFailed, ANONYMOUS } from './authenticators.js';
export { requestAttributes, forbiddenMessage, subresourcesOf } from './attributes.js';
export { reviewClientFromKubeconfig } from './webhook-client.js';
export type { Authenticator, Authorizer, UserInfo, RequestAttributes, Decision, ReviewClient } from './types.js';

export interface AuthConfig {
  authentication: KubeletAuthentication;
  authorization: KubeletAuthorization;
  /** Whether the x509 authenticator runs (a client CA is loaded in the TLS server). */
  clientCA: boolean;
  /** The API server client; undefined in standalone mode. */
  client?: ReviewClient;
}

export function buildAuth(c: AuthConfig): { authenticator: Authenticator; authorizer: Authorizer } {
  const authenticators: Authenticator[] = [];
  if (c.clientCA) authenticators.push(x509Authenticator());
  if (c.authentication.webhook.enabled) {
    if (c.client) authenticators.push(tokenReviewAuthenticator(c.client, c.authentication.webhook.cacheTTLMs));
    else log('server').warn('authentication.webhook.enabled but no --kubeconfig: bearer tokens are not accepted');
  }
  const authenticator = unionAuthenticator(authenticators, c.authentication.anonymous.enabled);
  let authorizer: Authorizer;
  if (c.authorization.mode === 'AlwaysAllow') {
    authorizer = alwaysAllow();
  } else if (c.client) {
    authorizer = webhookAuthorizer(c.client, {
      cacheAuthorizedTtlMs: c.authorization.webhook.cacheAuthorizedTTLMs,
      cacheUnauthorizedTtlMs: c.authorization.webhook.cacheUnauthorizedTTLMs,
    });
  } else {
    log('server').warn('authorization.mode is Webhook but no --kubeconfig: every request on the main port is denied');
    authorizer = denyAll('no API server configured for Webhook authorization');
  }
  return { authenticator, authorizer };
}
