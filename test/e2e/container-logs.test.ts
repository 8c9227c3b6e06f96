/**
 * `GET /containerLogs/{ns}/{pod}/{container}` on real containers: the agent runs in-process
 * (startDaemon, the composition root) on our containerd, and its handler is mounted on a
 * test-only HTTP server (it belongs on the authenticated port, never on the read-only one).
 * Covers each query parameter, following to the container's end, previous, rotation through
 * CRI ReopenContainerLog (with a follower that must see every line across rotations), and
 * requests that try to leave the pod's log directory.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { startDaemon, type Daemon } from '../../src/cmd/main.js';
import { handleContainerLogs } from '../../src/server/container-logs.js';
import { connectRuntime } from '../../src/cri/index.js';
import { runtimeEndpoint, removeTestPods } from '../support/containerd.js';
import { makeKubeletDirs, waitFor } from '../support/kubelet-process.js';

const NS = `e2e-logs-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node';
const LONG = 40_000; // longer than containerd's 16 KiB line: written as P pieces, then F

const endpoint = await runtimeEndpoint();
const { runtime: cri, images } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
const logsDir = join(dir, 'logs');
let daemon: Daemon;
let server: Server;
let port = 0;

const sh = (name: string, script: string) => ({
  name,
  image: IMAGE,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', script],
});
function writePod(name: string, spec: object): void {
  writeFileSync(
    join(manifests, `${name}.json`),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { terminationGracePeriodSeconds: 1, ...spec },
    }),
  );
}

before(async () => {
  writePod('printer', {
    containers: [
      sh(
        'c',
        `for i in 1 2 3 4 5; do echo line$i; done; sleep 0.3; echo err >&2; sleep 0.3; head -c ${LONG} /dev/zero | tr '\\0' a; echo; echo done; exec sleep 600`,
      ),
      sh('side', 'exec sleep 600'),
    ],
  });
  writePod('follower', { restartPolicy: 'Never', containers: [sh('c', 'for i in 1 2 3; do echo f$i; sleep 1; done')] });
  writePod('twice', {
    volumes: [{ name: 'd', emptyDir: {} }],
    containers: [
      {
        ...sh(
          'c',
          'n=$(cat /d/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /d/n; echo instance-$n; [ $n -ge 2 ] && exec sleep 600; exit 1',
        ),
        volumeMounts: [{ name: 'd', mountPath: '/d' }],
      },
    ],
  });
  writePod('chatty', {
    containers: [
      sh(
        'c',
        'i=0; while true; do i=$((i+1)); echo "n=$i ................................................................................................"; [ $((i % 50)) -eq 0 ] && sleep 0.05; done',
      ),
    ],
  });
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      `staticPodPath: ${manifests}`,
      `containerRuntimeEndpoint: ${endpoint}`,
      'readOnlyPort: 0',
      'healthzPort: 0',
      `podLogsDir: ${logsDir}`,
      'containerLogMaxSize: 256Ki',
      'containerLogMaxFiles: 3',
      'containerLogMonitorInterval: 3s', // upstream's smallest
      '',
    ].join('\n'),
  );
  const loaded = loadConfig([
    `--config=${join(dir, 'config.yaml')}`,
    `--root-dir=${join(dir, 'root')}`,
    `--hostname-override=${NODE}`,
  ]);
  assert.equal(loaded.kind, 'run');
  daemon = await startDaemon(loaded.config);
  const deps = { ...daemon.containerLogs, followPollMs: 100 };
  server = createServer((req, res) => {
    // The mount a server does: split the raw path, decode each segment.
    const m = /^\/containerLogs\/([^/]*)\/([^/]*)\/([^/?]*)/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const [namespace, pod, container] = [m[1]!, m[2]!, m[3]!].map(decodeURIComponent) as [string, string, string];
    void handleContainerLogs(req, res, { namespace, pod, container }, deps);
  });
  port = await new Promise<number>((r) =>
    server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)),
  );
});

after(async () => {
  server?.close();
  await daemon?.stop();
  await removeTestPods(cri, { namespace: NS }).catch(() => undefined);
  cri.close();
  images.close();
});

function get(
  path: string,
  onData?: (chunk: string) => void,
): Promise<{ status: number; body: string; chunked: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 60_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        onData?.(c);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode!, body, chunked: res.headers['transfer-encoding'] === 'chunked' }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

const logs = (pod: string, container = 'c', query = '') =>
  get(`/containerLogs/${NS}/${pod}-${NODE}/${container}${query ? `?${query}` : ''}`);

async function printerReady(): Promise<string> {
  return waitFor(
    'printer logged everything',
    60_000,
    async () => {
      const r = await logs('printer');
      return r.status === 200 && r.body.includes('done\n') ? r.body : undefined;
    },
    250,
  );
}

test('whole log, partial lines joined, stdout and stderr', async () => {
  const body = await printerReady();
  const lines = body.split('\n');
  assert.deepEqual(lines.slice(0, 6), ['line1', 'line2', 'line3', 'line4', 'line5', 'err']);
  assert.equal(lines[6], 'a'.repeat(LONG), 'the P pieces come back as one line');
  assert.equal(lines[7], 'done');
});

test('tailLines, limitBytes, timestamps, sinceTime and sinceSeconds', async () => {
  await printerReady();
  assert.equal((await logs('printer', 'c', 'tailLines=1')).body, 'done\n');
  assert.equal((await logs('printer', 'c', 'tailLines=0')).body, '');
  assert.equal((await logs('printer', 'c', 'limitBytes=8')).body, 'line1\nli');
  const ts = (await logs('printer', 'c', 'timestamps=true&tailLines=1')).body;
  assert.match(ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d) done\n$/);
  const stamp = ts.split(' ')[0]!;
  const after = (await logs('printer', 'c', `sinceTime=${encodeURIComponent(stamp)}&timestamps=false`)).body;
  assert.ok(after.endsWith('done\n') && !after.includes('line1'), 'sinceTime keeps lines logged at or after it');
  assert.equal(
    (await logs('printer', 'c', `sinceTime=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`))
      .body,
    '',
  );
  assert.ok((await logs('printer', 'c', 'sinceSeconds=3600')).body.startsWith('line1\n'));
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await logs('printer', 'c', 'sinceSeconds=1')).body, '', 'nothing logged in the last second');
});

test('bad query parameters are 400 with the problem named', async () => {
  for (const [q, msg] of [
    ['tailLines=-1', /tailLines/],
    ['limitBytes=0', /limitBytes/],
    ['follow=maybe', /follow/],
    ['sinceSeconds=0', /sinceSeconds/],
    ['sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z', /at most one/],
    ['sinceTime=yesterday', /sinceTime/],
  ] as const) {
    const r = await logs('printer', 'c', q);
    assert.equal(r.status, 400, q);
    assert.match(r.body, msg, q);
  }
  assert.equal((await logs('nosuchpod')).status, 404);
  assert.equal((await logs('printer', 'nosuch')).status, 404);
  const prev = await logs('printer', 'c', 'previous=true');
  assert.equal(prev.status, 400);
  assert.match(prev.body, /previous terminated container "c"/);
});

test('follow streams chunked and ends when the container ends', async () => {
  const seen: number[] = [];
  const t0 = Date.now();
  const r = await get(`/containerLogs/${NS}/follower-${NODE}/c?follow=true`, (c) => {
    if (c.includes('f3')) seen.push(Date.now() - t0);
  });
  assert.equal(r.status, 200);
  assert.equal(r.chunked, true);
  assert.equal(r.body, 'f1\nf2\nf3\n');
  assert.ok(seen.length > 0);
});

test('previous returns the last dead instance, the default the current one', async () => {
  await waitFor(
    'twice restarted',
    60_000,
    async () => ((await logs('twice')).body === 'instance-2\n' ? true : undefined),
    250,
  );
  assert.equal((await logs('twice', 'c', 'previous=true')).body, 'instance-1\n');
  assert.equal(
    (await logs('twice', 'c', 'previous=true&follow=true')).body,
    'instance-1\n',
    'following a dead instance ends',
  );
});

test('rotation at containerLogMaxSize keeps containerLogMaxFiles, and a follower sees every line across rotations', async () => {
  const pod = `chatty-${NODE}`;
  const ctrDir = await waitFor(
    'chatty log dir',
    60_000,
    () => {
      const d = readdirSync(logsDir).find((n) => n.startsWith(`${NS}_${pod}_`));
      return d ? join(logsDir, d, 'c') : undefined;
    },
    200,
  );
  const controller = new AbortController();
  let body = '';
  const following = new Promise<void>((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: `/containerLogs/${NS}/${pod}/c?follow=true`, signal: controller.signal },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('close', () => resolve());
      },
    );
    req.on('error', () => resolve());
    req.end();
  });
  const rotated = () => readdirSync(ctrDir).filter((n) => /^0\.log\.\d{8}-\d{6}$/.test(n));
  const first = await waitFor('a rotation', 60_000, () => rotated()[0], 100);
  // maxFiles 3 = current + 2 rotated: the third rotation removes the first rotated file.
  await waitFor('the oldest rotated file removed', 60_000, () => (!rotated().includes(first) ? true : undefined), 100);
  await new Promise((r) => setTimeout(r, 500));
  controller.abort();
  await following;
  // Checked while the container runs: once its pod is deleted, its dead container (and with it
  // the runtime's 0.log) is removed as soon as the PLEG reports the exit (podContainerDeletor).
  // A rotation in progress has no 0.log for an instant, hence the wait.
  const files = await waitFor(
    '0.log and at most containerLogMaxFiles files',
    10_000,
    () => {
      const f = readdirSync(ctrDir);
      return f.includes('0.log') && f.length <= 3 ? f : undefined;
    },
    20,
  );
  assert.ok(statSync(join(ctrDir, '0.log')).size < 2 * 256 * 1024);
  const uid = daemon.kubelet.podManager.getPods().find((p) => p.metadata?.name === pod)!.metadata!.uid!;
  // Terminated, finished, or already forgotten: housekeeping forgets a finished worker of a pod
  // no longer desired, possibly before the wait below first looks (it then knows no worker).
  const couldRun = (u: string) => daemon.kubelet.podWorkers.couldHaveRunningContainers(u);
  unlinkSync(join(manifests, 'chatty.json')); // stop burning CPU
  // Wait for the agent to finish that kill: a pod still terminating when the agent stops keeps
  // its pod worker retrying (Kubelet.stop does not stop pod workers).
  await waitFor(
    'chatty stopped',
    30_000,
    async () =>
      (await cri.listContainers({ state: 'CONTAINER_RUNNING' })).some(
        (c) => c.labels['io.kubernetes.pod.name'] === pod && c.labels['io.kubernetes.pod.namespace'] === NS,
      )
        ? undefined
        : true,
    200,
  );
  await waitFor('chatty worker done', 30_000, () => (couldRun(uid) ? undefined : true), 200);
  assert.ok(files.length <= 3, `at most containerLogMaxFiles files: ${files.join(', ')}`);
  const nums = body
    .split('\n')
    .filter((l) => l.startsWith('n='))
    .map((l) => Number(/^n=(\d+)/.exec(l)![1]));
  assert.ok(nums.length > 2000, `followed ${nums.length} lines`);
  for (let i = 1; i < nums.length; i++)
    assert.equal(nums[i], nums[i - 1]! + 1, `no line lost or repeated around n=${nums[i - 1]}`);
});

test('requests that try to leave the pod log directory are refused', async () => {
  for (const c of ['..', '%2E%2E', '..%2F..%2F..%2Fetc', 'c%2F..%2F..', '%2Fetc%2Fpasswd']) {
    const r = await logs('printer', c);
    assert.equal(r.status, 400, c);
    assert.doesNotMatch(r.body, /root:/);
  }
  assert.equal((await get(`/containerLogs/..%2F..%2F..%2F/printer-${NODE}/c`)).status, 400);
  assert.equal((await get(`/containerLogs/${NS}/..%2F..%2Fx/c`)).status, 400);
  const podDir = readdirSync(logsDir).find((n) => n.startsWith(`${NS}_printer-${NODE}_`))!;
  // A newer "instance" that is a symlink to a host file.
  symlinkSync('/etc/passwd', join(logsDir, podDir, 'c', '99.log'));
  const viaLink = await logs('printer');
  assert.equal(viaLink.status, 403);
  assert.doesNotMatch(viaLink.body, /root:/);
  // A container log directory replaced by a symlink to elsewhere.
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, '0.log'), '2024-01-01T00:00:00.000000000Z stdout F secret\n');
  renameSync(join(logsDir, podDir, 'side'), join(logsDir, podDir, 'side-moved'));
  symlinkSync(outside, join(logsDir, podDir, 'side'));
  const viaDir = await logs('printer', 'side');
  assert.equal(viaDir.status, 403);
  assert.doesNotMatch(viaDir.body, /secret/);
});
