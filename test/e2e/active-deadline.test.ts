/**
 * spec.activeDeadlineSeconds against the real agent and containerd: a static pod is failed with
 * reason DeadlineExceeded and upstream's message once its deadline has passed, an event says so,
 * and its containers and sandbox are stopped; a pod whose deadline passed while the agent was
 * stopped is killed as soon as the agent is back (its start time is not reset by the restart).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `e2e-deadline-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const MESSAGE = 'Pod was active on the node longer than the specified deadline';
let kubelet: KubeletProcess | undefined;
// Leaves containerd as it was found: the after() hook stops the agent and removes this file's pods.
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

function manifest(name: string, activeDeadlineSeconds: number): void {
  writeFileSync(
    join(manifests, `${name}.json`),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        activeDeadlineSeconds,
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
}

const podNamed = async (name: string): Promise<Pod | undefined> =>
  (await getPods(kubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);

const waitRunning = (name: string) =>
  waitFor(
    `${name} running`,
    60_000,
    async () => {
      const p = await podNamed(name);
      return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running ? p : undefined;
    },
    200,
  );

const waitDeadlineExceeded = (name: string, timeoutMs: number) =>
  waitFor(
    `${name} Failed/DeadlineExceeded`,
    timeoutMs,
    async () => {
      const p = await podNamed(name);
      return p?.status?.phase === 'Failed' && p.status.reason === 'DeadlineExceeded' ? p : undefined;
    },
    200,
  );

/** containerd's view: no container of the pod runs and its sandbox is not ready. */
async function stoppedInContainerd(name: string): Promise<true | undefined> {
  const podName = `${name}-e2e-node`;
  const ours = (labels: Record<string, string>) =>
    labels['io.kubernetes.pod.namespace'] === NS && labels['io.kubernetes.pod.name'] === podName;
  const running = (await runtime.listContainers({ state: 'CONTAINER_RUNNING' })).filter((c) => ours(c.labels));
  const ready = (await runtime.listPodSandbox()).filter((s) => ours(s.labels) && s.state === 'SANDBOX_READY');
  return running.length === 0 && ready.length === 0 ? true : undefined;
}

const deadlineEvents = (k: KubeletProcess, name: string) =>
  readFileSync(k.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"reason":"DeadlineExceeded"') && l.includes(`Pod/${NS}/${name}-e2e-node`));

test('a static pod with activeDeadlineSeconds: 3 runs, then is killed: Failed, DeadlineExceeded, upstream message, an event, containers stopped', async () => {
  manifest('short', 3);
  kubelet = startKubelet({ dir, manifests, endpoint });
  const running = await waitRunning('short');
  const startTime = Date.parse(String(running.status!.startTime));
  const failed = await waitDeadlineExceeded('short', 30_000);
  assert.equal(failed.status!.message, MESSAGE);
  assert.ok(Date.now() - startTime >= 3000, 'not failed before its deadline');
  await waitFor('short stopped in containerd', 20_000, () => stoppedInContainerd('short'), 200);
  const final = await waitFor(
    'short reported terminated',
    20_000,
    async () => {
      const p = await podNamed('short');
      return p?.status?.containerStatuses?.[0]?.state?.terminated ? p : undefined;
    },
    200,
  );
  assert.deepEqual(
    [final.status!.phase, final.status!.reason, final.status!.message],
    ['Failed', 'DeadlineExceeded', MESSAGE],
    'the reason stays once the containers stopped',
  );
  assert.equal(final.status!.containerStatuses![0]!.ready, false);
  const events = deadlineEvents(kubelet, 'short');
  assert.ok(events.length >= 1, 'a DeadlineExceeded event is recorded');
  assert.match(events[0]!, new RegExp(MESSAGE));
});

test('a pod whose deadline passed while the agent was stopped is killed right after the agent restarts', async () => {
  const DEADLINE_S = 15;
  rmSync(join(manifests, 'short.json'), { force: true }); // this test is about one pod only
  manifest('outlived', DEADLINE_S);
  kubelet ??= startKubelet({ dir, manifests, endpoint });
  const running = await waitRunning('outlived');
  const startTime = Date.parse(String(running.status!.startTime));
  await stopKubelet(kubelet);
  assert.equal(await stoppedInContainerd('outlived'), undefined, 'a stopped agent leaves its pods running');
  const wait = startTime + DEADLINE_S * 1000 + 1000 - Date.now();
  assert.ok(wait > 0, 'the agent was stopped before the deadline');
  await new Promise((r) => setTimeout(r, wait));

  const restartedAt = Date.now();
  kubelet = startKubelet({ dir, manifests, endpoint });
  // "Right after": the agent's start plus one sync tick or two; the bound is generous for a busy host.
  const failed = await waitDeadlineExceeded('outlived', 20_000);
  assert.equal(failed.status!.message, MESSAGE);
  assert.ok(
    Date.parse(String(failed.status!.startTime)) <= startTime + 5000,
    'the start time is from before the restart, not the restart',
  );
  assert.ok(Date.parse(String(failed.status!.startTime)) < restartedAt - DEADLINE_S * 1000);
  await waitFor('outlived stopped in containerd', 20_000, () => stoppedInContainerd('outlived'), 200);
  assert.ok(deadlineEvents(kubelet, 'outlived').length >= 1, 'the restarted agent records the event');
});
