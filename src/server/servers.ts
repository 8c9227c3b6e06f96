/**
 * The plain-HTTP servers: healthz (healthzBindAddress:healthzPort) and the read-only port
 * (address:readOnlyPort, off unless configured). Both answer GET/HEAD only, bound header size
 * and time, and never let a handler error take the process down.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { HEALTHZ_ROUTES, notFound, READ_ONLY_ROUTES, type Reply, type Route } from './routes.js';
import type { RunningServers, ServerAddress, ServerProvider, ServersOptions } from './types.js';
import type { Server as HttpsServer } from 'node:https';
import { trackRequest, type ServerType } from './http-metrics.js';
import { listenMain, type MainTlsServer } from './main-server.js';
import { buildMainRouter, isDebugPath } from './main-routes.js';

const MAX_HEADER_BYTES = 16 * 1024;

/** One plain-HTTP server: its name in logs, its routes, and its type in the request metrics (none for healthz). */
interface PlainServer {
  name: string;
  routes: Record<string, Route>;
  provider: ServerProvider;
  serverType?: ServerType;
}

async function handle(
  { routes, provider, serverType }: PlainServer,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let reply: Reply;
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  const end = serverType ? trackRequest(req.method ?? 'GET', path, serverType, false) : undefined;
  res.once('close', () => end?.());
  if (serverType === 'readonly' && isDebugPath(path)) {
    reply = { status: 405, contentType: 'text/plain', body: 'Debug endpoints are disabled.\n' };
  } else if (req.method !== 'GET' && req.method !== 'HEAD') {
    reply = { status: 405, contentType: 'text/plain', body: `405 method ${req.method} not allowed on ${path}\n` };
  } else {
    const route = routes[path];
    try {
      reply = route ? await route(provider, url.searchParams) : notFound(path);
    } catch (err) {
      log('server').error({ path, err: errorMessage(err) }, 'handler failed');
      reply = { status: 500, contentType: 'text/plain', body: `internal error: ${errorMessage(err)}\n` };
    }
  }
  res.writeHead(reply.status, { 'Content-Type': reply.contentType, 'Content-Length': Buffer.byteLength(reply.body) });
  res.end(req.method === 'HEAD' ? undefined : reply.body);
}

function listen(plain: PlainServer, addr: ServerAddress): Promise<Server> {
  const { name } = plain;
  const server = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: 30_000, headersTimeout: 10_000 },
    (req, res) => {
      void handle(plain, req, res).catch(() => res.destroy());
    },
  );
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.address, () => {
      server.off('error', reject);
      log('server').info(
        { server: name, address: addr.address, port: (server.address() as AddressInfo).port },
        'Serving',
      );
      resolve(server);
    });
  });
}

function close(server: Server | HttpsServer | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startServers(opts: ServersOptions): Promise<RunningServers> {
  const healthz =
    opts.healthz && opts.healthz.port !== 0
      ? await listen({ name: 'healthz', routes: HEALTHZ_ROUTES, provider: opts.provider }, opts.healthz)
      : undefined;
  let readOnly: Server | undefined;
  try {
    readOnly =
      opts.readOnly && opts.readOnly.port !== 0
        ? await listen(
            { name: 'read-only', routes: READ_ONLY_ROUTES, provider: opts.provider, serverType: 'readonly' },
            opts.readOnly,
          )
        : undefined;
  } catch (err) {
    await close(healthz);
    throw err;
  }
  let main: MainTlsServer | undefined;
  try {
    main = opts.main && opts.main.port !== 0 ? await listenMain(opts.main, buildMainRouter(opts.main)) : undefined;
  } catch (err) {
    await Promise.all([close(healthz), close(readOnly)]);
    throw err;
  }
  return {
    healthzPort: healthz ? (healthz.address() as AddressInfo).port : undefined,
    readOnlyPort: readOnly ? (readOnly.address() as AddressInfo).port : undefined,
    port: main ? (main.address() as AddressInfo).port : undefined,
    setServingPair: (cert, key) => main?.setServingPair(cert, key),
    close: async () => {
      await Promise.all([close(healthz), close(readOnly), close(main)]);
    },
  };
}
