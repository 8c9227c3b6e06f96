/**
 * The main port's routes: everything the read-only port serves, the streaming routes, and the
 * debugging routes (/runningpods/, /configz, /logs/, /debug/...), gated by
 * enableDebuggingHandlers as upstream. Other subsystems mount here with one line each.
 */
import { sendJson, sendReply } from './respond.js';
import { READ_ONLY_ROUTES, type Route } from './routes.js';
import { Router } from './router.js';
import { mountStreamingRoutes } from './streaming-routes.js';
import { nodeLogsHandler } from './node-logs.js';
import { handleContainerLogs } from './container-logs.js';
import type { MainServerOptions, MainServerProvider } from './types.js';

/** Paths the read-only port and a disabled main port answer with 405 (upstream InstallDebuggingDisabledHandlers). */
const DEBUG_PATH_PREFIXES = [
  '/run/',
  '/exec/',
  '/attach/',
  '/portForward/',
  '/containerLogs/',
  '/runningpods/',
  '/debug/',
  '/logs/',
  '/configz',
];

export function isDebugPath(path: string): boolean {
  return DEBUG_PATH_PREFIXES.some((p) => path === p || path.startsWith(p) || path === p.replace(/\/$/, ''));
}

/** Mounts a read-only Reply route (provider → Reply) on the router. */
function mountReplyRoute(router: Router, path: string, route: Route, provider: MainServerProvider): void {
  router.add('GET', path, async (req, res) =>
    sendReply(res, await route(provider, new URL(req.url ?? '/', 'http://localhost').searchParams)),
  );
}

function diagnostics(): unknown {
  return {
    pid: process.pid,
    uptimeSeconds: process.uptime(),
    node: process.version,
    memory: process.memoryUsage(),
    resourceUsage: process.resourceUsage(),
  };
}

export function buildMainRouter(opts: MainServerOptions): Router {
  const router = new Router();
  const p = opts.provider;
  for (const [path, route] of Object.entries(READ_ONLY_ROUTES)) mountReplyRoute(router, path, route, p);
  mountStreamingRoutes(router, {
    provider: p,
    idleTimeoutMs: opts.streamingConnectionIdleTimeoutMs,
    maxStreams: opts.maxStreams ?? 64,
  });
  const debug = { debug: true };
  router
    .add(
      'GET',
      '/runningpods/',
      async (_q, res) =>
        sendJson(res, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: await p.runningPods() }),
      debug,
    )
    .add('GET', '/configz', (_q, res) => sendJson(res, { kubeletconfig: p.configz() }), debug)
    .add('GET', '/logs/{path...}', nodeLogsHandler(opts.nodeLogDir ?? '/var/log'), debug)
    .add('GET', '/debug/pprof/', (_q, res) => sendJson(res, diagnostics()), debug);
  const logs = opts.containerLogs;
  if (logs) {
    router.add(
      'GET',
      '/containerLogs/{namespace}/{pod}/{container}',
      (q, s, prm) =>
        handleContainerLogs(q, s, { namespace: prm.namespace!, pod: prm.pod!, container: prm.container! }, logs),
      { ...debug, longRunning: true },
    );
  }
  return router;
}
