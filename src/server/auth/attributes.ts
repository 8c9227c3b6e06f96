/**
 * Request → authorization attributes, as upstream's NodeAuthorizerAttributesGetter: every
 * kubelet request is a request on the `nodes` resource named after this node; the verb comes
 * from the HTTP method and the subresource from the path (stats, metrics, log, else proxy).
 */
import type { RequestAttributes, UserInfo } from './types.js';

const VERBS: Readonly<Record<string, string>> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** True when `path` is `base` or below it ("/stats" matches "/stats" and "/stats/summary", not "/statsx"). */
function isSubpath(path: string, base: string): boolean {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return path === b || (path.startsWith(b) && path[b.length] === '/');
}

export function subresourceOf(path: string): string {
  if (isSubpath(path, '/stats/')) return 'stats';
  if (isSubpath(path, '/metrics')) return 'metrics';
  if (isSubpath(path, '/logs/')) return 'log';
  return 'proxy';
}

export function requestAttributes(user: UserInfo, method: string, path: string, nodeName: string): RequestAttributes {
  return {
    user, verb: VERBS[method] ?? '', namespace: '', apiGroup: '', apiVersion: 'v1',
    resource: 'nodes', subresource: subresourceOf(path), name: nodeName, path,
  };
}

/** Upstream's 403 text: names user, verb, resource and subresource. */
export function forbiddenMessage(a: RequestAttributes): string {
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}
