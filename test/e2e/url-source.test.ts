/**
 * The manifest URL source and the SIGTERM/restart path, as an operator sees them: the real CLI
 * polls a test HTTP server on loopback (one pod → a list → garbage → an empty body), and a
 * SIGTERM in the middle exits 0, leaves the containers running, and the next start adopts them.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Pod } from '../../src/api/types.js';
import { VERSION } from '../../src/version.js';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `url-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;

function podObj(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'c',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        },
      ],
    },
  };
}

let body = '';
let lastHeaders: IncomingHttpHeaders = {};
const server = createServer((req, res) => {
  lastHeaders = req.headers;
  res.writeHead(200, { 'content-type': 'application/yaml' });
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;

const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
const args = [
  `--manifest-url=${url}`,
  '--http-check-frequency=500ms',
  '--manifest-url-header=X-Token:a,X-Token:b',
  '--manifest-url-header',
  'X-Other:c',
];
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  server.close();
  await removeTestPods(runtime, { namespace: NS });
  runtime.close();
});

const podNames = (pods: Pod[]) =>
  pods
    .filter((p) => p.metadata?.namespace === NS)
    .map((p) => p.metadata!.name!)
    .sort();

async function runningSet(names: string[], timeoutMs = 60_000): Promise<Pod[]> {
  const want = names.map((n) => `${n}-e2e-node`).sort();
  return waitFor(
    `pods ${want.join(',')} Running`,
    timeoutMs,
    async () => {
      const pods = (await getPods(kubelet!)).filter((p) => p.metadata?.namespace === NS);
      const ok =
        JSON.stringify(podNames(pods)) === JSON.stringify(want) &&
        pods.every((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running));
      return ok ? pods : undefined;
    },
    200,
  );
}

async function runningContainers(): Promise<string[]> {
  const cs = await runtime.listContainers({ state: 'CONTAINER_RUNNING' });
  return cs
    .filter((c) => c.labels['io.kubernetes.pod.namespace'] === NS)
    .map((c) => `${c.labels['io.kubernetes.pod.name']}:${c.id}`)
    .sort();
}

const containerIds = (pods: Pod[]) =>
  pods.flatMap((p) => p.status!.containerStatuses!.map((c) => c.containerID!)).sort();

test('a URL serving one pod runs it, with the configured headers sent', async () => {
  body = JSON.stringify(podObj('one'));
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: args });
  const [pod] = await runningSet(['one']);
  assert.equal(pod!.metadata?.annotations?.['kubernetes.io/config.source'], 'http');
  assert.equal(lastHeaders['x-token'], 'a, b');
  assert.equal(lastHeaders['x-other'], 'c');
  // BirthCry: the Starting event on the Node, and the version with a config summary.
  const log = readFileSync(kubelet.logFile, 'utf8');
  assert.match(
    log,
    /"msg":"Event occurred".*"object":"Node\/e2e-node".*"reason":"Starting","message":"Starting kubelet\."/,
  );
  // The version from src/version.ts, so a release bump does not need this test edited.
  const version = VERSION.replace(/\./g, '\\.');
  assert.match(
    log,
    new RegExp(`"msg":"Starting kubelet","v":0,"version":"${version}".*"staticPodURL":"http://127\\.0\\.0\\.1`),
  );
});

test('a PodList adds pods and keeps the unchanged one', async () => {
  const [before] = await runningSet(['one']);
  body = `apiVersion: v1\nkind: PodList\nitems:\n${[podObj('one'), podObj('two')].map((p) => `  - ${JSON.stringify(p)}`).join('\n')}\n`;
  const pods = await runningSet(['one', 'two']);
  const one = pods.find((p) => p.metadata?.name === 'one-e2e-node')!;
  assert.equal(one.metadata?.uid, before!.metadata?.uid, 'same content, same UID');
  assert.deepEqual(
    one.status?.containerStatuses?.map((c) => c.containerID),
    before!.status?.containerStatuses?.map((c) => c.containerID),
  );
});

test('SIGTERM exits 0 and leaves containers running; the next start adopts them', async () => {
  const pods = await runningSet(['one', 'two']);
  const ids = containerIds(pods);
  const live = await runningContainers();
  const exit = new Promise<number | null>((r) => kubelet!.child.once('exit', (code) => r(code)));
  process.kill(kubelet!.pid, 'SIGTERM');
  assert.equal(await exit, 0, 'clean exit');
  assert.deepEqual(await runningContainers(), live, 'containers left running');
  const log = readFileSync(kubelet!.logFile, 'utf8');
  assert.match(log, /Shutting down/);
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    readOnlyPort: kubelet!.readOnlyPort,
    healthzPort: kubelet!.healthzPort,
    extraArgs: args,
  });
  const again = await runningSet(['one', 'two']);
  await new Promise((r) => setTimeout(r, 2000)); // a few sync and housekeeping rounds
  assert.deepEqual(containerIds(await runningSet(['one', 'two'])), ids, 'the same containers, adopted');
  assert.deepEqual(containerIds(again), ids);
  assert.deepEqual(await runningContainers(), live, 'no container started or stopped');
});

test('garbage from the URL is logged and changes nothing', async () => {
  const ids = containerIds(await runningSet(['one', 'two']));
  body = 'kind: Pod\napiVersion: v1\nmetadata: [this is not: valid';
  await waitFor('the error in the log', 10_000, () =>
    /unable to read manifest URL/.test(readFileSync(kubelet!.logFile, 'utf8')) ? true : undefined,
  );
  await new Promise((r) => setTimeout(r, 2500)); // several polls of garbage
  assert.deepEqual(containerIds(await runningSet(['one', 'two'], 1000)), ids, 'pods of the source keep running');
  const loud = readFileSync(kubelet!.logFile, 'utf8')
    .split('\n')
    .filter((l) => /unable to read manifest URL/.test(l) && /"err":/.test(l) && !/"v":\d/.test(l));
  assert.ok(loud.length <= 3, `at most 3 loud failures, got ${loud.length}`);
});

test('an empty body marks the source seen with no pods: its pods are removed', async () => {
  body = '';
  await waitFor(
    'pods removed',
    30_000,
    async () => (podNames(await getPods(kubelet!)).length === 0 ? true : undefined),
    200,
  );
  await waitFor(
    'containers stopped',
    30_000,
    async () => ((await runningContainers()).length === 0 ? true : undefined),
    250,
  );
  assert.match(readFileSync(kubelet!.logFile, 'utf8'), /manifest URL readable again/);
});
