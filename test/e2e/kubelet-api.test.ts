/**
 * The authenticated kubelet API against real containerd: the real CLI on a TLS main port with
 * client certificates from a test CA; exec, attach and port-forward over WebSocket (v4 channel
 * protocol) proxied to containerd's streaming server, and /run through ExecSync.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  randomPort,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { issue, makeCA } from '../support/pki.js';
import { mainPortClient } from '../support/main-port.js';
import { createReviewWebhook, startReviewServer } from '../support/review-webhook.js';

const NS = `api-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = TEST_IMAGES.busybox;

const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
const ca = makeCA('api-ca');
const alice = issue(ca, 'alice', { cn: 'alice' });
const PORT = randomPort();
/** Static pods are named <name>-<node name>. */
const POD = 'api-e2e-node';
let kubelet: KubeletProcess | undefined;
let servingCA: Buffer;

before(async () => {
  writeFileSync(
    join(manifests, 'api.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'api', namespace: NS },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'web',
            image: IMAGE,
            imagePullPolicy: 'IfNotPresent',
            command: [
              'sh',
              '-c',
              "trap 'exit 0' TERM; mkdir -p /www; echo hello-pf > /www/index.html; httpd -f -p 8080 -h /www & wait",
            ],
          },
          {
            name: 'reader',
            image: IMAGE,
            imagePullPolicy: 'IfNotPresent',
            stdin: true,
            command: ['sh', '-c', 'while read l; do echo "got:$l"; done'],
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    port: PORT,
    extraArgs: [`--client-ca-file=${ca.cert}`, '--authorization-mode=AlwaysAllow'],
  });
  await waitFor(
    'both containers running',
    90_000,
    async () => {
      const pod = (await getPods(kubelet!)).find((p) => p.metadata?.name === POD);
      const st = pod?.status?.containerStatuses ?? [];
      return st.length === 2 && st.every((c) => c.state?.running) ? true : undefined;
    },
    250,
  );
  servingCA = readFileSync(join(dir, 'root', 'pki', 'kubelet.crt'));
});

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(runtime, { namespace: NS });
  runtime.close();
});

const client = mainPortClient(PORT, () => servingCA);
const { get, post } = client;
const channelSession = (path: string) => client.channelSession(path, alice);

test('no client certificate → 401 on the main port', async () => {
  assert.equal((await post(`/run/${NS}/${POD}/web?cmd=true`)).status, 401);
});

test('/run returns the command output', async () => {
  const r = await post(`/run/${NS}/${POD}/web?cmd=echo%20hello%20run`, alice);
  assert.equal(r.status, 200);
  assert.equal(r.body, 'hello run\n');
});

test('exec over WebSocket returns output and exit status', async () => {
  const cmd = ['sh', '-c', 'echo hello-exec; echo oops >&2; exit 3']
    .map((c) => `command=${encodeURIComponent(c)}`)
    .join('&');
  const s = await channelSession(`/exec/${NS}/${POD}/web?${cmd}&stdout=1&stderr=1`);
  await s.closed;
  assert.equal(s.out.get(1)?.toString(), 'hello-exec\n');
  assert.equal(s.out.get(2)?.toString(), 'oops\n');
  const status = JSON.parse(s.out.get(3)!.toString());
  assert.equal(status.status, 'Failure');
  assert.equal(status.details.causes.find((c: { reason: string }) => c.reason === 'ExitCode').message, '3');
  const ok = await channelSession(`/exec/${NS}/${POD}/web?command=true&stdout=1`);
  await ok.closed;
  assert.equal(JSON.parse(ok.out.get(3)!.toString()).status, 'Success');
});

test('attach to a container reading stdin', async () => {
  const s = await channelSession(`/attach/${NS}/${POD}/reader?stdin=1&stdout=1`);
  s.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('ping\n')]));
  await s.wait(1, /got:ping/);
  s.ws.close();
  await s.closed;
});

test('port-forward reaches a port served by the pod', async () => {
  const s = await channelSession(`/portForward/${NS}/${POD}?port=8080`);
  // Each port has a data (0) and an error (1) channel; both open with the port number (uint16 LE).
  await waitFor('port headers', 10_000, () => ((s.out.get(0)?.length ?? 0) >= 2 ? true : undefined), 20);
  assert.equal(s.out.get(0)!.readUInt16LE(0), 8080);
  s.out.set(0, Buffer.alloc(0));
  s.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n')]));
  const reply = await s.wait(0, /hello-pf/);
  assert.match(reply, /^HTTP\/1\.[01] 200/);
  s.ws.close();
  await s.closed;
});

test('a SPDY/3.1 upgrade is passed through to the runtime (101 with the negotiated protocol)', async () => {
  const reply = await client.upgrade(`/exec/${NS}/${POD}/web?command=true&stdout=1`, alice);
  assert.deepEqual(
    [reply.status, reply.headers?.upgrade, reply.headers?.['x-stream-protocol-version']],
    [101, 'SPDY/3.1', 'v4.channel.k8s.io'],
  );
});

test("/containerLogs is served on the main port, confined to the pod's log directory", async () => {
  assert.equal((await get(`/containerLogs/${NS}/${POD}/reader`)).status, 401, 'authentication first');
  const logs = await waitFor(
    'reader log has the attached line',
    20_000,
    async () => {
      const r = await get(`/containerLogs/${NS}/${POD}/reader?tailLines=5`, alice);
      return r.status === 200 && /got:/.test(r.body) ? r : undefined;
    },
    250,
  );
  assert.match(logs.body, /got:/);
  for (const bad of [`/containerLogs/${NS}/..%2f..%2f..%2fetc/reader`, `/containerLogs/${NS}/${POD}/..`]) {
    const r = await get(bad, alice);
    assert.ok(r.status === 400 || r.status === 404, `${bad} → ${r.status}`);
    assert.doesNotMatch(r.body, /root:/);
  }
});

test('Webhook mode through --kubeconfig: the review server denies → 403 with the attributes, allows → 200', async () => {
  const hook = createReviewWebhook({
    tokens: {},
    authorize: (spec) =>
      spec.resourceAttributes?.subresource === 'proxy' ? { allowed: true } : { allowed: false, reason: 'only proxy' },
  });
  const review = await startReviewServer(hook, ca);
  try {
    await stopKubelet(kubelet!);
    kubelet = startKubelet({
      dir,
      manifests,
      endpoint,
      port: PORT,
      extraArgs: [`--client-ca-file=${ca.cert}`, '--authorization-mode=Webhook', `--kubeconfig=${review.kubeconfig}`],
    });
    const run = await waitFor(
      'main port back',
      30_000,
      () => post(`/run/${NS}/${POD}/web?cmd=echo%20via-webhook`, alice),
      200,
    );
    assert.equal(run.status, 200);
    assert.equal(run.body, 'via-webhook\n');
    const stats = await get(`/stats/summary`, alice);
    assert.equal(stats.status, 403);
    assert.match(stats.body, /Forbidden \(user=alice, verb=get, resource=nodes, subresource\(s\)=\[stats\]\)/);
    assert.deepEqual(hook.accessReviews.at(-1)!.resourceAttributes, {
      namespace: '',
      verb: 'get',
      group: '',
      version: 'v1',
      resource: 'nodes',
      subresource: 'stats',
      name: 'e2e-node',
    });
  } finally {
    await review.close();
  }
});
