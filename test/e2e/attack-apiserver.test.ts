/**
 * A hostile apiserver against the real agent (CLI, API server mode, real containerd). A pod runs
 * first; then the server turns hostile on the pod LIST/watch, one behaviour per test: a 200 MB
 * LIST, an endless watch line, a LIST dripped one byte per 100 ms, a garbage watch event, a watch
 * that never sends an event. Each time the agent must log the named limit (or bad-event) error,
 * keep its peak RSS (VmHWM) under RSS_CEILING, stay up, keep its node heartbeat going, and keep
 * its pod: still running in containerd and still in its /pods.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import type { Pod } from '../../src/api/types.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { startHostileApiserver, type HostileMode } from '../support/hostile-apiserver.js';

const NS = `hostile-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node';
const RSS_CEILING_KIB = 250 * 1024;

let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);
const api = await startHostileApiserver({ bookmarkMs: 1000 });
const kubeconfig = api.kubeconfig(dir);
// The order against the context's hook does not matter: an agent without its server only retries.
after(() => api.stop());

/** Peak resident set of the agent, from /proc/<pid>/status. */
function vmHwmKiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmHWM in /proc/<pid>/status');
  return Number(m[1]);
}

/** The agent's log written after byte `from`. */
const logSince = (from: number) => readFileSync(kubelet!.logFile, 'utf8').slice(from);

async function podKept(): Promise<void> {
  assert.equal(kubelet!.child.exitCode, null, 'the agent is still running');
  const running = await runtime.listContainers({ state: 'CONTAINER_RUNNING' });
  assert.ok(
    running.some((c) => c.labels['io.kubernetes.pod.name'] === 'web' && c.labels['io.kubernetes.pod.namespace'] === NS),
    'web still running in containerd',
  );
  assert.ok(
    (await getPods(kubelet!)).some((p) => p.metadata?.name === 'web' && p.metadata.namespace === NS),
    'web still in /pods',
  );
}

const leaseRenewals = (since: number) =>
  api.requests.filter(
    (r) =>
      r.at >= since &&
      r.path === `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}` &&
      r.method === 'PUT',
  ).length;

test('a pod created through the API runs', async () => {
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${kubeconfig}`, '--node-status-update-frequency=2s'],
    extraConfig: ['nodeLeaseDurationSeconds: 8'],
  });
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: NS },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'main',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        },
      ],
    },
  } as Pod;
  const r = await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  await waitFor(
    'web Running on the API',
    90_000,
    () => ((api.store.get('pods', NS, 'web') as Pod | undefined)?.status?.phase === 'Running' ? true : undefined),
    250,
  );
  await podKept();
});

const attacks: { mode: HostileMode; logged: RegExp; what: string }[] = [
  {
    mode: 'huge-list',
    what: 'a 200 MB LIST is cut at 64 MiB',
    logged: /apiserver response for \/api\/v1\/pods exceeded 64 MiB \(response body limit\); refused/,
  },
  {
    mode: 'endless-line',
    what: 'an endless watch line is cut at 16 MiB',
    logged: /apiserver watch event for \/api\/v1\/pods exceeded 16 MiB \(watch event line limit\); refused/,
  },
  {
    mode: 'slow-drip',
    what: 'a LIST dripped 1 byte / 100 ms hits the 30 s request deadline',
    logged: /apiserver response for \/api\/v1\/pods exceeded 30 s \(request deadline\); refused/,
  },
  {
    mode: 'garbage',
    what: 'a garbage watch event is a clear error and the watch restarts',
    logged: /watch \/api\/v1\/pods: event is not JSON/,
  },
];

for (const a of attacks) {
  test(`${a.mode}: ${a.what}; the agent stays under ${RSS_CEILING_KIB / 1024} MiB, up, and keeps its pod`, async (t) => {
    const mark = statSync(kubelet!.logFile).size;
    const before = api.hostileRequests;
    api.mode = a.mode;
    api.dropWatches();
    try {
      await waitFor(
        `the ${a.mode} error in the agent's log`,
        120_000,
        () => (a.logged.test(logSince(mark)) ? true : undefined),
        500,
      );
      assert.ok(api.hostileRequests > before, 'the hostile answers were requested');
      assert.match(logSince(mark), /KTS_ERR_API(_LIMIT)?/);
      const hwm = vmHwmKiB(kubelet!.pid);
      t.diagnostic(`VmHWM ${Math.round(hwm / 1024)} MiB`);
      assert.ok(hwm < RSS_CEILING_KIB, `VmHWM ${Math.round(hwm / 1024)} MiB under ${RSS_CEILING_KIB / 1024} MiB`);
      await podKept();
    } finally {
      api.mode = undefined;
    }
  });
}

test('silent-watch: a watch that never sends an event blocks nothing: heartbeat goes on, the pod stays', async () => {
  const before = api.hostileRequests;
  api.mode = 'silent-watch';
  api.dropWatches();
  try {
    await waitFor('a silent watch', 60_000, () => (api.hostileRequests > before ? true : undefined), 200);
    const since = Date.now();
    await waitFor(
      'lease renewals during the silent watch',
      30_000,
      () => (leaseRenewals(since) >= 2 ? true : undefined),
      250,
    );
    assert.ok(vmHwmKiB(kubelet!.pid) < RSS_CEILING_KIB);
    await podKept();
  } finally {
    api.mode = undefined;
    api.dropWatches();
  }
});

test('back to an honest server: the pod source recovers and the pod is still there', async () => {
  // A pod added now reaches the agent only through a working LIST/watch.
  const r = await api.call(
    'PATCH',
    `/api/v1/namespaces/${NS}/pods/web`,
    { metadata: { labels: { recovered: 'yes' } } },
    'application/merge-patch+json',
  );
  assert.equal(r.status, 200);
  await waitFor(
    'the label through the recovered watch',
    90_000,
    async () =>
      (await getPods(kubelet!)).find((p) => p.metadata?.name === 'web')?.metadata?.labels?.recovered === 'yes'
        ? true
        : undefined,
    500,
  );
  await podKept();
  assert.equal(kubelet!.child.exitCode, null);
});
