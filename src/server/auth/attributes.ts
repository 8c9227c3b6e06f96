/**
 * Request → authorization attributes, as upstream's NodeAuthorizerAttributesGetter with
 * KubeletFineGrainedAuthz (beta and on by default since 1.33, GA in 1.36; `featureGates:
 * {KubeletFineGrainedAuthz: false}` gives the coarse attributes only): every kubelet request
 * is a request on the `nodes` resource named after this node; the verb comes from the HTTP
 * method, the subresource from the path. `/pods`, `/runningpods/`, `/healthz` and `/configz`
 * get a list of two: the fine-grained subresource first, then `proxy`; the request is allowed
 * when either is.
 *
 * Beyond upstream: an upgrade request (WebSocket or SPDY: exec, attach, port-forward) is
 * authorized with verb `create` whatever its method. Upstream derives `get` from the GET a
 * WebSocket handshake must use, so `get nodes/proxy`, a read permission, is enough to run
 * commands in every container of the node; a POST to the same endpoint needs `create`.
 */
import type { RequestAttributes, UserInfo } from './types.js';

const VERBS: Readonly<Record<string, string>> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** upstream's fine-grained paths: checked first, `proxy` after them. */
const FINE_GRAINED: ReadonlyArray<readonly [base: string, subresource: string]> = [
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/runningpods/', 'pods'],
];

/** Paths with their own subresource and no fallback; everything else is `proxy`. */
const SUBRESOURCES: ReadonlyArray<readonly [base: string, subresource: string]> = [
  ['/stats/', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs/', 'log'],
  ['/spec/', 'spec'],
  ['/checkpoint/', 'checkpoint'],
];

/** True when `path` is `base` or below it ("/stats" matches "/stats" and "/stats/summary", not "/statsx"). */
function isSubpath(path: string, base: string): boolean {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return path === b || (path.startsWith(b) && path[b.length] === '/');
}

/**
 * The subresources to try in order, as upstream GetRequestAttributes; with KubeletFineGrainedAuthz
 * off (`fineGrained` false) only the coarse one, as upstream before 1.33.
 */
export function subresourcesOf(path: string, fineGrained = true): string[] {
  const fine = fineGrained ? FINE_GRAINED.find(([base]) => isSubpath(path, base))?.[1] : undefined;
  const coarse = SUBRESOURCES.find(([base]) => isSubpath(path, base))?.[1] ?? 'proxy';
  return fine ? [fine, coarse] : [coarse];
}

/** The verb: `create` for an upgrade request (see above), else from the method. */
export function verbOf(method: string, upgrade: boolean): string {
  return upgrade ? 'create' : (VERBS[method] ?? '');
}

/** One attribute set per subresource to try, in order. `upgrade`: a connection upgrade (exec, attach). */
export function requestAttributes(
  user: UserInfo,
  { method, path, upgrade = false }: { method: string; path: string; upgrade?: boolean },
  nodeName: string,
  fineGrained = true,
): RequestAttributes[] {
  const verb = verbOf(method, upgrade);
  return subresourcesOf(path, fineGrained).map((subresource) => ({
    user,
    verb,
    namespace: '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path,
  }));
}

/** Upstream's 403 text: names user, verb, resource and every subresource tried. */
export function forbiddenMessage(attrs: readonly RequestAttributes[]): string {
  const a = attrs[0]!;
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource(s)=[${attrs.map((x) => x.subresource).join(' ')}])`;
}
