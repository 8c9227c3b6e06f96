import { test } from 'node:test';
import { randomPort } from '../support/kubelet-process.js';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { startServers, type MainServerProvider } from '../../src/server/index.js';
import { upgradeRequest, WEBSOCKET_UPGRADE_HEADERS } from '../support/upgrade-request.js';
import { testTempDir } from '../support/temp-dir.js';

/** A stand-in for the runtime's streaming server: answers 101 and echoes; records headers. */
async function fakeStreamingServer() {
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    res.writeHead(400, { 'Content-Type': 'text/plain' }).end('not an upgrade');
  });
  server.on('upgrade', (req, socket: Socket) => {
    seen.push({ url: req.url!, headers: req.headers });
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n',
    );
    socket.on('data', (d) => socket.write(d));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test(
  'upgrade proxy: splices to the streaming URL, drops credentials, keeps the port query, bounds streams and idle time',
  { timeout: 60_000 },
  async () => {
    const fake = await fakeStreamingServer();
    const provider: MainServerProvider = {
      podsWithStatus: () => [],
      healthErrors: () => [],
      metrics: async () => ({ contentType: 'text/plain', body: '' }),
      findContainer: async () => ({ containerId: 'cid', podSandboxId: 'sid' }),
      findSandbox: async () => 'sid',
      runningPods: async () => [],
      configz: () => ({}),
      streaming: {
        execSync: async () => ({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 }),
        exec: async () => `${fake.url}/exec/token1`,
        attach: async () => `${fake.url}/attach/token2`,
        portForward: async () => `${fake.url}/portforward/token3`,
      },
    };
    const rootDir = testTempDir('kts-proxy-');
    const servers = await startServers({
      provider,
      main: {
        address: '127.0.0.1',
        port: randomPort(),
        provider,
        nodeName: 'n',
        rootDir,
        tlsCertFile: '',
        tlsPrivateKeyFile: '',
        tlsMinVersion: '',
        tlsCipherSuites: [],
        authentication: {
          x509: { clientCAFile: '' },
          webhook: { enabled: false, cacheTTLMs: 0 },
          anonymous: { enabled: true },
        },
        authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTLMs: 0, cacheUnauthorizedTTLMs: 0 } },
        enableDebuggingHandlers: true,
        streamingConnectionIdleTimeoutMs: 300,
        maxStreams: 2,
      },
    });
    const ca = readFileSync(join(rootDir, 'pki', 'kubelet.crt'));
    const open = (path: string) =>
      upgradeRequest({
        host: '127.0.0.1',
        port: servers.port!,
        path,
        ca,
        servername: 'localhost',
        agent: false,
        headers: { ...WEBSOCKET_UPGRADE_HEADERS, Authorization: 'Bearer secret' },
      });
    try {
      const a = await open('/exec/ns/p/c?command=sh&stdout=1');
      assert.equal(a.status, 101);
      a.socket!.write('ping');
      const echoed = await new Promise<string>((r) => a.socket!.once('data', (d) => r(d.toString())));
      assert.equal(echoed, 'ping');
      assert.equal(fake.seen[0]!.url, '/exec/token1');
      assert.equal(fake.seen[0]!.headers.authorization, undefined, 'credentials are not forwarded to the runtime');
      assert.equal(fake.seen[0]!.headers['sec-websocket-protocol'], 'v4.channel.k8s.io');

      const b = await open('/portForward/ns/p?port=8080');
      assert.equal(b.status, 101);
      assert.equal(fake.seen[1]!.url, '/portforward/token3?port=8080', 'the ports travel in the query');
      const c = await open('/attach/ns/p/c?stdin=1');
      assert.equal(c.status, 429, 'at most maxStreams live streams');

      // A loaded machine may reach this line after the 300 ms idle bound: a socket already closed
      // has fired its 'close' (waiting for it would hang).
      const closed = await Promise.all(
        [a, b].map(
          (s) =>
            new Promise<number>((r) => {
              const t0 = Date.now();
              if (s.socket!.destroyed) r(0);
              else s.socket!.on('close', () => r(Date.now() - t0));
            }),
        ),
      );
      for (const ms of closed) assert.ok(ms < 5000, `idle stream closed after ${ms} ms`);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await open('/attach/ns/p/c?stdin=1')).status, 101, 'closed streams free their slots');
      assert.equal((await open('/attach/ns/p/c')).status, 400, 'no stream asked for');
      const { registry } = await import('../../src/metrics/index.js');
      const inflight = (await registry.getSingleMetric('kubelet_http_inflight_requests')!.get()).values;
      const exec = inflight.find((v) => v.labels.path === 'exec' && v.labels.long_running === 'true');
      assert.equal(exec?.value, 0, 'a closed stream leaves the in-flight gauge');
    } finally {
      await servers.close();
      fake.server.closeAllConnections();
      fake.server.close();
    }
  },
);
