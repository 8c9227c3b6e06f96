/**
 * RuntimeClass against the real agent and containerd (standalone mode: the class name is the
 * runtime handler). scripts/containerd.sh configures a second handler, `alt`: runc again, with
 * its own state root <state-dir>/runc-alt. A pod with runtimeClassName: alt runs beside a
 * default pod, and runc's own state shows which handler ran which container; a pod whose class
 * the runtime does not know gets no sandbox, and the failure is reported (event
 * FailedCreatePodSandBox, the pod stays Pending with its container waiting).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';

const NS = `e2e-rtclass-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
// Leaves containerd as it was found: the after() hook stops the agent and removes this file's pods.
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

/** containerd.sh puts the socket at <state-dir>/containerd.sock and the alt handler's root beside it. */
const STATE_DIR = dirname(endpoint.replace(/^unix:\/\//, ''));

function manifest(name: string, runtimeClassName?: string): void {
  writeFileSync(join(manifests, `${name}.json`), JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: {
      ...(runtimeClassName ? { runtimeClassName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"] }],
    },
  }));
}

const podNamed = async (name: string): Promise<Pod | undefined> => (await getPods(kubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);

/** The running container's ID (without the containerd:// prefix). */
const waitRunningContainer = (name: string) => waitFor(`${name} running`, 60_000, async () => {
  const p = await podNamed(name);
  const id = p?.status?.containerStatuses?.[0]?.state?.running ? p.status.containerStatuses[0]!.containerID : undefined;
  return id?.replace(/^\w+:\/\//, '');
}, 200);

/** The container IDs runc itself knows under one state root (namespace k8s.io). */
function runcList(root: string): string[] {
  const out = execFileSync('runc', ['--root', join(root, 'k8s.io'), 'list', '--format', 'json'], { encoding: 'utf8' });
  return ((JSON.parse(out || 'null') as { id: string }[] | null) ?? []).map((c) => c.id);
}

const ourSandboxes = async (name: string) =>
  (await runtime.listPodSandbox()).filter((s) => s.labels['io.kubernetes.pod.namespace'] === NS && s.labels['io.kubernetes.pod.name'] === `${name}-e2e-node`);

test('a pod with runtimeClassName: alt runs under the alt handler beside a default pod', async () => {
  manifest('alt', 'alt');
  manifest('plain');
  kubelet = startKubelet({ dir, manifests, endpoint });
  const altId = await waitRunningContainer('alt');
  const plainId = await waitRunningContainer('plain');

  const alt = runcList(join(STATE_DIR, 'runc-alt'));
  const plain = runcList(join(STATE_DIR, 'runc'));
  assert.ok(alt.includes(altId), `runc-alt lists the alt pod's container ${altId}: ${alt.join(' ')}`);
  assert.ok(!alt.includes(plainId), 'the default pod did not run under alt');
  assert.ok(plain.includes(plainId), 'the default pod ran under the default handler');
  assert.ok(!plain.includes(altId), 'the alt pod did not run under the default handler');
  // The sandbox went to the handler too (its pause container is in the alt root).
  const [sandbox] = await ourSandboxes('alt');
  assert.ok(sandbox && alt.includes(sandbox.id), 'the alt pod sandbox runs under alt');
  assert.equal(sandbox.runtimeHandler, 'alt');
});

test('a pod whose runtime class is unknown runs nothing and reports FailedCreatePodSandBox', async () => {
  manifest('nope', 'no-such-handler');
  kubelet ??= startKubelet({ dir, manifests, endpoint });
  const line = await waitFor('FailedCreatePodSandBox event', 60_000, () =>
    readFileSync(kubelet!.logFile, 'utf8').split('\n').find((l) => l.includes('"reason":"FailedCreatePodSandBox"') && l.includes(`Pod/${NS}/nope-e2e-node`)), 200);
  assert.match(line, /Failed to create pod sandbox: .*no-such-handler/);
  const p = await podNamed('nope');
  assert.equal(p?.status?.phase, 'Pending');
  assert.equal(p?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  assert.deepEqual(await ourSandboxes('nope'), [], 'no sandbox in the runtime');
});
