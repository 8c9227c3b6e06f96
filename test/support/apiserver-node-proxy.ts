/**
 * What kube-apiserver does for `kubectl logs / exec / attach / port-forward`: the pod's
 * `log`, `exec`, `attach` and `portforward` subresources are proxied to the kubelet's main port
 * of the pod's node (its InternalIP and `daemonEndpoints.kubeletEndpoint.Port`), authenticated
 * with the apiserver's kubelet client certificate (CN kube-apiserver-kubelet-client, O
 * system:masters, signed by the test CA), the query rewritten to the kubelet's form
 * (`/containerLogs/…`, `/exec/…?command=…&input=1&output=1&error=1&tty=1`, `/attach/…`,
 * `/portForward/…`). Upgrades (SPDY or WebSocket) are piped byte for byte after the request head
 * is rewritten, so the real kubectl talks to the real kubelet through it. A fixture, not product.
 */
import { execFileSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiStore, Obj } from './apiserver-store.js';
import type { TestCerts } from './test-certs.js';

const SUBRESOURCE = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(log|exec|attach|portforward)$/;

export class ProxyError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface Target {
  host: string;
  port: number;
  path: string;
}

/** The apiserver's kubelet client pair, made once per CA directory. */
function kubeletClientPair(certs: TestCerts): { cert: string; key: string } {
  const dir = certs.dir;
  const cert = join(dir, 'apiserver-kubelet-client.crt');
  try {
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(join(dir, 'apiserver-kubelet-client.key'), 'utf8') };
  } catch {
    /* make it */
  }
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'apiserver-kubelet-client.key',
    '-out',
    'apiserver-kubelet-client.csr',
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
  ]);
  run([
    'x509',
    '-req',
    '-in',
    'apiserver-kubelet-client.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'apiserver-kubelet-client.crt',
    '-days',
    '2',
  ]);
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(join(dir, 'apiserver-kubelet-client.key'), 'utf8') };
}

const FLAG_RENAMES: Record<string, string> = { stdin: 'input', stdout: 'output', stderr: 'error', tty: 'tty' };

export class NodeProxy {
  private pair: { cert: string; key: string } | undefined;

  constructor(
    private readonly store: ApiStore,
    private readonly certs: TestCerts,
  ) {}

  matches(path: string): boolean {
    return SUBRESOURCE.test(path);
  }

  /** The kubelet URL for a pod subresource request (upstream's LogLocation / streamLocation / PortForwardLocation). */
  target(url: URL): Target {
    const [, ns, name, sub] = SUBRESOURCE.exec(url.pathname)!;
    const pod = this.store.get('pods', ns, name!);
    if (!pod) throw new ProxyError(404, `pods "${name}" not found`);
    const spec = (pod.spec ?? {}) as { nodeName?: string; containers?: { name: string }[] };
    if (!spec.nodeName) throw new ProxyError(400, `pod ${name} does not have a host assigned`);
    const node = this.store.get('nodes', undefined, spec.nodeName) as Obj | undefined;
    const status = (node?.status ?? {}) as {
      addresses?: { type: string; address: string }[];
      daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
    };
    const host = status.addresses?.find((a) => a.type === 'InternalIP')?.address;
    const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
    if (!host || !port) throw new ProxyError(503, `node ${spec.nodeName} has no InternalIP or kubelet port`);
    const q = new URLSearchParams();
    if (sub === 'portforward') {
      for (const p of url.searchParams.getAll('ports')) q.append('port', p);
      return { host, port, path: `/portForward/${ns}/${name}${q.size ? `?${q}` : ''}` };
    }
    let container = url.searchParams.get('container');
    if (!container) {
      const names = (spec.containers ?? []).map((c) => c.name);
      if (names.length !== 1)
        throw new ProxyError(
          400,
          `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`,
        );
      container = names[0]!;
    }
    if (sub === 'log') {
      for (const k of ['follow', 'previous', 'sinceSeconds', 'sinceTime', 'timestamps', 'tailLines', 'limitBytes']) {
        const v = url.searchParams.get(k);
        if (v !== null) q.set(k, v);
      }
      return { host, port, path: `/containerLogs/${ns}/${name}/${container}${q.size ? `?${q}` : ''}` };
    }
    for (const c of url.searchParams.getAll('command')) q.append('command', c);
    for (const [from, to] of Object.entries(FLAG_RENAMES))
      if (['1', 'true'].includes(url.searchParams.get(from) ?? '')) q.set(to, '1');
    return { host, port, path: `/${sub}/${ns}/${name}/${container}?${q}` };
  }

  /** A plain request (logs): forwarded, answer piped back. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): void {
    let t: Target;
    try {
      t = this.target(url);
    } catch (err) {
      return fail(res, err);
    }
    const pair = (this.pair ??= kubeletClientPair(this.certs));
    const out = httpsRequest(
      {
        host: t.host,
        port: t.port,
        path: t.path,
        method: req.method,
        cert: pair.cert,
        key: pair.key,
        rejectUnauthorized: false,
      },
      (kres) => {
        res.writeHead(kres.statusCode ?? 502, { 'content-type': kres.headers['content-type'] ?? 'text/plain' });
        kres.pipe(res);
      },
    );
    out.on('error', (err) => fail(res, new ProxyError(502, `error dialing the kubelet: ${err.message}`)));
    res.on('close', () => out.destroy());
    out.end();
  }

  /** An upgrade (exec, attach, port-forward): the head rewritten, then the bytes piped both ways. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    let t: Target;
    try {
      t = this.target(url);
    } catch (err) {
      const e = err instanceof ProxyError ? err : new ProxyError(500, String(err));
      socket.end(
        `HTTP/1.1 ${e.code} Error\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(e.message)}\r\nconnection: close\r\n\r\n${e.message}`,
      );
      return;
    }
    const pair = (this.pair ??= kubeletClientPair(this.certs));
    const kubelet = tlsConnect(
      { host: t.host, port: t.port, cert: pair.cert, key: pair.key, rejectUnauthorized: false, servername: undefined },
      () => {
        const lines = [`${req.method} ${t.path} HTTP/1.1`, `Host: ${t.host}:${t.port}`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const k = req.rawHeaders[i]!.toLowerCase();
          if (k === 'host' || k === 'authorization') continue; // the kubelet gets the apiserver's identity, not the user's token
          lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        }
        kubelet.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length) kubelet.write(head);
        kubelet.pipe(socket);
        socket.pipe(kubelet);
      },
    );
    const close = () => {
      kubelet.destroy();
      socket.destroy();
    };
    kubelet.on('error', close);
    socket.on('error', close);
    kubelet.on('close', () => socket.end());
    socket.on('close', () => kubelet.destroy());
  }
}

function fail(res: ServerResponse, err: unknown): void {
  const e = err instanceof ProxyError ? err : new ProxyError(500, String(err));
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: e.message,
    code: e.code,
  });
  res.writeHead(e.code, { 'content-type': 'application/json' });
  res.end(body);
}
