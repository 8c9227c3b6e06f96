/**
 * Attacks on the main port of the real CLI (TLS, client certificates, Webhook authorization
 * through a SubjectAccessReview server): a client allowed only `get nodes/proxy` (a read
 * permission) cannot exec, attach or port-forward, while one allowed `create nodes/proxy` can;
 * the fine-grained subresources and their proxy fallback; /configz shows no credential of the
 * manifest URL; /logs/ follows no symlink, including one swapped in while requests run.
 *
 * /logs/ always serves /var/log, so the symlink tests plant a directory of their own there
 * (`/var/log/kts-e2e-<mode>-<random>`, removed afterwards) whose symlinks point to a directory
 * outside that holds a marker; a response containing the marker is a leak.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  randomPort,
  startKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { mainPortClient } from '../support/main-port.js';
import { issue, makeCA } from '../support/pki.js';
import { startSymlinkSwap } from '../support/symlink-swap.js';
import { createReviewWebhook, startReviewServer, type ReviewServer } from '../support/review-webhook.js';
import { testTempDir } from '../support/temp-dir.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const RAND = Math.random().toString(36).slice(2, 7);
const NS = `attack-port-${MODE}-${RAND}`;
const POD = 'target-e2e-node';
const PORT = randomPort();
const MARKER = `kts-marker-${RAND}`;
const SECRET_HEADER = `Bearer header-secret-${RAND}`;
const URL_PASSWORD = `url-secret-${RAND}`;

let kubelet: KubeletProcess | undefined;
const ctx = await agentTestContext(NS, () => kubelet);
const ca = makeCA('attack-ca');
/**
 * `reader` may only read (get nodes/proxy, nodes/log); `operator` may also create through
 * proxy; `prober` has get nodes/proxy and is used once (authorized answers are cached).
 */
const reader = issue(ca, 'reader', { cn: 'reader' });
const operator = issue(ca, 'operator', { cn: 'operator' });
const prober = issue(ca, 'prober', { cn: 'prober' });
const GRANTS = new Set([
  'reader:get:proxy',
  'reader:get:log',
  'operator:get:proxy',
  'operator:create:proxy',
  'prober:get:proxy',
]);
const hook = createReviewWebhook({
  tokens: {},
  authorize: (spec) =>
    GRANTS.has(`${spec.user}:${spec.resourceAttributes?.verb}:${spec.resourceAttributes?.subresource}`)
      ? { allowed: true }
      : { allowed: false, reason: 'not granted' },
});
let review: ReviewServer;
let servingCA: Buffer;
const client = mainPortClient(PORT, () => servingCA);

// Planted under /var/log (see above), and the outside directory its symlinks point to.
const plant = join('/var/log', `kts-e2e-${MODE}-${RAND}`);
const outside = testTempDir('kts-outside-');
const manifestServer = createServer((_req, res) => res.end(''));

before(async () => {
  writeFileSync(join(outside, 'x.log'), `${MARKER}\n`);
  mkdirSync(join(plant, 'sub'), { recursive: true });
  writeFileSync(join(plant, 'sub', 'x.log'), 'inside\n');
  symlinkSync(outside, join(plant, 'dirlink'));
  symlinkSync(join(outside, 'x.log'), join(plant, 'filelink'));
  await new Promise<void>((r) => manifestServer.listen(0, '127.0.0.1', r));
  const manifestUrl = `http://kubelet:${URL_PASSWORD}@127.0.0.1:${(manifestServer.address() as AddressInfo).port}/pods`;
  review = await startReviewServer(hook, ca);
  writeFileSync(
    join(ctx.manifests, 'target.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target', namespace: NS },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({
    dir: ctx.dir,
    manifests: ctx.manifests,
    endpoint: ctx.endpoint,
    port: PORT,
    extraArgs: [
      `--client-ca-file=${ca.cert}`,
      '--authorization-mode=Webhook',
      `--kubeconfig=${review.kubeconfig}`,
      `--manifest-url=${manifestUrl}`,
      `--manifest-url-header=Authorization:${SECRET_HEADER}`,
    ],
  });
  await waitFor(
    'the target pod running',
    90_000,
    async () => {
      const p = (await getPods(kubelet!)).find((x) => x.metadata?.name === POD);
      return p?.status?.containerStatuses?.[0]?.state?.running ? true : undefined;
    },
    250,
  );
  servingCA = readFileSync(join(ctx.dir, 'root', 'pki', 'kubelet.crt'));
});

after(async () => {
  rmSync(plant, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
  manifestServer.close();
  await review?.close();
});

const execPath = `/exec/${NS}/${POD}/c?command=id&stdout=1`;

test('get nodes/proxy (read) cannot exec, attach or port-forward, over WebSocket or SPDY', async () => {
  hook.accessReviews.length = 0;
  for (const path of [execPath, `/attach/${NS}/${POD}/c?stdout=1`, `/portForward/${NS}/${POD}?port=80`]) {
    await assert.rejects(client.channelSession(path, reader), (err: Error & { status?: number; body?: string }) => {
      assert.equal(err.status, 403, path);
      assert.match(
        err.body ?? '',
        /Forbidden \(user=reader, verb=create, resource=nodes, subresource\(s\)=\[proxy\]\)/,
      );
      return true;
    });
    for (const method of ['GET', 'POST'])
      assert.equal((await client.upgrade(path, reader, { method })).status, 403, `SPDY ${method} ${path}`);
  }
  assert.equal((await client.post(`/run/${NS}/${POD}/c?cmd=id`, reader)).status, 403, '/run is a POST: create');
  const asked = new Set(
    hook.accessReviews.map((r) => `${r.user} ${r.resourceAttributes?.verb} nodes/${r.resourceAttributes?.subresource}`),
  );
  assert.deepEqual([...asked], ['reader create nodes/proxy'], 'each one was asked as create');
  // What it may do: read through the proxy fallback.
  assert.equal((await client.get('/pods', reader)).status, 200);
});

test('create nodes/proxy can exec over WebSocket', async () => {
  const s = await client.channelSession(`/exec/${NS}/${POD}/c?command=echo&command=exec-ok&stdout=1`, operator);
  await s.closed;
  assert.equal(s.out.get(1)?.toString(), 'exec-ok\n');
  assert.equal((await client.upgrade(execPath, operator)).status, 101, 'and over SPDY');
});

test('fine-grained subresources are asked first, proxy after them; others have no fallback', async () => {
  hook.accessReviews.length = 0;
  assert.equal((await client.get('/healthz', prober)).status, 200);
  assert.deepEqual(
    hook.accessReviews.map((r) => r.resourceAttributes?.subresource),
    ['healthz', 'proxy'],
  );
  const stats = await client.get('/stats/summary', prober);
  assert.equal(stats.status, 403);
  assert.match(stats.body, /Forbidden \(user=prober, verb=get, resource=nodes, subresource\(s\)=\[stats\]\)/);
});

test('/configz shows no header value and no URL credential', async () => {
  const r = await client.get('/configz', reader);
  assert.equal(r.status, 200);
  const z = JSON.parse(r.body).kubeletconfig;
  assert.deepEqual(z.staticPodURLHeader, { Authorization: ['<redacted>'] });
  assert.match(z.staticPodURL, /^http:\/\/<redacted>@127\.0\.0\.1:\d+\/pods$/);
  for (const secret of [SECRET_HEADER, URL_PASSWORD, 'header-secret'])
    assert.ok(!r.body.includes(secret), `${secret} leaked`);
});

test('/logs/ follows no symlink and refuses traversal', async () => {
  const base = `/logs/${plant.slice('/var/log/'.length)}`;
  assert.equal((await client.get(`${base}/sub/x.log`, reader)).body, 'inside\n');
  for (const path of [
    `${base}/dirlink/x.log`,
    `${base}/filelink`,
    `${base}/dirlink/`,
    `${base}/../../etc/passwd`,
    `${base}/%2e%2e/%2e%2e/etc/passwd`,
    `${base}/sub%2f..%2f..%2f..%2fetc%2fpasswd`,
    '/logs/../etc/passwd',
    '/logs/..%2fetc%2fpasswd',
  ]) {
    const r = await client.get(path, reader);
    assert.ok(r.status === 400 || r.status === 404, `${path} → ${r.status}`);
    assert.doesNotMatch(r.body, new RegExp(`${MARKER}|root:x:0:0`), `${path} leaked`);
  }
});

test('/logs/: a directory swapped for a symlink while requests run never leaks', async () => {
  const base = `/logs/${plant.slice('/var/log/'.length)}`;
  const swap = startSymlinkSwap(join(plant, 'sub'), outside);
  try {
    const statuses = new Map<number, number>();
    for (let round = 0; round < 20; round++) {
      const replies = await Promise.all(Array.from({ length: 10 }, () => client.get(`${base}/sub/x.log`, reader)));
      for (const r of replies) {
        assert.doesNotMatch(r.body, new RegExp(MARKER), 'read through the swapped-in symlink');
        assert.ok(r.status === 200 ? r.body === 'inside\n' : r.status === 404, `${r.status} ${r.body}`);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }
    assert.equal(
      [...statuses.values()].reduce((a, b) => a + b, 0),
      200,
    );
  } finally {
    await swap.stop();
  }
});
