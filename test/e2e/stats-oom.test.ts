/**
 * Stats and OOM against real containerd and the real kernel: the daemon's /stats/summary,
 * /metrics/resource and /metrics/cadvisor for a busy and an idle container (upstream field
 * names, promtool-valid text), and a memory-limited container that the kernel really OOM-kills:
 * OOMKilled in its status, an OOMKilling event, and container_oom_events_total counting it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  httpGet,
  startKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `e2e-stats-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = TEST_IMAGES.busybox;
let kubelet: KubeletProcess | undefined;
// Leaves containerd as it was found: the after() hook removes every pod of this file's namespace.
const { endpoint, dir, manifests } = await agentTestContext(NS, () => kubelet);

function manifest(name: string, spec: object): void {
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
const container = (name: string, cmd: string, extra: object = {}) => ({
  name,
  image: IMAGE,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', cmd],
  ...extra,
});

interface SummaryPod {
  podRef: { name: string; namespace: string; uid: string };
  containers: Array<{
    name: string;
    cpu: { usageNanoCores?: number; usageCoreNanoSeconds?: number };
    memory: { workingSetBytes?: number };
  }>;
}
async function summary(
  only = false,
): Promise<{ node: { memory: { availableBytes: number }; fs: { capacityBytes: number } }; pods: SummaryPod[] }> {
  const r = await httpGet(kubelet!.readOnlyPort, `/stats/summary${only ? '?only_cpu_and_memory=true' : ''}`);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}
const podStats = (s: { pods: SummaryPod[] }, name: string) =>
  s.pods.find((p) => p.podRef.name === `${name}-e2e-node` && p.podRef.namespace === NS);
const promtool = spawnSync('promtool', ['--version']).status === 0;

test('stats: a busy container uses about a core, an idle one nearly nothing; endpoints parse with upstream names', async () => {
  manifest('busy', { containers: [container('spin', 'while true; do :; done')] });
  manifest('idle', { containers: [container('sleeper', "trap 'exit 0' TERM; sleep 3600 & wait")] });
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: ['--housekeeping-interval=1s'] });
  const s = await waitFor(
    'cpu rates of both containers',
    60_000,
    async () => {
      const s = await summary().catch(() => undefined);
      const busy = s && podStats(s, 'busy')?.containers[0];
      const idle = s && podStats(s, 'idle')?.containers[0];
      return busy?.cpu.usageNanoCores !== undefined &&
        idle?.cpu.usageNanoCores !== undefined &&
        busy.cpu.usageNanoCores > 0
        ? s
        : undefined;
    },
    500,
  );
  const busy = podStats(s, 'busy')!.containers[0]!;
  const idle = podStats(s, 'idle')!.containers[0]!;
  assert.equal(busy.name, 'spin');
  assert.ok(busy.cpu.usageNanoCores! > 0.2e9, `busy ~1 core (2 shared cores), got ${busy.cpu.usageNanoCores}`);
  assert.ok(idle.cpu.usageNanoCores! < 0.05e9, `idle ~0, got ${idle.cpu.usageNanoCores}`);
  assert.ok(busy.memory.workingSetBytes! > 0);
  for (const k of ['nodeName', 'startTime', 'cpu', 'memory', 'fs', 'runtime', 'rlimit'])
    assert.ok(k in s.node, `node.${k}`);
  assert.ok(s.node.memory.availableBytes > 0 && s.node.fs.capacityBytes > 0);
  // The counter keeps rising.
  await new Promise((r) => setTimeout(r, 1500));
  const later = podStats(await summary(true), 'busy')!.containers[0]!;
  assert.ok(later.cpu.usageCoreNanoSeconds! > busy.cpu.usageCoreNanoSeconds!, 'usageCoreNanoSeconds rises');

  const res = await httpGet(kubelet.readOnlyPort, '/metrics/resource');
  assert.equal(res.status, 200);
  assert.match(
    res.body,
    new RegExp(
      `^container_cpu_usage_seconds_total\\{container="spin",namespace="${NS}",pod="busy-e2e-node"\\} [0-9.]+ \\d+$`,
      'm',
    ),
  );
  assert.match(res.body, /^node_memory_working_set_bytes \d+ \d+$/m);
  const cad = await httpGet(kubelet.readOnlyPort, '/metrics/cadvisor');
  assert.equal(cad.status, 200);
  assert.match(
    cad.body,
    new RegExp(
      `^container_memory_working_set_bytes\\{container="sleeper",id="/kubepods/[^"]+",image="${IMAGE.replace(/[/.]/g, '\\$&')}",name="[0-9a-f]{64}",namespace="${NS}",pod="idle-e2e-node"\\} \\d+ \\d+$`,
      'm',
    ),
  );
  for (const body of promtool ? [res.body, cad.body] : []) {
    const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    assert.equal(r.status, 0, `promtool: ${r.stdout}${r.stderr}`);
  }
});

test('OOM: a memory-limited container really OOM-killed reads OOMKilled, raises OOMKilling and is counted', async () => {
  manifest('oom', {
    restartPolicy: 'Never',
    containers: [container('hog', 'sleep 1; tail /dev/zero', { resources: { limits: { memory: '20Mi' } } })],
  });
  const pod = await waitFor(
    'hog terminated',
    60_000,
    async () => {
      const p = (await getPods(kubelet!)).find((x: Pod) => x.metadata?.name === 'oom-e2e-node');
      return p?.status?.containerStatuses?.[0]?.state?.terminated ? p : undefined;
    },
    200,
  );
  const t = pod.status!.containerStatuses![0]!.state!.terminated!;
  assert.equal(t.reason, 'OOMKilled');
  assert.equal(t.exitCode, 137);
  const events = await waitFor('OOMKilling event', 10_000, () => {
    const lines = readFileSync(kubelet!.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"reason":"OOMKilling"') && l.includes(`Pod/${NS}/oom-e2e-node`));
    return lines.length > 0 ? lines : undefined;
  });
  assert.match(events[0]!, /"fieldPath":"spec.containers\{hog\}"/);
  const counted = await waitFor(
    'container_oom_events_total',
    10_000,
    async () => {
      const cad = await httpGet(kubelet!.readOnlyPort, '/metrics/cadvisor');
      const m = new RegExp(
        `^container_oom_events_total\\{container="hog",[^}]*namespace="${NS}",pod="oom-e2e-node"\\} (\\d+)`,
        'm',
      ).exec(cad.body);
      return m && Number(m[1]) >= 1 ? Number(m[1]) : undefined;
    },
    300,
  );
  assert.equal(counted, 1, 'one kill, counted once (kmsg and memory cgroup counter deduplicated)');
});
