/**
 * The main port (address:port, default 0.0.0.0:10250) over TLS. Every request, plain or
 * upgrade, goes through one filter as upstream's InstallAuthFilter: authenticate (401),
 * authorize the node-resource attributes (403 naming user, verb, resource, subresource), then
 * route. Bounded: header size, header/request/idle timeouts, TLS handshake time, connections.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import {
  AuthenticationFailed,
  buildAuth,
  forbiddenMessage,
  requestAttributes,
  type Authenticator,
  type Authorizer,
} from './auth/index.js';
import { trackRequest } from './http-metrics.js';
import { sendText } from './respond.js';
import type { RequestContext, Router } from './router.js';
import { serverTlsOptions, servingCert } from './tls.js';
import type { MainServerOptions } from './types.js';

const MAX_HEADER_BYTES = 16 * 1024;
const MAX_CONNECTIONS = 1024;

interface Gate {
  authenticator: Authenticator;
  authorizer: Authorizer;
  nodeName: string;
  enableDebuggingHandlers: boolean;
  /** KubeletFineGrainedAuthz: /pods, /healthz, /configz, /runningpods/ try their own subresource before proxy. */
  fineGrained: boolean;
}

/** Everything a request on the main port goes through: the gate, then the router. */
interface MainPort {
  gate: Gate;
  router: Router;
}

async function authorize(gate: Gate, req: IncomingMessage, res: ServerResponse, ctx: RequestContext): Promise<boolean> {
  try {
    ctx.user = await gate.authenticator.authenticate(req);
  } catch (err) {
    if (!(err instanceof AuthenticationFailed)) throw err;
    log('server').debug({ path: ctx.url.pathname, reason: err.message }, 'Unauthorized');
  }
  if (!ctx.user) {
    sendText(res, 401, 'Unauthorized');
    return false;
  }
  const attrs = requestAttributes(
    ctx.user,
    { method: req.method ?? 'GET', path: ctx.url.pathname, upgrade: ctx.upgrade !== undefined },
    gate.nodeName,
    gate.fineGrained,
  );
  // Fine-grained first, then proxy (upstream): the first allowed one lets the request through.
  const reasons: string[] = [];
  for (const a of attrs) {
    const decision = await gate.authorizer.authorize(a);
    if (decision.allowed) return true;
    if (decision.reason) reasons.push(decision.reason);
  }
  const subresources = attrs.map((a) => a.subresource);
  log('server').info({ user: ctx.user.name, verb: attrs[0]!.verb, subresources, reasons }, 'Forbidden');
  sendText(res, 403, forbiddenMessage(attrs) + (reasons.length ? `: ${[...new Set(reasons)].join('; ')}` : ''));
  return false;
}

/** Authenticate, authorize, route; errors become 500 without disturbing the agent. */
async function dispatch(
  { gate, router }: MainPort,
  req: IncomingMessage,
  res: ServerResponse,
  upgrade?: RequestContext['upgrade'],
): Promise<void> {
  const method = req.method ?? 'GET';
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'https://kubelet');
  } catch {
    sendText(res, 400, 'malformed request URL');
    return;
  }
  const match = router.match(method, url.pathname);
  const longRunning = match.kind === 'found' && match.route.longRunning === true;
  const end = trackRequest(method, url.pathname, 'readwrite', longRunning);
  // An upgraded stream outlives its response object: it ends when its socket closes.
  (upgrade ? upgrade.socket : res).once('close', end);
  const ctx: RequestContext = { url, upgrade };
  try {
    if (!(await authorize(gate, req, res, ctx))) return;
    if (match.kind === 'none') return sendText(res, 404, `404 page not found: ${url.pathname}`);
    if (match.kind === 'bad-method')
      return sendText(res, 405, `405 method ${method} not allowed on ${url.pathname}`, {
        Allow: match.allowed.join(', '),
      });
    if (match.kind === 'bad-param') return sendText(res, 400, `bad request: ${match.message}`);
    if (match.route.debug && !gate.enableDebuggingHandlers) return sendText(res, 405, 'Debug endpoints are disabled.');
    await match.route.handler(req, res, match.params, ctx);
  } catch (err) {
    log('server').error({ path: url.pathname, err: errorMessage(err) }, 'handler failed');
    sendText(res, 500, `internal error: ${errorMessage(err)}`);
  } finally {
    if (!upgrade) end();
  }
}

/** An upgrade request gets a ServerResponse on its raw socket so refusals are plain HTTP replies. */
function onUpgrade(port: MainPort, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => socket.end());
  socket.on('error', () => socket.destroy());
  void dispatch(port, req, res, { socket, head }).catch(() => socket.destroy());
}

/** The main port's server, with the one thing that may change while it runs: its serving pair. */
export type MainTlsServer = Server & { setServingPair(cert: Buffer, key: Buffer): void };

export function listenMain(opts: MainServerOptions, router: Router): Promise<MainTlsServer> {
  const pair = servingCert({
    certFile: opts.tlsCertFile,
    keyFile: opts.tlsPrivateKeyFile,
    rootDir: opts.rootDir,
    nodeName: opts.nodeName,
    ips: opts.nodeIPs,
  });
  const tlsSettings = {
    minVersion: opts.tlsMinVersion,
    cipherSuites: opts.tlsCipherSuites,
    clientCAFile: opts.authentication.x509.clientCAFile,
  };
  const tls = serverTlsOptions(pair, tlsSettings);
  const { authenticator, authorizer } = buildAuth({
    authentication: opts.authentication,
    authorization: opts.authorization,
    clientCA: !!opts.authentication.x509.clientCAFile,
    client: opts.reviewClient,
  });
  const gate: Gate = {
    authenticator,
    authorizer,
    nodeName: opts.nodeName,
    enableDebuggingHandlers: opts.enableDebuggingHandlers,
    fineGrained: opts.featureGates?.enabled('KubeletFineGrainedAuthz') ?? true,
  };
  const port: MainPort = { gate, router };
  const server = createServer(
    {
      ...tls,
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: 60_000,
      headersTimeout: 10_000,
      connectionsCheckingInterval: 2_000,
    },
    (req, res) => {
      void dispatch(port, req, res).catch(() => res.destroy());
    },
  );
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => onUpgrade(port, req, socket, head));
  server.on('tlsClientError', (err) => log('server').debug({ err: errorMessage(err) }, 'TLS handshake failed'));
  // A certificate issued later (serverTLSBootstrap) replaces the pair for new handshakes.
  (server as MainTlsServer).setServingPair = (cert, key) =>
    server.setSecureContext(serverTlsOptions({ cert, key }, tlsSettings));
  server.keepAliveTimeout = 5_000;
  // Idle plain connections are dropped; upgraded streams set their own idle timeout.
  server.timeout = 120_000;
  server.maxConnections = MAX_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => {
      server.off('error', reject);
      log('server').info(
        {
          server: 'main',
          address: opts.address,
          port: (server.address() as { port: number }).port,
          authorization: opts.authorization.mode,
        },
        'Serving (TLS)',
      );
      resolve(server as MainTlsServer);
    });
  });
}
