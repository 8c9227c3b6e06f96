/**
 * The relist differ on real containerd replies: the raw ListPodSandbox / ListContainers bytes
 * (listPodSandboxRaw / listContainersRaw) through every implementation must give exactly what
 * the decoded client's listPodSandbox() / listContainers() give through the conventional diff,
 * as a kubelet-labelled pod's container starts, exits and is removed. Runs only with
 * KUBELET_TS_TEST_CRI_ENDPOINT set (scripts/test.sh sets it).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import type { ContainerConfig, PodSandboxConfig } from '../../src/cri/types.js';
import { implementations } from '../../src/cmd/hot-paths.js';
import type { RelistDiffer, RelistResult } from '../../src/pleg/relist-types.js';
import { createConventionalDiffer } from '../../bench/fixtures/relist-conventional.js';
import {
  ENDPOINT_ENV,
  removeTestPods,
  runtimeEndpoint,
  TEST_IMAGES,
  TEST_LABEL,
  uniqueName,
} from '../support/containerd.js';
import { testTempDir } from '../support/temp-dir.js';

const skip = process.env[ENDPOINT_ENV] ? false : `${ENDPOINT_ENV} not set`;
const RUN = uniqueName('pleg-raw');
const LABELS = { [TEST_LABEL]: RUN };
const UID = `${RUN}-uid`;
let cri: CriConnection | undefined;
let logRoot = '';

before(async () => {
  if (skip) return;
  cri = connectRuntime(await runtimeEndpoint(), { timeoutMs: 60_000 });
  logRoot = testTempDir('kts-pleg-raw-');
});

after(async () => {
  if (cri) {
    await removeTestPods(cri.runtime, { labels: LABELS });
    cri.runtime.close();
    cri.images.close();
  }
  if (logRoot) rmSync(logRoot, { recursive: true, force: true });
});

function plain(r: RelistResult) {
  return { events: r.events, pods: [...r.pods.entries()], counts: r.counts };
}

test('raw relists decoded by the skim decoders match the decoded client', { skip }, async () => {
  const runtime = cri!.runtime;
  const kubeletLabels = {
    'io.kubernetes.pod.uid': UID,
    'io.kubernetes.pod.name': 'web',
    'io.kubernetes.pod.namespace': 'kts-e2e',
  };
  const sbConfig: PodSandboxConfig = {
    metadata: { name: 'web', uid: UID, namespace: 'kts-e2e', attempt: 0 },
    hostname: '',
    logDirectory: join(logRoot, UID),
    portMappings: [],
    labels: { ...LABELS, ...kubeletLabels },
    annotations: { 'kubernetes.io/config.source': 'file' },
    linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
  };
  const container = (name: string, script: string): ContainerConfig => ({
    metadata: { name, attempt: 0 },
    image: { image: TEST_IMAGES.busybox },
    command: ['sh', '-c', script],
    args: [],
    workingDir: '/',
    envs: [],
    mounts: [],
    labels: { ...LABELS, ...kubeletLabels, 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.hash': 'abc', 'io.kubernetes.container.restartCount': '0' },
    logPath: `${name}/0.log`,
  });

  // Only our pod: other tests may share the daemon.
  const filter = { labelSelector: LABELS };
  const differs = [
    ...implementations('pleg').map((i) => ({ name: i.name, d: i.createRelistDiffer() as RelistDiffer })),
  ];
  const reference = createConventionalDiffer();
  const relist = async (what: string) => {
    const [sbRaw, ctRaw] = await Promise.all([runtime.listPodSandboxRaw(filter), runtime.listContainersRaw(filter)]);
    const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(filter), runtime.listContainers(filter)]);
    // The two calls raced nothing but our own steps, which are awaited: same runtime state.
    assert.deepEqual(containers.map((c) => c.id).sort(), [...new Set(containers.map((c) => c.id))].sort());
    const want = plain(reference.diffObjects(sandboxes, containers));
    for (const { name, d } of differs) assert.deepEqual(plain(d.diff(sbRaw, ctRaw)), want, `${what}: ${name}`);
    return want;
  };

  assert.deepEqual((await relist('nothing yet')).events, []);
  const sb = await runtime.runPodSandbox(sbConfig);
  let r = await relist('sandbox ready');
  assert.deepEqual(r.events, [{ podId: UID, containerId: sb, type: 'ContainerStarted' }]);
  assert.deepEqual(r.pods, [[UID, { uid: UID, name: 'web', namespace: 'kts-e2e' }]]);
  assert.equal(r.counts.runningPods, 1);

  const long = await runtime.createContainer(sb, container('long', 'exec sleep 1000'), sbConfig);
  const short = await runtime.createContainer(sb, container('short', 'exit 3'), sbConfig);
  r = await relist('created');
  assert.deepEqual(
    r.events.map((e) => e.type),
    ['ContainerChanged', 'ContainerChanged'],
  );
  assert.equal(r.counts.containers.created, 2);

  await runtime.startContainer(long);
  await runtime.startContainer(short);
  const deadline = Date.now() + 15_000;
  while ((await runtime.containerStatus(short)).state !== 'CONTAINER_EXITED') {
    assert.ok(Date.now() < deadline, 'short container did not exit');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  r = await relist('started, one exited');
  const byId = Object.fromEntries(r.events.map((e) => [e.containerId, e.type]));
  assert.equal(byId[long], 'ContainerStarted');
  assert.equal(byId[short], 'ContainerDied');

  await runtime.removeContainer(short);
  await runtime.stopContainer(long, 0);
  r = await relist('one removed, one stopped');
  assert.deepEqual(Object.fromEntries(r.events.map((e) => [`${e.containerId}/${e.type}`, true])), {
    [`${long}/ContainerDied`]: true,
    [`${short}/ContainerRemoved`]: true,
  });

  await runtime.stopPodSandbox(sb);
  r = await relist('sandbox stopped');
  assert.deepEqual(r.events, [{ podId: UID, containerId: sb, type: 'ContainerDied' }]);
  assert.equal(r.counts.runningPods, 0);
  await runtime.removeContainer(long);
  await runtime.removePodSandbox(sb);
  r = await relist('all gone');
  assert.equal(r.events.length, 2);
  for (const { d } of differs) d.close();
});
