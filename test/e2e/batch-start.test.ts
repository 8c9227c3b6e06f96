/**
 * Many pods written at once (issue 18): the real CLI against real containerd, 30 hostNetwork
 * static pods in one go. Every pod reaches Running (the CRI start scheduler bounds and orders
 * the sandbox and container calls; nothing may starve), a killed container of one of them is
 * restarted while the others run, and every pod goes when its manifest does. Generous bounds only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { killContainerProcesses } from '../support/container-pids.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';

const NS = `e2e-burst-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const PODS = 30;

let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

function manifest(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      hostNetwork: true,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'c',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', 'trap "exit 0" TERM; sleep 100000 & wait'],
        },
      ],
    },
  });
}

const ours = (pods: Pod[]) => pods.filter((p) => p.metadata?.namespace === NS);
const isRunning = (p: Pod) =>
  p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.state?.running);

test(
  `${PODS} pods written at once all run; a killed container among them is restarted; all go with their manifests`,
  { timeout: 10 * 60_000 },
  async () => {
    kubelet = startKubelet({ dir, manifests, endpoint, logLevel: 'info' });
    await waitFor('agent up', 60_000, async () => ((await getPods(kubelet!)) ? true : undefined), 100);
    for (let i = 0; i < PODS; i++) writeFileSync(join(manifests, `b${i}.json`), manifest(`b${i}`));
    const pods = await waitFor(
      `${PODS} pods Running`,
      5 * 60_000,
      async () => {
        const p = ours(await getPods(kubelet!));
        return p.length === PODS && p.every(isRunning) ? p : undefined;
      },
      250,
    );
    assert.equal(new Set(pods.map((p) => p.metadata?.uid)).size, PODS, 'one pod per manifest');

    const victim = pods[PODS - 1]!;
    const st = victim.status!.containerStatuses![0]!;
    assert.ok(
      killContainerProcesses(st.containerID!.replace(/^\w+:\/\//, '')) > 0,
      'the container had processes in its cgroup',
    );
    await waitFor(
      'victim restarted',
      60_000,
      async () => {
        const now = ours(await getPods(kubelet!)).find((p) => p.metadata?.uid === victim.metadata?.uid)?.status
          ?.containerStatuses?.[0];
        return now && now.restartCount > st.restartCount && now.state?.running ? true : undefined;
      },
      100,
    );
    assert.equal(ours(await getPods(kubelet!)).filter(isRunning).length, PODS, 'the others kept running');

    for (let i = 0; i < PODS; i++) rmSync(join(manifests, `b${i}.json`));
    await waitFor(
      'all pods gone',
      3 * 60_000,
      async () => (ours(await getPods(kubelet!)).length === 0 ? true : undefined),
      250,
    );
    // Gone from /pods comes before the kills finish: wait for them too, so that the clean-up after
    // the test never races the agent's own StopContainer calls.
    await waitFor(
      'all sandboxes stopped',
      3 * 60_000,
      async () =>
        (await runtime.listPodSandbox()).some((s) => s.metadata.namespace === NS && s.state === 'SANDBOX_READY')
          ? undefined
          : true,
      250,
    );
  },
);
