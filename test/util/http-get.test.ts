import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  HttpGetError,
  httpGet,
  MAX_RESP_BODY_BYTES,
  newRequestForHTTPGetAction,
  resolveContainerPort,
} from '../../src/util/http-get.js';

const web = {
  name: 'web',
  ports: [
    { name: 'http', containerPort: 8080 },
    { name: 'admin', containerPort: 9090 },
  ],
};

describe('resolveContainerPort (upstream probe.ResolveContainerPort)', () => {
  it('numbers, named ports, numeric strings', () => {
    assert.equal(resolveContainerPort(80, web), 80);
    assert.equal(resolveContainerPort('admin', web), 9090);
    assert.equal(resolveContainerPort('8081', web), 8081);
  });
  it('unknown names and out-of-range ports are errors', () => {
    assert.throws(() => resolveContainerPort('nope', web), HttpGetError);
    assert.throws(() => resolveContainerPort(0, web), /invalid port number: 0/);
    assert.throws(() => resolveContainerPort(70000, web), /invalid port number/);
  });
});

describe('newRequestForHTTPGetAction', () => {
  it('defaults: http, the pod IP, User-Agent kube-<purpose>/<version>, Accept */*', () => {
    const r = newRequestForHTTPGetAction({ port: 'http', path: '/healthz?x=1' }, web, '10.0.0.7', 'lifecycle');
    assert.equal(r.url.href, 'http://10.0.0.7:8080/healthz?x=1');
    assert.deepEqual(
      r.headers.map(([k]) => k),
      ['User-Agent', 'Accept'],
    );
    assert.match(r.headers[0]![1], /^kube-lifecycle\/\d+\.\d+$/);
    assert.equal(r.headers[1]![1], '*/*');
    assert.equal(r.hostHeader, '');
  });
  it('scheme is case-insensitive; an explicit host wins; IPv6 is bracketed; a path without / gets one', () => {
    assert.equal(
      newRequestForHTTPGetAction({ port: 443, scheme: 'HTTPS', host: 'example.test' }, web, '10.0.0.7', 'probe').url
        .href,
      'https://example.test/',
    );
    assert.equal(
      newRequestForHTTPGetAction({ port: 80, path: 'x' }, web, 'fd00::5', 'probe').url.href,
      'http://[fd00::5]/x',
    );
  });
  it('headers: own User-Agent kept, empty Accept removed, Host becomes the request host', () => {
    const r = newRequestForHTTPGetAction(
      {
        port: 80,
        httpHeaders: [
          { name: 'user-agent', value: 'me' },
          { name: 'Accept', value: '' },
          { name: 'Host', value: 'svc.local' },
          { name: 'X-A', value: '1' },
        ],
      },
      web,
      '10.0.0.7',
      'probe',
    );
    assert.deepEqual(r.headers, [
      ['user-agent', 'me'],
      ['X-A', '1'],
    ]);
    assert.equal(r.hostHeader, 'svc.local');
  });
  it('no host and no pod IP is an error', () => {
    assert.throws(() => newRequestForHTTPGetAction({ port: 80 }, web, '', 'lifecycle'), /no host/);
  });
});

describe('httpGet', () => {
  let server: http.Server;
  let port: number;
  const seen: Array<{ url: string; host: string; auth?: string }> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', host: req.headers.host ?? '', auth: req.headers.authorization });
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/redirect-local') {
        res.writeHead(302, { Location: '/ok' });
        res.end();
      } else if (url.pathname === '/redirect-other') {
        res.writeHead(301, { Location: `http://localhost:${port}/ok` });
        res.end();
      } else if (url.pathname === '/loop') {
        res.writeHead(302, { Location: '/loop' });
        res.end();
      } else if (url.pathname === '/big') {
        res.end('y'.repeat(5 * MAX_RESP_BODY_BYTES));
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('late'), 2000).unref();
      } else if (url.pathname === '/err') {
        res.writeHead(500);
        res.end('boom');
      } else {
        res.end('ok');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const req = (path: string, extra: { scheme?: string; headers?: Array<{ name: string; value: string }> } = {}) =>
    newRequestForHTTPGetAction(
      {
        port,
        path,
        host: '127.0.0.1',
        ...(extra.scheme ? { scheme: extra.scheme } : {}),
        ...(extra.headers ? { httpHeaders: extra.headers } : {}),
      },
      web,
      '',
      'probe',
    );

  it('follows a redirect to the same host', async () => {
    const r = await httpGet(req('/redirect-local'), { timeoutMs: 5000 });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body.toString(), 'ok');
    assert.equal(r.redirects, 1);
    assert.equal(r.nonLocalRedirect, false);
  });

  it('does not follow a redirect to another host: the 3xx is the result', async () => {
    const r = await httpGet(req('/redirect-other'), { timeoutMs: 5000 });
    assert.equal(r.statusCode, 301);
    assert.equal(r.nonLocalRedirect, true);
    const followed = await httpGet(req('/redirect-other'), { timeoutMs: 5000, followNonLocalRedirects: true });
    assert.equal(followed.statusCode, 200);
  });

  it('stops after 10 redirects', async () => {
    await assert.rejects(httpGet(req('/loop'), { timeoutMs: 5000 }), /stopped after 10 redirects/);
  });

  it('reads at most maxBodyBytes of the body', async () => {
    const r = await httpGet(req('/big'), { timeoutMs: 5000 });
    assert.equal(r.body.length, MAX_RESP_BODY_BYTES);
    assert.equal(r.truncated, true);
  });

  it('a status code is a response, not an error; a deadline and a refused connection are', async () => {
    assert.equal((await httpGet(req('/err'), { timeoutMs: 5000 })).statusCode, 500);
    await assert.rejects(
      httpGet(req('/slow'), { timeoutMs: 200 }),
      (e: unknown) => e instanceof HttpGetError && /timeout/.test((e as Error).message),
    );
    const closed = newRequestForHTTPGetAction({ port: 1, host: '127.0.0.1' }, web, '', 'probe');
    await assert.rejects(
      httpGet(closed, { timeoutMs: 5000 }),
      (e: unknown) => e instanceof HttpGetError && /ECONNREFUSED/.test((e as Error).message),
    );
  });

  it('https answered in plain HTTP falls back to http without Authorization, only when asked', async () => {
    const r = req('/fallback', { scheme: 'HTTPS', headers: [{ name: 'Authorization', value: 'Bearer t' }] });
    await assert.rejects(httpGet(r, { timeoutMs: 5000 }), HttpGetError);
    seen.length = 0;
    const ok = await httpGet(r, { timeoutMs: 5000, httpFallback: true });
    assert.equal(ok.fellBackToHttp, true);
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(
      seen.map((s) => [s.url, s.auth]),
      [['/fallback', undefined]],
    );
  });

  it('sends the Host header override', async () => {
    seen.length = 0;
    await httpGet(req('/h', { headers: [{ name: 'Host', value: 'svc.example' }] }), { timeoutMs: 5000 });
    assert.equal(seen[0]!.host, 'svc.example');
  });
});
