/**
 * /run, /exec, /attach and /portForward (upstream getRun/getExec/getAttach/getPortForward):
 * find the container or sandbox, ask CRI for a streaming URL, and proxy the upgrade to it.
 * /run is the non-streaming form: ExecSync, output returned in the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../errors.js';
import { sendText } from './respond.js';
import type { Params, RequestContext, Router } from './router.js';
import type { MainServerProvider } from './types.js';
import { proxyUpgrade, StreamLimiter } from './upgrade-proxy.js';

export interface StreamingRouteOptions {
  provider: MainServerProvider;
  idleTimeoutMs: number;
  maxStreams: number;
}

function flag(url: URL, ...names: string[]): boolean {
  return names.some((n) => ['1', 'true'].includes((url.searchParams.get(n) ?? '').toLowerCase()));
}

async function container(o: StreamingRouteOptions, res: ServerResponse, p: Params): Promise<string | undefined> {
  const found = await o.provider.findContainer(p.namespace!, p.pod!, p.container!, p.uid);
  if (!found) sendText(res, 404, `container ${p.container} of pod ${p.namespace}/${p.pod} is not running on this node`);
  return found?.containerId;
}

function needUpgrade(
  res: ServerResponse,
  ctx: RequestContext,
): ctx is RequestContext & { upgrade: NonNullable<RequestContext['upgrade']> } {
  if (ctx.upgrade) return true;
  sendText(
    res,
    400,
    'Upgrade request required: use a WebSocket (v4.channel.k8s.io / v5.channel.k8s.io) or SPDY/3.1 client',
  );
  return false;
}

/** upstream streaming options: at least one stream; a TTY merges stderr into stdout. */
function streamOptions(url: URL): { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean } | string {
  const tty = flag(url, 'tty');
  const o = {
    stdin: flag(url, 'stdin', 'input'),
    stdout: flag(url, 'stdout', 'output'),
    stderr: flag(url, 'stderr', 'error') && !tty,
    tty,
  };
  if (!o.stdin && !o.stdout && !o.stderr) return 'you must specify at least 1 of stdin, stdout, stderr';
  return o;
}

async function cri<T>(res: ServerResponse, what: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    sendText(res, 500, `${what}: ${errorMessage(err)}`);
    return undefined;
  }
}

export function mountStreamingRoutes(router: Router, o: StreamingRouteOptions): void {
  const limiter = new StreamLimiter(o.maxStreams);
  const proxy = { idleTimeoutMs: o.idleTimeoutMs, limiter };

  const run = async (_req: IncomingMessage, res: ServerResponse, p: Params, ctx: RequestContext) => {
    const cmd = (ctx.url.searchParams.get('cmd') ?? '').split(/\s+/).filter(Boolean);
    if (cmd.length === 0) return sendText(res, 400, 'missing command: give it in the "cmd" query parameter');
    const id = await container(o, res, p);
    if (!id) return;
    const out = await cri(res, 'ExecSync', () => o.provider.streaming.execSync(id, cmd, 0));
    if (!out) return;
    const body = Buffer.concat([out.stdout, out.stderr]);
    res.writeHead(200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': body.length,
      'X-Exit-Code': String(out.exitCode),
    });
    res.end(body);
  };

  const exec = async (req: IncomingMessage, res: ServerResponse, p: Params, ctx: RequestContext) => {
    if (!needUpgrade(res, ctx)) return;
    const cmd = ctx.url.searchParams.getAll('command');
    if (cmd.length === 0) return sendText(res, 400, 'missing command: give it in "command" query parameters');
    const s = streamOptions(ctx.url);
    if (typeof s === 'string') return sendText(res, 400, s);
    const id = await container(o, res, p);
    if (!id) return;
    const target = await cri(res, 'Exec', () => o.provider.streaming.exec({ containerId: id, cmd, ...s }));
    if (target) proxyUpgrade({ req, res, client: ctx.upgrade }, target, '', proxy);
  };

  const attach = async (req: IncomingMessage, res: ServerResponse, p: Params, ctx: RequestContext) => {
    if (!needUpgrade(res, ctx)) return;
    const s = streamOptions(ctx.url);
    if (typeof s === 'string') return sendText(res, 400, s);
    const id = await container(o, res, p);
    if (!id) return;
    const target = await cri(res, 'Attach', () => o.provider.streaming.attach({ containerId: id, ...s }));
    if (target) proxyUpgrade({ req, res, client: ctx.upgrade }, target, '', proxy);
  };

  const portForward = async (req: IncomingMessage, res: ServerResponse, p: Params, ctx: RequestContext) => {
    if (!needUpgrade(res, ctx)) return;
    const ports = ctx.url.searchParams
      .getAll('port')
      .flatMap((v) => v.split(','))
      .map(Number);
    if (ports.some((n) => !Number.isInteger(n) || n < 1 || n > 65535))
      return sendText(res, 400, 'port must be an integer 1-65535');
    const sandbox = await o.provider.findSandbox(p.namespace!, p.pod!, p.uid);
    if (!sandbox) return sendText(res, 404, `pod ${p.namespace}/${p.pod} has no running sandbox on this node`);
    const target = await cri(res, 'PortForward', () => o.provider.streaming.portForward(sandbox, ports));
    // The runtime reads the ports of a WebSocket port-forward from the query, as the client sent it.
    if (target) proxyUpgrade({ req, res, client: ctx.upgrade }, target, ctx.url.search, proxy);
  };

  const both = ['GET', 'POST'];
  const stream = { longRunning: true, debug: true };
  router
    .add('POST', '/run/{namespace}/{pod}/{container}', run, { debug: true })
    .add('POST', '/run/{namespace}/{pod}/{uid}/{container}', run, { debug: true })
    .add(both, '/exec/{namespace}/{pod}/{container}', exec, stream)
    .add(both, '/exec/{namespace}/{pod}/{uid}/{container}', exec, stream)
    .add(both, '/attach/{namespace}/{pod}/{container}', attach, stream)
    .add(both, '/attach/{namespace}/{pod}/{uid}/{container}', attach, stream)
    .add(both, '/portForward/{namespace}/{pod}', portForward, stream)
    .add(both, '/portForward/{namespace}/{pod}/{uid}', portForward, stream);
}
