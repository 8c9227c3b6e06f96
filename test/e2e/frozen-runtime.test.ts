/**
 * "Never run a pod twice" through a frozen runtime (issue 14; upstream TestRelistWithCache and the
 * pod worker's "error determining status"): containerd is stopped with SIGSTOP for longer than
 * --runtime-request-timeout, three times, while pods run and others crash-loop (so relists keep
 * finding events to inspect). A status read that fails must not lead to a sync on an empty status,
 * which would start a second sandbox beside the live one. Afterwards every pod has exactly one
 * sandbox, the steady pods keep the very container they had, and the agent is healthy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_IMAGES } from '../support/containerd.js';
import { agentTestContext, getPods, httpGet, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const NS = `e2e-frozen-${MODE}-${Math.random().toString(36).slice(2, 7)}`;
const TIMEOUT_S = 2;
const FREEZE_MS = 3 * TIMEOUT_S * 1000;
let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

/** The test containerd's pid, as scripts/containerd.sh recorded it, checked against its command line. */
function containerdPid(): number {
  const stateDir = dirname(fileURLToPath(endpoint.replace(/^unix:\/\//, 'file://')));
  const pid = Number(readFileSync(join(stateDir, 'containerd.pid'), 'utf8').trim());
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  assert.ok(cmdline.startsWith(`containerd --config ${stateDir}/config.toml`), `pid ${pid} is our containerd (${cmdline})`);
  return pid;
}

const STEADY = ['steady-a', 'steady-b', 'steady-c'];
const CRASHING = ['crash-a', 'crash-b'];
function manifest(name: string, cmd: string): void {
  writeFileSync(join(manifests, `${name}.json`), JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', cmd] }] },
  }));
}

async function sandboxesByPod(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of await runtime.listPodSandbox()) {
    if (s.metadata.namespace !== NS) continue;
    out.set(s.metadata.name, (out.get(s.metadata.name) ?? 0) + 1);
  }
  return out;
}

async function runningContainerIds(): Promise<Map<string, string>> {
  const pods = (await getPods(kubelet!)).filter((p) => p.metadata?.namespace === NS);
  return new Map(pods.filter((p) => p.status?.containerStatuses?.[0]?.state?.running).map((p) => [p.metadata!.name!.replace(/-e2e-node$/, ''), p.status!.containerStatuses![0]!.containerID!]));
}

test('pods survive a runtime frozen past the request timeout with one sandbox each, never two', { timeout: 240_000 }, async () => {
  for (const n of STEADY) manifest(n, "trap 'exit 0' TERM; sleep 3600 & wait");
  for (const n of CRASHING) manifest(n, 'sleep 1; exit 1');
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: [`--runtime-request-timeout=${TIMEOUT_S}s`] });
  const before = await waitFor('steady pods running', 90_000, async () => {
    const ids = await runningContainerIds();
    return STEADY.every((n) => ids.has(n)) ? ids : undefined;
  }, 250);

  const pid = containerdPid();
  for (let round = 0; round < 3; round++) {
    await new Promise((r) => setTimeout(r, 500 + Math.floor(Math.random() * 1000)));
    process.kill(pid, 'SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, FREEZE_MS));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  }

  // Recovery: the agent reads the runtime again, PLEG healthy, and nothing more is created.
  await waitFor('the agent healthy again', 60_000, async () => ((await httpGet(kubelet!.healthzPort, '/healthz')).status === 200 ? true : undefined), 500);
  await new Promise((r) => setTimeout(r, 5000));
  const sandboxes = await sandboxesByPod();
  for (const n of [...STEADY, ...CRASHING]) assert.equal(sandboxes.get(`${n}-e2e-node`), 1, `${n}: exactly one sandbox (${JSON.stringify([...sandboxes])})`);
  const after = await runningContainerIds();
  for (const n of STEADY) assert.equal(after.get(n), before.get(n), `${n} kept its container`);
  const containers = (await runtime.listContainers()).filter((c) => c.labels['io.kubernetes.pod.namespace'] === NS && c.state === 'CONTAINER_RUNNING');
  const perPod = new Map<string, number>();
  for (const c of containers) perPod.set(c.labels['io.kubernetes.pod.name']!, (perPod.get(c.labels['io.kubernetes.pod.name']!) ?? 0) + 1);
  for (const n of STEADY) assert.equal(perPod.get(`${n}-e2e-node`), 1, `${n}: one running container`);
});
