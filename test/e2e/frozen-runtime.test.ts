/**
 * "Never run a pod twice" through a frozen runtime (issue 14; upstream TestRelistWithCache and the
 * pod worker's "error determining status"): containerd is stopped with SIGSTOP for longer than
 * --runtime-request-timeout, three times, while pods run and others crash-loop (so relists keep
 * finding events to inspect). A status read that fails must not lead to a sync on an empty status,
 * which would start a second sandbox beside the live one. Afterwards every pod has exactly one
 * sandbox, the steady pods keep the very container they had, and the agent is healthy.
 *
 * SIGSTOP mostly lands on the relist's list calls (the relist then fails as a whole, harmlessly);
 * the dangerous moment is narrower: lists answered, status reads not. The second test makes that
 * moment certain with a pass-through proxy in front of the same containerd that holds only the
 * status reads (PodSandboxStatus, ContainerStatus) past the request timeout, while a container
 * dies: the PLEG must send no event for that pod, and no second sandbox may appear.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTestPods, TEST_IMAGES } from '../support/containerd.js';
import { startStallingCriProxy } from '../support/stalling-cri-proxy.js';
import {
  agentTestContext,
  getPods,
  httpGet,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const NS = `e2e-frozen-${MODE}-${Math.random().toString(36).slice(2, 7)}`;
const TIMEOUT_S = 1;
const FREEZE_MS = 1500;
const ROUNDS = 12;
let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

/** The test containerd's pid, as scripts/containerd.sh recorded it, checked against its command line. */
function containerdPid(): number {
  const stateDir = dirname(fileURLToPath(endpoint.replace(/^unix:\/\//, 'file://')));
  const pid = Number(readFileSync(join(stateDir, 'containerd.pid'), 'utf8').trim());
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  assert.ok(
    cmdline.startsWith(`containerd --config ${stateDir}/config.toml`),
    `pid ${pid} is our containerd (${cmdline})`,
  );
  return pid;
}

const STEADY = ['steady-a', 'steady-b', 'steady-c'];
const CRASHING = ['crash-a', 'crash-b', 'crash-c', 'crash-d'];
function manifest(name: string, cmd: string, dirOf = manifests): void {
  writeFileSync(
    join(dirOf, `${name}.json`),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'c', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', cmd] },
        ],
      },
    }),
  );
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
  return new Map(
    pods
      .filter((p) => p.status?.containerStatuses?.[0]?.state?.running)
      .map((p) => [p.metadata!.name!.replace(/-e2e-node$/, ''), p.status!.containerStatuses![0]!.containerID!]),
  );
}

test(
  'pods survive a runtime frozen past the request timeout with one sandbox each, never two',
  { timeout: 240_000 },
  async () => {
    for (const n of STEADY) manifest(n, "trap 'exit 0' TERM; sleep 3600 & wait");
    for (const n of CRASHING) manifest(n, 'sleep 0.3; exit 1');
    kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: [`--runtime-request-timeout=${TIMEOUT_S}s`] });
    const before = await waitFor(
      'steady pods running',
      90_000,
      async () => {
        const ids = await runningContainerIds();
        return STEADY.every((n) => ids.has(n)) ? ids : undefined;
      },
      250,
    );

    const pid = containerdPid();
    for (let round = 0; round < ROUNDS; round++) {
      await new Promise((r) => setTimeout(r, 200 + Math.floor(Math.random() * 1000)));
      process.kill(pid, 'SIGSTOP');
      try {
        await new Promise((r) => setTimeout(r, FREEZE_MS));
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    }

    // Recovery: the agent reads the runtime again, PLEG healthy, and nothing more is created.
    await waitFor(
      'the agent healthy again',
      60_000,
      async () => ((await httpGet(kubelet!.healthzPort, '/healthz')).status === 200 ? true : undefined),
      500,
    );
    await new Promise((r) => setTimeout(r, 5000));
    const sandboxes = await sandboxesByPod();
    for (const n of [...STEADY, ...CRASHING])
      assert.equal(sandboxes.get(`${n}-e2e-node`), 1, `${n}: exactly one sandbox (${JSON.stringify([...sandboxes])})`);
    const after = await runningContainerIds();
    for (const n of STEADY) assert.equal(after.get(n), before.get(n), `${n} kept its container`);
    const containers = (await runtime.listContainers()).filter(
      (c) => c.labels['io.kubernetes.pod.namespace'] === NS && c.state === 'CONTAINER_RUNNING',
    );
    const perPod = new Map<string, number>();
    for (const c of containers)
      perPod.set(c.labels['io.kubernetes.pod.name']!, (perPod.get(c.labels['io.kubernetes.pod.name']!) ?? 0) + 1);
    for (const n of STEADY) assert.equal(perPod.get(`${n}-e2e-node`), 1, `${n}: one running container`);
  },
);

test(
  'status reads frozen while the lists go through: no event for that pod, no second sandbox',
  { timeout: 180_000 },
  async () => {
    // A clean start: the first test's agent and pods go.
    if (kubelet) await stopKubelet(kubelet);
    kubelet = undefined;
    for (const f of readdirSync(manifests)) unlinkSync(join(manifests, f));
    // removeTestPods retries what containerd refuses for now (a container still stopping, or still
    // "starting" after a StartContainer the agent gave up on).
    await removeTestPods(runtime, { namespace: NS }, endpoint);
    const proxy = await startStallingCriProxy(dir, endpoint);
    try {
      manifest('held-steady', "trap 'exit 0' TERM; sleep 3600 & wait");
      manifest('held-dies', "trap 'exit 0' TERM; sleep 3600 & wait");
      kubelet = startKubelet({
        dir,
        manifests,
        endpoint: proxy.endpoint,
        extraArgs: [`--runtime-request-timeout=${TIMEOUT_S}s`],
      });
      const before = await waitFor(
        'both pods running',
        90_000,
        async () => {
          const ids = await runningContainerIds();
          return ids.has('held-steady') && ids.has('held-dies') ? ids : undefined;
        },
        250,
      );
      const sandboxesCreated = proxy.calls.get('RunPodSandbox') ?? 0;
      proxy.stall(['PodSandboxStatus', 'ContainerStatus']);
      // The container dies behind the agent's back (straight to containerd, not through the proxy).
      await runtime.stopContainer(before.get('held-dies')!.replace(/^containerd:\/\//, ''), 0);
      await waitFor(
        "the PLEG's inspection of the pod held and failed",
        30_000,
        () =>
          readFileSync(kubelet!.logFile, 'utf8').includes('PLEG: pod status inspection failed') ? true : undefined,
        250,
      );
      await new Promise((r) => setTimeout(r, 4 * TIMEOUT_S * 1000)); // several relists, each failing its status read
      // Not even tried: with an empty status computePodActions would ask for a new sandbox, and
      // only the name containerd reserves for attempt 0 would then stop a second one.
      assert.equal(
        proxy.calls.get('RunPodSandbox') ?? 0,
        sandboxesCreated,
        "no RunPodSandbox while the pod's status could not be read",
      );
      const during = await sandboxesByPod();
      assert.equal(
        during.get('held-dies-e2e-node'),
        1,
        `no second sandbox while the status is unknown (${JSON.stringify([...during])})`,
      );
      proxy.release();
      await waitFor(
        'the dead container restarted in its sandbox',
        60_000,
        async () => {
          const ids = await runningContainerIds();
          return ids.get('held-dies') && ids.get('held-dies') !== before.get('held-dies') ? true : undefined;
        },
        250,
      );
      const after = await sandboxesByPod();
      assert.equal(after.get('held-dies-e2e-node'), 1, 'one sandbox: the container was restarted in the live one');
      assert.equal(after.get('held-steady-e2e-node'), 1);
      assert.equal(
        (await runningContainerIds()).get('held-steady'),
        before.get('held-steady'),
        'the steady pod kept its container',
      );
    } finally {
      if (kubelet) await stopKubelet(kubelet);
      kubelet = undefined;
      await proxy.close();
    }
  },
);
