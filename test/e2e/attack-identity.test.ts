/**
 * Hostile pod identities from every source, against the real CLI and containerd: a static pod
 * file, the manifest URL and the API server (the test apiserver, which stores whatever UID,
 * name and namespace it is handed) each offer pods whose UID, name, namespace or container name
 * walks out of the directory it is joined to (`../../…/tmp/<tag>-…`). Each is refused naming the
 * field, nothing appears outside the agent's directories (root dir, pod logs, cgroups), and a
 * good pod from each source starts and keeps its containers throughout.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { detectCgroupMounts } from '../../src/cm/cgroupfs.js';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES } from '../support/containerd.js';
import {
  getPods,
  httpGet,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { startTestApiserver } from '../support/test-apiserver.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const RAND = Math.random().toString(36).slice(2, 7);
const NS = `attack-${MODE}-${RAND}`;
/** Every hostile value aims at /tmp/<TAG>-<what>; finding any such entry is a failure. */
const TAG = `kts-attack-${MODE}-${RAND}`;
const UP = '../'.repeat(12);
const escape = (what: string) => `${UP}tmp/${TAG}-${what}`;
const NODE = 'e2e-node';

const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
const api = await startTestApiserver({ bookmarkMs: 1000 });
let urlBody = '';
const urlServer = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(urlBody);
});
await new Promise<void>((r) => urlServer.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(urlServer.address() as AddressInfo).port}/pods`;
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  urlServer.close();
  await api.stop();
  // The hostile namespaces too: should a regression ever run one of those pods, it is not left behind.
  for (const ns of new Set([
    NS,
    ...HOSTILE_API.map(([p]) => p.metadata!.namespace!),
    ...Object.values(HOSTILE_FILES).map(([p]) => p.metadata!.namespace!),
  ])) {
    await removeTestPods(runtime, { namespace: ns });
  }
  runtime.close();
});

const container = (name = 'c') => ({
  name,
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
});
function pod(name: string, meta: Record<string, unknown> = {}, containerName = 'c'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, ...meta },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      nodeName: NODE,
      containers: [container(containerName)],
    },
  } as Pod;
}

/** Hostile static pod files: file name → [pod, the field the refusal must name]. */
const HOSTILE_FILES: Record<string, [Pod, string]> = {
  'uid.json': [pod('f-uid', { uid: escape('file-uid') }), 'metadata.uid'],
  'ns.json': [pod('f-ns', { namespace: escape('file-ns') }), 'metadata.namespace'],
  'name.json': [pod(escape('file-name')), 'metadata.name'],
  'ctr.json': [pod('f-ctr', {}, escape('file-ctr')), 'spec.containers[0].name'],
};

/** Hostile API pods (stored as is, as a compromised apiserver would serve them). */
const HOSTILE_API: Array<[Pod, string]> = [
  [pod('a-uid', { uid: escape('api-uid') }), 'metadata.uid'],
  [pod('a-ns', { namespace: escape('api-ns'), uid: '8a0d3c52-9c1e-4c7b-b3f4-1d2e3f4a5b6c' }), 'metadata.namespace'],
  [pod(escape('api-name'), { uid: '8a0d3c52-9c1e-4c7b-b3f4-1d2e3f4a5b6d' }), 'metadata.name'],
  [pod('a-ctr', { uid: '8a0d3c52-9c1e-4c7b-b3f4-1d2e3f4a5b6e' }, escape('api-ctr')), 'spec.containers[0].name'],
  [pod('a-hash-ok-but-dots', { uid: '..' }), 'metadata.uid'],
];

const logLines = () =>
  readFileSync(kubelet!.logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });

async function runningIds(): Promise<Map<string, string>> {
  const pods = (await getPods(kubelet!)).filter((p) => p.metadata?.namespace === NS);
  return new Map(
    pods
      .filter((p) => p.status?.containerStatuses?.[0]?.state?.running)
      .map((p) => [p.metadata!.name!, p.status!.containerStatuses![0]!.containerID!]),
  );
}

const GOOD = ['good-file-e2e-node', 'good-url-e2e-node', 'good-api'];
let before: Map<string, string>;

test('a good pod from each source runs; every hostile one is refused naming its field', async () => {
  writeFileSync(join(manifests, 'good.json'), JSON.stringify(pod('good-file')));
  for (const [file, [p]] of Object.entries(HOSTILE_FILES)) writeFileSync(join(manifests, file), JSON.stringify(p));
  urlBody = JSON.stringify(pod('good-url'));
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${api.kubeconfig(dir)}`, `--manifest-url=${url}`, '--http-check-frequency=500ms'],
  });
  const created = await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod('good-api'));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  for (const [p] of HOSTILE_API) api.store.put('pods', structuredClone(p) as never, 'ADDED');

  before = await waitFor(
    'the good pods running',
    90_000,
    async () => {
      const ids = await runningIds();
      return GOOD.every((n) => ids.has(n)) ? ids : undefined;
    },
    250,
  );

  const lines = await waitFor(
    'every refusal logged',
    30_000,
    () => {
      const l = logLines();
      const fileFields = l
        .filter((x) => x.msg === 'invalid static pod manifest; ignored')
        .map((x) => [String(x.file).split('/').at(-1), x.field]);
      const apiFields = l.filter(
        (x) =>
          x.msg === 'pod refused: its identity is not valid; it is not run and no path is built from it' &&
          x.source === 'api',
      );
      return fileFields.length >= Object.keys(HOSTILE_FILES).length && apiFields.length >= HOSTILE_API.length
        ? { fileFields, apiFields }
        : undefined;
    },
    250,
  );
  assert.deepEqual(
    new Map(lines.fileFields as Array<[string, string]>),
    new Map(Object.entries(HOSTILE_FILES).map(([f, [, field]]) => [f, field])),
  );
  assert.deepEqual(lines.apiFields.map((x) => x.field).sort(), HOSTILE_API.map(([, f]) => f).sort());
  assert.ok(lines.apiFields.every((x) => x.code === 'KTS_ERR_POD_IDENTITY'));
  assert.match(
    String(lines.apiFields.find((x) => x.field === 'metadata.uid' && /api-uid/.test(String(x.err)))?.err),
    /is not a valid pod UID/,
  );
});

test("a URL PodList with a hostile item is refused as a whole, naming the item; the URL's running pod stays", async () => {
  urlBody = JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodList',
    items: [pod('good-url'), pod('u-uid', { uid: escape('url-uid') })],
  });
  await waitFor(
    'the URL refusal logged',
    20_000,
    () =>
      logLines().some(
        (x) =>
          /unable to read manifest URL/.test(String(x.msg)) &&
          /items\[1\]\.metadata\.uid: .* is not a valid pod UID/.test(String(x.err)),
      )
        ? true
        : undefined,
    250,
  );
  urlBody = JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodList',
    items: [pod('good-url'), pod('u-ns', { namespace: escape('url-ns') })],
  });
  await waitFor(
    'the second URL refusal logged',
    20_000,
    () => (logLines().some((x) => /items\[1\]\.metadata\.namespace/.test(String(x.err))) ? true : undefined),
    250,
  );
});

/** Entries under `root` (a few levels deep) whose name holds the tag. */
function tagged(root: string, depth: number): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  return entries.flatMap((e) => [
    ...(e.includes(TAG) ? [join(root, e)] : []),
    ...(depth > 0 ? tagged(join(root, e), depth - 1) : []),
  ]);
}

test("nothing appeared outside the agent's directories, the good pods kept their containers, the agent is healthy", async () => {
  await new Promise((r) => setTimeout(r, 4000)); // several sync, housekeeping and stats rounds
  const after = await runningIds();
  for (const n of GOOD) assert.equal(after.get(n), before.get(n), `${n} kept its container`);
  assert.deepEqual(
    readdirSync('/tmp').filter((e) => e.includes(TAG)),
    [],
    'nothing under /tmp',
  );
  assert.deepEqual(tagged(dir, 4), [], "nothing under the agent's own directories");
  const mounts = detectCgroupMounts();
  for (const m of [...mounts.v1.keys(), ...(mounts.unified ? [mounts.unified] : [])]) {
    assert.deepEqual(tagged(m, 1), [], `nothing at the top of ${m}`);
    assert.deepEqual(tagged(join(m, 'kubepods'), 2), [], `nothing under ${m}/kubepods`);
  }
  const pods = readdirSync(join(dir, 'root', 'pods'));
  assert.ok(
    pods.every((uid) => /^[0-9a-f-]{32,36}$/.test(uid)),
    `pod directories: ${pods.join(', ')}`,
  );
  const logDirs = readdirSync(join(dir, 'logs'));
  assert.deepEqual(
    logDirs
      .filter((d) => d.startsWith(`${NS}_`))
      .map((d) => d.split('_')[1])
      .sort(),
    GOOD.slice().sort(),
  );
  assert.equal((await httpGet(kubelet!.healthzPort, '/healthz')).body, 'ok');
  // The hostile API pods got no status from this node: they were never taken in.
  for (const [p] of HOSTILE_API) {
    const stored = api.store.get('pods', p.metadata!.namespace, p.metadata!.name!) as Pod | undefined;
    assert.equal(stored?.status?.phase, undefined, `${p.metadata!.name} has no status`);
  }
});
