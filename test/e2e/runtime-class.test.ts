/**
 * RuntimeClass against the real agent and containerd (standalone mode: the class name is the
 * runtime handler). scripts/containerd.sh configures a second handler, `alt`: runc again, with
 * its own state root <state-dir>/runc-alt. A pod with runtimeClassName: alt runs beside a
 * default pod, and runc's own state shows which handler ran which container; a pod whose class
 * the runtime does not know gets no sandbox, and the failure is reported (event
 * FailedCreatePodSandBox, the pod stays Pending with its container waiting).
 *
 * A hostUsers: false pod is refused where the handler lacks user namespaces (or runs mapped).
 *
 * Then API server mode (test apiserver): a node.k8s.io/v1 RuntimeClass maps a class name to the
 * alt handler and brings overhead.podFixed, which lands in the pod cgroup's memory limit; a class
 * with no RuntimeClass object runs nothing and posts FailedCreatePodSandBox with upstream's
 * NotFound words.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { parseCgroupMounts } from '../../src/cm/index.js';
import { removeTestPods, TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { startTestApiserver, type TestApiserver } from '../support/test-apiserver.js';

const NS = `e2e-rtclass-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
// Leaves containerd as it was found: the after() hook stops the agent and removes this file's pods.
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

/** containerd.sh puts the socket at <state-dir>/containerd.sock and the alt handler's root beside it. */
const STATE_DIR = dirname(endpoint.replace(/^unix:\/\//, ''));

function podObject(name: string, runtimeClassName?: string, extra: Record<string, unknown> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      ...(runtimeClassName ? { runtimeClassName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
          ...extra,
        },
      ],
    },
  } as Pod;
}

function manifest(name: string, runtimeClassName?: string): void {
  writeFileSync(join(manifests, `${name}.json`), JSON.stringify(podObject(name, runtimeClassName)));
}

const podNamed = async (name: string): Promise<Pod | undefined> =>
  (await getPods(kubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);

/** The running container's ID (without the containerd:// prefix). */
const waitRunningContainer = (name: string) =>
  waitFor(
    `${name} running`,
    60_000,
    async () => {
      const p = await podNamed(name);
      const id = p?.status?.containerStatuses?.[0]?.state?.running
        ? p.status.containerStatuses[0]!.containerID
        : undefined;
      return id?.replace(/^\w+:\/\//, '');
    },
    200,
  );

/** The container IDs runc itself knows under one state root (namespace k8s.io). */
function runcList(root: string): string[] {
  const out = execFileSync('runc', ['--root', join(root, 'k8s.io'), 'list', '--format', 'json'], { encoding: 'utf8' });
  return ((JSON.parse(out || 'null') as { id: string }[] | null) ?? []).map((c) => c.id);
}

const ourSandboxes = async (podName: string) =>
  (await runtime.listPodSandbox()).filter(
    (s) => s.labels['io.kubernetes.pod.namespace'] === NS && s.labels['io.kubernetes.pod.name'] === podName,
  );

/** Where each handler's runc keeps its state (containerd.sh's Root options). */
const ALT_ROOT = join(STATE_DIR, 'runc-alt');
const DEFAULT_ROOT = join(STATE_DIR, 'runc');

/** The memory limit of the pod cgroup holding a container (runc's pid → its cgroup → the parent). */
function podCgroupMemoryLimit(root: string, containerId: string): string {
  const { pid } = JSON.parse(
    execFileSync('runc', ['--root', join(root, 'k8s.io'), 'state', containerId], { encoding: 'utf8' }),
  ) as { pid: number };
  const mounts = parseCgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8'));
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(':'));
  const v1 = [...mounts.v1].find(([, c]) => c.includes('memory'));
  if (v1)
    return readFileSync(
      join(v1[0], dirname(lines.find((l) => l[1]!.split(',').includes('memory'))![2]!), 'memory.limit_in_bytes'),
      'utf8',
    ).trim();
  return readFileSync(
    join(mounts.unified!, dirname(lines.find((l) => l[0] === '0')![2]!), 'memory.max'),
    'utf8',
  ).trim();
}

test('a pod with runtimeClassName: alt runs under the alt handler beside a default pod', async () => {
  manifest('alt', 'alt');
  manifest('plain');
  kubelet = startKubelet({ dir, manifests, endpoint });
  const altId = await waitRunningContainer('alt');
  const plainId = await waitRunningContainer('plain');

  const alt = runcList(ALT_ROOT);
  const plain = runcList(DEFAULT_ROOT);
  assert.ok(alt.includes(altId), `runc-alt lists the alt pod's container ${altId}: ${alt.join(' ')}`);
  assert.ok(!alt.includes(plainId), 'the default pod did not run under alt');
  assert.ok(plain.includes(plainId), 'the default pod ran under the default handler');
  assert.ok(!plain.includes(altId), 'the alt pod did not run under the default handler');
  // The sandbox went to the handler too (its pause container is in the alt root).
  const [sandbox] = await ourSandboxes('alt-e2e-node');
  assert.ok(sandbox && alt.includes(sandbox.id), 'the alt pod sandbox runs under alt');
  assert.equal(sandbox.runtimeHandler, 'alt');
});

test('a pod whose runtime class is unknown runs nothing and reports FailedCreatePodSandBox', async () => {
  manifest('nope', 'no-such-handler');
  kubelet ??= startKubelet({ dir, manifests, endpoint });
  const line = await waitFor(
    'FailedCreatePodSandBox event',
    60_000,
    () =>
      readFileSync(kubelet!.logFile, 'utf8')
        .split('\n')
        .find((l) => l.includes('"reason":"FailedCreatePodSandBox"') && l.includes(`Pod/${NS}/nope-e2e-node`)),
    200,
  );
  assert.match(line, /Failed to create pod sandbox: .*no-such-handler/);
  const p = await podNamed('nope');
  assert.equal(p?.status?.phase, 'Pending');
  assert.equal(p?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  assert.deepEqual(await ourSandboxes('nope-e2e-node'), [], 'no sandbox in the runtime');
});

/**
 * hostUsers: false (kubelet/userns). Where the handler reports user namespace support (CRI
 * Status), the pod runs in its own user namespace: /proc/self/uid_map maps container root to a
 * block of 65536 host IDs, never to host root. Where it does not (runc 1.1 on every release of
 * this matrix: 1.6 and 1.7 report no handlers, 2.x reports user_namespaces false), the pod is
 * refused at admission, naming the handler, and nothing of it runs.
 */
test('a hostUsers: false pod runs mapped where the handler supports user namespaces, else is refused', async () => {
  kubelet ??= startKubelet({ dir, manifests, endpoint });
  const { handlers } = await runtime.status();
  for (const [name, cls] of [
    ['userns', undefined],
    ['userns-alt', 'alt'],
  ] as const) {
    const pod = podObject(name, cls, { command: ['sh', '-c', 'cat /proc/self/uid_map > /dev/termination-log'] });
    pod.spec!.hostUsers = false;
    pod.spec!.restartPolicy = 'Never';
    writeFileSync(join(manifests, `${name}.json`), JSON.stringify(pod));
    const supported = handlers.find((h) => h.name === (cls ?? ''))?.supportsUserNamespaces === true;
    const done = await waitFor(
      `${name} refused or finished`,
      60_000,
      async () => {
        const p = await podNamed(name);
        return p?.status?.phase === 'Failed' || p?.status?.phase === 'Succeeded' ? p : undefined;
      },
      200,
    );
    if (supported) {
      const map = done.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '';
      const [inside, host, length] = map.trim().split(/\s+/).map(Number);
      assert.equal(inside, 0, map);
      assert.ok(host! >= 65536 && length === 65536, `root maps to a block of 65536 host IDs: ${map}`);
      continue;
    }
    assert.equal(done.status?.reason, 'PodFeatureUnsupported', JSON.stringify(done.status));
    const who = cls ? `RuntimeClass handler "${cls}" does not` : 'runtime does not';
    assert.match(
      done.status?.message ?? '',
      new RegExp(`^Pod was rejected: can't set \`spec.hostUsers: false\`, ${who} support user namespaces`),
    );
    assert.deepEqual(await ourSandboxes(`${name}-e2e-node`), [], 'nothing of the refused pod runs');
  }
});

let api: TestApiserver | undefined;
after(async () => {
  await api?.stop();
});

test('API server mode: a RuntimeClass maps to the alt handler and its overhead reaches the pod cgroup; a missing class runs nothing', async () => {
  // One agent at a time on this containerd: the standalone one and its pods go first.
  for (const f of readdirSync(manifests)) rmSync(join(manifests, f));
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(runtime, { namespace: NS });
  api = await startTestApiserver({ bookmarkMs: 1000 });
  const created = await api.call('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
    metadata: { name: 'fast' },
    handler: 'alt',
    overhead: { podFixed: { cpu: '100m', memory: '32Mi' } },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: [`--kubeconfig=${api.kubeconfig(dir)}`] });
  const post = async (pod: Pod) => {
    pod.spec!.nodeName = 'e2e-node';
    const r = await api!.call('POST', `/api/v1/namespaces/${NS}/pods`, pod);
    assert.equal(r.status, 201, JSON.stringify(r.body));
  };
  // Guaranteed 200m / 64Mi: with the class overhead the pod cgroup allows 96Mi.
  await post(podObject('api-fast', 'fast', { resources: { limits: { cpu: '200m', memory: '64Mi' } } }));
  await post(podObject('api-plain'));
  await post(podObject('api-nope', 'missing'));
  const runningId = (name: string) =>
    waitFor(
      `${name} running on the API`,
      60_000,
      () => {
        const p = api!.store.get('pods', NS, name) as Pod | undefined;
        const st = p?.status?.containerStatuses?.[0];
        return st?.state?.running ? st.containerID?.replace(/^\w+:\/\//, '') : undefined;
      },
      250,
    );
  const fastId = await runningId('api-fast');
  const plainId = await runningId('api-plain');
  assert.ok(runcList(ALT_ROOT).includes(fastId), "the class's handler (alt) ran the pod");
  assert.ok(
    !runcList(ALT_ROOT).includes(plainId) && runcList(DEFAULT_ROOT).includes(plainId),
    'the default pod ran under the default handler',
  );
  assert.equal(
    podCgroupMemoryLimit(ALT_ROOT, fastId),
    String(96 * 2 ** 20),
    'pod cgroup memory limit = 64Mi + 32Mi overhead',
  );

  const events = () =>
    api!.store
      .list('events', NS)
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'api-nope');
  const ev = await waitFor(
    'FailedCreatePodSandBox on the API',
    60_000,
    () => events().find((e) => e.reason === 'FailedCreatePodSandBox'),
    250,
  );
  assert.equal(ev.message, 'Failed to create pod sandbox: runtimeclasses.node.k8s.io "missing" not found');
  assert.deepEqual(await ourSandboxes('api-nope'), [], 'no sandbox in the runtime');
  assert.equal((api.store.get('pods', NS, 'api-nope') as Pod | undefined)?.status?.phase, 'Pending');
});
