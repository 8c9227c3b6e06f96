/**
 * A small router with path parameters: `/run/{namespace}/{pod}/{container}` binds one segment
 * per `{name}`, a final `{name...}` binds the rest of the path, left percent-encoded so its
 * handler can refuse encoded slashes itself. Segment parameters are percent-decoded and may not
 * contain a slash (an encoded "/" is refused, not re-split), so a handler never sees a segment
 * that walks directories. The query is in `ctx.url`. A subsystem mounts with one line:
 *   router.add('GET', '/stats/summary', (req, res, params, ctx) => ..., { longRunning, debug })
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from './auth/types.js';

export type Params = Record<string, string>;

/** Per-request context: the authenticated user, the parsed URL, and for upgrades the raw socket. */
export interface RequestContext {
  url: URL;
  user?: UserInfo;
  upgrade?: { socket: Duplex; head: Buffer };
}

export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  ctx: RequestContext,
) => Promise<void> | void;

export interface RouteOptions {
  /** Streams (exec, attach, port-forward, followed logs): the long_running metric label. */
  longRunning?: boolean;
  /** Debug route: off (405) when enableDebuggingHandlers is false and on the read-only port. */
  debug?: boolean;
}

interface Route extends RouteOptions {
  methods: ReadonlySet<string>;
  pattern: string;
  regex: RegExp;
  names: string[];
  rest: boolean;
  handler: Handler;
}

export type Match =
  | { kind: 'found'; route: Route; params: Params }
  | { kind: 'bad-method'; allowed: string[] }
  | { kind: 'bad-param'; message: string }
  | { kind: 'none' };

function compile(pattern: string): { regex: RegExp; names: string[]; rest: boolean } {
  const names: string[] = [];
  let rest = false;
  const body = pattern.replace(
    /\{(\w+)(\.\.\.)?\}|[.*+?^$()|[\]\\]/g,
    (m, name: string | undefined, dots: string | undefined) => {
      if (!name) return `\\${m}`;
      names.push(name);
      if (dots) {
        rest = true;
        return '(.*)';
      }
      return '([^/]+)';
    },
  );
  return { regex: new RegExp(`^${body}$`), names, rest };
}

export class Router {
  private readonly routes: Route[] = [];

  add(methods: string | readonly string[], pattern: string, handler: Handler, opts: RouteOptions = {}): this {
    const list = typeof methods === 'string' ? [methods] : methods;
    const set = new Set(list);
    if (set.has('GET')) set.add('HEAD');
    this.routes.push({ ...opts, methods: set, pattern, ...compile(pattern), handler });
    return this;
  }

  /** First route whose pattern matches wins (register specific patterns first). */
  match(method: string, path: string): Match {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      if (!route.methods.has(method)) {
        allowed.push(...route.methods);
        continue;
      }
      const params: Params = {};
      for (let i = 0; i < route.names.length; i++) {
        const raw = m[i + 1]!;
        const last = route.rest && i === route.names.length - 1;
        let value: string;
        try {
          value = decodeURIComponent(raw);
        } catch {
          return { kind: 'bad-param', message: `malformed escape in "${raw}"` };
        }
        if (!last && value.includes('/'))
          return { kind: 'bad-param', message: `parameter ${route.names[i]} may not contain "/"` };
        if (value.includes('\0'))
          return { kind: 'bad-param', message: `parameter ${route.names[i]} may not contain NUL` };
        params[route.names[i]!] = last ? raw : value;
      }
      return { kind: 'found', route, params };
    }
    return allowed.length > 0 ? { kind: 'bad-method', allowed: [...new Set(allowed)] } : { kind: 'none' };
  }
}
