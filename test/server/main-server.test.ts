import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { connect as netConnect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import {
  startServers,
  type MainServerOptions,
  type MainServerProvider,
  type RunningServers,
} from '../../src/server/index.js';
import { reviewClientFromKubeconfig } from '../../src/server/auth/index.js';
import { makeCA, issue, type CertFiles, type TestCA } from '../support/pki.js';
import {
  createReviewWebhook,
  startReviewServer,
  type ReviewServer,
  type ReviewWebhook,
} from '../support/review-webhook.js';
import { startSymlinkSwap } from '../support/symlink-swap.js';
import { WEBSOCKET_UPGRADE_HEADERS } from '../support/upgrade-request.js';
import { testTempDir } from '../support/temp-dir.js';

let ca: TestCA;
let otherCA: TestCA;
let alice: CertFiles;
let mallory: CertFiles;
let hook: ReviewWebhook;
let review: ReviewServer;
let logDir: string;
let outsideDir: string;
let allowed = new Set<string>();

const execCalls: string[][] = [];
const provider: MainServerProvider = {
  podsWithStatus: () => [{ metadata: { name: 'p', namespace: 'ns' } }],
  healthErrors: () => [],
  metrics: async () => ({ contentType: 'text/plain', body: 'kubelet_running_pods 1\n' }),
  findContainer: async (ns, pod, c) =>
    ns === 'ns' && pod === 'p' && c === 'c' ? { containerId: 'cid', podSandboxId: 'sid' } : undefined,
  findSandbox: async (ns, pod) => (ns === 'ns' && pod === 'p' ? 'sid' : undefined),
  runningPods: async () => [{ metadata: { name: 'p', namespace: 'ns', uid: 'u1' } }],
  configz: () => ({ kind: 'KubeletConfiguration', port: 10250 }),
  streaming: {
    execSync: async (_id, cmd) => {
      execCalls.push(cmd);
      return { stdout: Buffer.from(`out:${cmd.join(' ')}\n`), stderr: Buffer.from('err\n'), exitCode: 3 };
    },
    exec: async () => 'http://127.0.0.1:1/exec/x',
    attach: async () => 'http://127.0.0.1:1/attach/x',
    portForward: async () => 'http://127.0.0.1:1/portforward/x',
  },
};

before(() => {
  ca = makeCA('client-ca');
  otherCA = makeCA('other-ca');
  alice = issue(ca, 'alice', { cn: 'alice', groups: ['admins'] });
  mallory = issue(otherCA, 'mallory', { cn: 'alice', groups: ['admins'] });
  logDir = testTempDir('kts-varlog-');
  writeFileSync(join(logDir, 'syslog'), 'hello from syslog\n');
  mkdirSync(join(logDir, 'sub'));
  writeFileSync(join(logDir, 'sub', 'x.log'), 'nested\n');
  symlinkSync('/etc/hostname', join(logDir, 'escape'));
  symlinkSync('/etc', join(logDir, 'etcdir'));
  symlinkSync(join(logDir, 'syslog'), join(logDir, 'inner-link'));
  execFileSync('mkfifo', [join(logDir, 'fifo')]);
  outsideDir = testTempDir('kts-outside-');
  writeFileSync(join(outsideDir, 'x.log'), 'secret outside the log directory\n');
});

before(async () => {
  hook = createReviewWebhook({
    tokens: { 'good-token': { username: 'bob', groups: ['viewers'] } },
    authorize: (spec) => {
      const key = `${spec.user}:${spec.resourceAttributes?.verb}:${spec.resourceAttributes?.subresource}`;
      return allowed.has(key) ? { allowed: true } : { allowed: false, reason: 'test policy says no' };
    },
  });
  review = await startReviewServer(hook, ca);
});

after(async () => {
  await review?.close();
});

/** A port the kernel just handed out (random picks collide with parallel test runs). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function mainOptions(over: Partial<MainServerOptions> = {}): Promise<MainServerOptions> {
  return {
    address: '127.0.0.1',
    port: await freePort(),
    provider,
    nodeName: 'node-a',
    rootDir: testTempDir('kts-root-'),
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    tlsMinVersion: '',
    tlsCipherSuites: [],
    authentication: {
      x509: { clientCAFile: ca.cert },
      webhook: { enabled: false, cacheTTLMs: 120_000 },
      anonymous: { enabled: false },
    },
    authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 } },
    enableDebuggingHandlers: true,
    streamingConnectionIdleTimeoutMs: 60_000,
    nodeLogDir: logDir,
    ...over,
  };
}

async function start(
  over: Partial<MainServerOptions> = {},
): Promise<{ servers: RunningServers; opts: MainServerOptions; servingCA: Buffer }> {
  const opts = await mainOptions(over);
  const servers = await startServers({
    provider,
    main: opts,
    readOnly: { address: '127.0.0.1', port: await freePort() },
  });
  return { servers, opts, servingCA: readFileSync(join(opts.rootDir, 'pki', 'kubelet.crt')) };
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

function call(
  port: number,
  servingCA: Buffer,
  path: string,
  o: {
    cert?: CertFiles;
    method?: string;
    token?: string;
    headers?: Record<string, string>;
    maxVersion?: 'TLSv1.2';
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        ca: servingCA,
        servername: 'localhost',
        timeout: 10_000,
        agent: false,
        ...(o.cert ? { cert: readFileSync(o.cert.cert), key: readFileSync(o.cert.key) } : {}),
        ...(o.maxVersion ? { maxVersion: o.maxVersion } : {}),
        headers: { ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}), ...o.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('x509: no certificate → 401, another CA → 401, a valid one → 200 (AlwaysAllow)', async () => {
  const { servers, servingCA } = await start();
  try {
    const port = servers.port!;
    const none = await call(port, servingCA, '/pods');
    assert.equal(none.status, 401);
    assert.match(none.body, /Unauthorized/);
    assert.equal(
      (await call(port, servingCA, '/pods', { cert: mallory })).status,
      401,
      'a certificate from another CA is rejected',
    );
    const ok = await call(port, servingCA, '/pods', { cert: alice });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).kind, 'PodList');
    assert.equal((await call(port, servingCA, '/healthz', { cert: alice })).body, 'ok');
    assert.equal((await call(port, servingCA, '/nope', { cert: alice })).status, 404);
  } finally {
    await servers.close();
  }
});

test('Webhook: denied → 403 naming user, verb, resource, subresource; allowed → 200; SAR carries upstream attributes', async () => {
  const { servers, servingCA } = await start({
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 0 } },
    reviewClient: reviewClientFromKubeconfig(review.kubeconfig),
  });
  try {
    const port = servers.port!;
    allowed = new Set();
    hook.accessReviews.length = 0;
    const denied = await call(port, servingCA, '/metrics/cadvisor', { cert: alice });
    assert.equal(denied.status, 403);
    assert.match(denied.body, /Forbidden \(user=alice, verb=get, resource=nodes, subresource\(s\)=\[metrics\]\)/);
    const sar = hook.accessReviews.at(-1)!;
    assert.equal(sar.user, 'alice');
    assert.deepEqual(sar.groups, ['admins', 'system:authenticated']);
    assert.deepEqual(sar.resourceAttributes, {
      namespace: '',
      verb: 'get',
      group: '',
      version: 'v1',
      resource: 'nodes',
      subresource: 'metrics',
      name: 'node-a',
    });

    const run = await call(port, servingCA, '/run/ns/p/c?cmd=echo%20hi', { cert: alice, method: 'POST' });
    assert.equal(run.status, 403);
    assert.match(run.body, /verb=create, resource=nodes, subresource\(s\)=\[proxy\]/);

    allowed = new Set(['alice:get:pods', 'alice:get:stats', 'alice:create:proxy', 'bob:get:proxy']);
    assert.equal((await call(port, servingCA, '/pods', { cert: alice })).status, 200);
    assert.equal(hook.accessReviews.at(-1)!.resourceAttributes!.subresource, 'pods');
    const reviewsBefore = hook.accessReviews.length;
    assert.equal((await call(port, servingCA, '/pods', { cert: alice })).status, 200);
    assert.equal(hook.accessReviews.length, reviewsBefore, 'an allowed answer is cached');

    // Bearer tokens through TokenReview are off (webhook.enabled false): a token alone is 401.
    assert.equal((await call(port, servingCA, '/pods', { token: 'good-token' })).status, 401);
  } finally {
    await servers.close();
  }
});

test('fine-grained subresources first, proxy as the fallback; an upgrade needs create', async () => {
  const { servers, servingCA } = await start({
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTLMs: 0, cacheUnauthorizedTTLMs: 0 } },
    reviewClient: reviewClientFromKubeconfig(review.kubeconfig),
  });
  const tried = async (path: string, o: Parameters<typeof call>[3] = {}) => {
    hook.accessReviews.length = 0;
    const r = await call(servers.port!, servingCA, path, { cert: alice, ...o });
    return {
      status: r.status,
      body: r.body,
      tried: hook.accessReviews.map((x) => `${x.resourceAttributes!.verb} ${x.resourceAttributes!.subresource}`),
    };
  };
  try {
    // Only the fine-grained permissions: no proxy needed for pods, healthz, configz, runningpods.
    allowed = new Set(['alice:get:pods', 'alice:get:healthz', 'alice:get:configz']);
    for (const [path, sub] of [
      ['/pods', 'pods'],
      ['/healthz', 'healthz'],
      ['/configz', 'configz'],
      ['/runningpods/', 'pods'],
    ] as const) {
      const r = await tried(path);
      assert.deepEqual([r.status, r.tried], [200, [`get ${sub}`]], path);
    }
    assert.equal((await tried('/stats/summary')).status, 403, 'stats has no fallback and was not granted');

    // Only get proxy: the fine-grained check is denied, the fallback allows (as upstream).
    allowed = new Set(['alice:get:proxy']);
    for (const [path, sub] of [
      ['/pods', 'pods'],
      ['/healthz', 'healthz'],
      ['/configz', 'configz'],
      ['/runningpods/', 'pods'],
    ] as const) {
      const r = await tried(path);
      assert.equal(r.status, 200, path);
      assert.deepEqual(r.tried, [`get ${sub}`, 'get proxy'], path);
    }
    const metrics = await tried('/metrics');
    assert.deepEqual([metrics.status, metrics.tried], [403, ['get metrics']], 'metrics does not fall back to proxy');
    assert.match(metrics.body, /subresource\(s\)=\[metrics\]/);

    // get nodes/proxy is a read permission: it must not open exec, attach or port-forward.
    const upgrade = { headers: { ...WEBSOCKET_UPGRADE_HEADERS } };
    for (const path of ['/exec/ns/p/c?command=id&stdout=1', '/attach/ns/p/c?stdout=1', '/portForward/ns/p?port=80']) {
      const r = await tried(path, upgrade);
      assert.equal(r.status, 403, path);
      assert.deepEqual(r.tried, ['create proxy'], path);
      assert.match(r.body, /Forbidden \(user=alice, verb=create, resource=nodes, subresource\(s\)=\[proxy\]\)/);
    }
    const spdy = await tried('/exec/ns/p/c?command=id&stdout=1', {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' },
    });
    assert.deepEqual([spdy.status, spdy.tried], [403, ['create proxy']]);
    // With create nodes/proxy the upgrade passes authorization (and reaches the fake runtime URL).
    allowed = new Set(['alice:create:proxy']);
    const through = await tried('/exec/ns/p/c?command=id&stdout=1', upgrade);
    assert.notEqual(through.status, 403);
    assert.deepEqual(through.tried, ['create proxy']);
  } finally {
    await servers.close();
  }
});

test('bearer tokens through TokenReview; bad token → 401 even with anonymous on', async () => {
  const { servers, servingCA } = await start({
    authentication: {
      x509: { clientCAFile: ca.cert },
      webhook: { enabled: true, cacheTTLMs: 120_000 },
      anonymous: { enabled: true },
    },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 } },
    reviewClient: reviewClientFromKubeconfig(review.kubeconfig),
  });
  try {
    const port = servers.port!;
    allowed = new Set(['bob:get:proxy']);
    hook.tokenReviews.length = 0;
    assert.equal((await call(port, servingCA, '/pods', { token: 'good-token' })).status, 200);
    assert.equal((await call(port, servingCA, '/pods', { token: 'good-token' })).status, 200);
    assert.equal(hook.tokenReviews.length, 1, 'the TokenReview answer is cached');
    assert.equal((await call(port, servingCA, '/pods', { token: 'bad-token' })).status, 401);
    // Union as upstream: a rejected credential fails the request unless another one succeeds.
    assert.equal((await call(port, servingCA, '/pods', { token: 'bad-token', cert: mallory })).status, 401);
    assert.equal(
      (await call(port, servingCA, '/pods', { cert: mallory })).status,
      401,
      'a foreign certificate is not anonymous',
    );
    assert.equal(
      (await call(port, servingCA, '/pods', { token: 'good-token', cert: mallory })).status,
      200,
      'a valid token wins over a rejected certificate',
    );
    const anon = await call(port, servingCA, '/pods');
    assert.equal(anon.status, 403, 'anonymous is authenticated, then authorized by the webhook');
    assert.match(anon.body, /user=system:anonymous/);
    assert.deepEqual(hook.accessReviews.at(-1)!.groups, ['system:unauthenticated']);
  } finally {
    await servers.close();
  }
});

test('anonymous only when configured; Webhook without an API server denies everything', async () => {
  const a = await start({
    authentication: {
      x509: { clientCAFile: '' },
      webhook: { enabled: true, cacheTTLMs: 1 },
      anonymous: { enabled: true },
    },
  });
  try {
    assert.equal((await call(a.servers.port!, a.servingCA, '/pods')).status, 200);
  } finally {
    await a.servers.close();
  }
  const b = await start({
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTLMs: 1, cacheUnauthorizedTTLMs: 1 } },
  });
  try {
    const r = await call(b.servers.port!, b.servingCA, '/pods', { cert: alice });
    assert.equal(r.status, 403);
    assert.match(r.body, /no API server configured/);
  } finally {
    await b.servers.close();
  }
});

test('routes: /run output, /exec needs an upgrade, runningpods, configz, debug gating, read-only 405', async () => {
  const { servers, servingCA } = await start();
  try {
    const port = servers.port!;
    const run = await call(port, servingCA, '/run/ns/p/c?cmd=echo%20hello%20world', { cert: alice, method: 'POST' });
    assert.equal(run.status, 200);
    assert.equal(run.body, 'out:echo hello world\nerr\n');
    assert.equal(run.headers['x-exit-code'], '3');
    assert.equal((await call(port, servingCA, '/run/ns/p/nope?cmd=true', { cert: alice, method: 'POST' })).status, 404);
    assert.equal(
      (await call(port, servingCA, '/run/ns/p/c?cmd=true', { cert: alice })).status,
      405,
      '/run is POST only',
    );
    assert.equal((await call(port, servingCA, '/exec/ns/p/c?command=true&stdout=1', { cert: alice })).status, 400);
    assert.equal(
      (await call(port, servingCA, '/run/ns/p%2Fx/c?cmd=true', { cert: alice, method: 'POST' })).status,
      400,
      'encoded slash in a segment',
    );
    const rp = JSON.parse((await call(port, servingCA, '/runningpods/', { cert: alice })).body);
    assert.equal(rp.items[0].metadata.uid, 'u1');
    assert.equal(JSON.parse((await call(port, servingCA, '/configz', { cert: alice })).body).kubeletconfig.port, 10250);
    for (const path of [
      '/run/ns/p/c',
      '/exec/ns/p/c',
      '/configz',
      '/logs/syslog',
      '/runningpods/',
      '/portForward/ns/p',
    ]) {
      assert.equal((await get(servers.readOnlyPort!, path)).status, 405, `read-only ${path}`);
    }
    assert.equal((await get(servers.readOnlyPort!, '/pods')).status, 200);
  } finally {
    await servers.close();
  }
  const off = await start({ enableDebuggingHandlers: false });
  try {
    const r = await call(off.servers.port!, off.servingCA, '/run/ns/p/c?cmd=true', { cert: alice, method: 'POST' });
    assert.equal(r.status, 405);
    assert.match(r.body, /Debug endpoints are disabled/);
    assert.equal((await call(off.servers.port!, off.servingCA, '/pods', { cert: alice })).status, 200);
  } finally {
    await off.servers.close();
  }
});

test('/logs/ serves the log directory and refuses every path that leaves it', async () => {
  const { servers, servingCA } = await start();
  try {
    const port = servers.port!;
    const get = (path: string) => call(port, servingCA, path, { cert: alice });
    assert.equal((await get('/logs/syslog')).body, 'hello from syslog\n');
    assert.equal((await get('/logs/sub/x.log')).body, 'nested\n');
    assert.match((await get('/logs/')).body, /syslog/);
    for (const bad of [
      '/logs/../etc/hostname',
      '/logs/sub/../../etc/hostname',
      '/logs/%2e%2e/etc/hostname',
      '/logs/..%2fetc%2fhostname',
      '/logs/sub%2f..%2f..%2fetc%2fhostname',
      '/logs/%5c..%5cetc',
      '/logs/escape',
      '/logs/etcdir/hostname',
      '/logs/etcdir/',
      '/logs/nope',
    ]) {
      const r = await get(bad);
      assert.ok(r.status === 400 || r.status === 404, `${bad} → ${r.status}`);
      assert.doesNotMatch(
        r.body,
        new RegExp(readFileSync('/etc/hostname', 'utf8').trim() || 'x^'),
        `${bad} leaked a file`,
      );
    }
    assert.equal((await get('/logs/inner-link')).status, 404, 'no symlink is followed, even one pointing inside');
    assert.equal((await get('/logs/fifo')).status, 404, 'a FIFO is not a file (and does not hang the server)');
    assert.doesNotMatch((await get('/logs/')).body, /secret/);
  } finally {
    await servers.close();
  }
});

test('/logs/: a directory swapped for a symlink out of the log directory while requests run never leaks', async () => {
  const { servers, servingCA } = await start();
  const swap = startSymlinkSwap(join(logDir, 'sub'), outsideDir);
  try {
    const seen = { ok: 0, notFound: 0 };
    for (let round = 0; round < 30; round++) {
      const replies = await Promise.all(
        Array.from({ length: 10 }, () => call(servers.port!, servingCA, '/logs/sub/x.log', { cert: alice })),
      );
      for (const r of replies) {
        assert.doesNotMatch(r.body, /secret/, 'read through the swapped-in symlink');
        if (r.status === 200) {
          assert.equal(r.body, 'nested\n');
          seen.ok++;
        } else {
          assert.equal(r.status, 404);
          seen.notFound++;
        }
      }
    }
    assert.equal(seen.ok + seen.notFound, 300);
  } finally {
    await swap.stop();
    await servers.close();
  }
});

test('TLS: the self-signed pair is generated once and reused; tlsMinVersion is honoured; request metrics', async () => {
  const first = await start({
    tlsMinVersion: 'VersionTLS13',
    tlsCipherSuites: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  });
  try {
    await assert.rejects(call(first.servers.port!, first.servingCA, '/pods', { cert: alice, maxVersion: 'TLSv1.2' }));
    assert.equal((await call(first.servers.port!, first.servingCA, '/pods', { cert: alice })).status, 200);
  } finally {
    await first.servers.close();
  }
  const again = await startServers({ provider, main: { ...first.opts, port: await freePort() } });
  try {
    assert.deepEqual(
      readFileSync(join(first.opts.rootDir, 'pki', 'kubelet.crt')),
      first.servingCA,
      'certificate reused',
    );
    assert.equal((await call(again.port!, first.servingCA, '/pods', { cert: alice })).status, 200);
    const m = await call(again.port!, first.servingCA, '/metrics', { cert: alice });
    assert.equal(m.status, 200);
  } finally {
    await again.close();
  }
  const { registry } = await import('../../src/metrics/index.js');
  const text = await registry.metrics();
  assert.match(
    text,
    /kubelet_http_requests_total\{method="GET",path="pods",server_type="readwrite",long_running="false"\} \d+/,
  );
  assert.match(text, /kubelet_http_requests_duration_seconds_bucket\{le="0.005",method="GET",path="pods"/);
  assert.match(text, /kubelet_http_inflight_requests\{/);
});

function get(port: number, path: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode! }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('slow clients (idle TCP, stalled handshakes, half-sent headers) do not stall other requests', async () => {
  const { servers, servingCA } = await start();
  const sockets: Array<{ destroy(): void }> = [];
  try {
    const port = servers.port!;
    for (let i = 0; i < 20; i++) sockets.push(netConnect(port, '127.0.0.1'));
    for (let i = 0; i < 20; i++) {
      const s = tlsConnect({
        host: '127.0.0.1',
        port,
        ca: servingCA,
        servername: 'localhost',
        cert: readFileSync(alice.cert),
        key: readFileSync(alice.key),
      });
      s.on('secureConnect', () => s.write('GET /pods HTTP/1.1\r\nHost: x\r\nX-Slow: '));
      s.on('error', () => undefined);
      sockets.push(s);
    }
    const t0 = Date.now();
    const r = await call(port, servingCA, '/healthz', { cert: alice });
    assert.equal(r.status, 200);
    assert.ok(Date.now() - t0 < 2000, `served in ${Date.now() - t0} ms beside 40 stalled connections`);
    const big = await call(port, servingCA, '/healthz', { cert: alice, headers: { 'X-Big': 'x'.repeat(20_000) } });
    assert.equal(big.status, 431, 'oversized headers are refused');
  } finally {
    for (const s of sockets) s.destroy();
    await servers.close();
  }
});
