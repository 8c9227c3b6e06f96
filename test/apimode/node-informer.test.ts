/**
 * The node informer and the node status loop reading it (upstream tryUpdateNodeStatus: the
 * first try reads the nodeLister, retries GET the Node): one list+watch of the node's own Node;
 * status updates make no Node GET while the informer has it; an informer without the Node (not
 * synced yet, deleted) and the update after a failed one GET it from the apiserver.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClients, type ApiClient } from '../../src/apiclient/index.js';
import { NodeInformer } from '../../src/apimode/node-informer.js';
import { createNodeStatusManager, type NodeStatusDeps } from '../../src/nodestatus/index.js';
import { computeNodeInfo } from '../../src/node/node-info.js';
import { startTestApiserver, TEST_CALL_USER_AGENT } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';

const dir = testTempDir('kts-node-informer-');
const api = await startTestApiserver({ bookmarkMs: 200 });
const clients = await createApiClients(api.kubeconfig(dir), { userAgent: 'kubelet-ts/test' });
after(async () => {
  clients.close();
  await api.stop();
});

/** The loop's own first update (right after registration) has been answered. */
async function firstUpdateDone(name: string): Promise<void> {
  const path = `/api/v1/nodes/${name}/status`;
  await waitFor('first status update', 5000, () => api.requests.some((r) => r.path === path) || undefined, 10);
  await new Promise((r) => setTimeout(r, 50));
}

const nodeGets = (name: string) =>
  api.requests.filter((r) => r.method === 'GET' && r.path === `/api/v1/nodes/${name}`).length;

/** The heartbeat client, whose next `failPatches` status PATCHes fail as a cut connection would. */
function flakyHeartbeat(): { client: ApiClient; failPatches: number } {
  const state = { failPatches: 0, client: undefined as unknown as ApiClient };
  state.client = {
    ...clients.heartbeat,
    request: async (req) => {
      if (req.method === 'PATCH' && state.failPatches > 0) {
        state.failPatches--;
        throw new Error('connection reset');
      }
      return clients.heartbeat.request(req);
    },
    watch: (...args) => clients.heartbeat.watch(...args),
    resetConnections: () => undefined,
  };
  return state;
}

function deps(name: string, heartbeat: ApiClient, informer?: NodeInformer): NodeStatusDeps {
  return {
    client: clients.main,
    heartbeat,
    nodeIPs: ['10.0.0.9'],
    kubeletPort: 10250,
    registerNode: true,
    node: computeNodeInfo({ nodeName: name, maxPods: 10, capacity: { milliCPU: 1000, memory: 1024 ** 3 } }),
    taints: [],
    rootDir: dir,
    kubeletVersion: 'v0-test',
    runtimeVersion: async () => 'containerd://2.1.0',
    images: async () => [],
    readinessErrors: () => [],
    updateFrequencyMs: 60_000,
    reportFrequencyMs: 0, // every update patches: the patch is what fails below
    ...(informer ? { cachedNode: () => informer.get() } : {}),
  };
}

test('the informer keeps only its own Node, through one list and one watch', async () => {
  const informer = new NodeInformer(clients.main, 'inf-a');
  informer.start();
  try {
    await api.call('POST', '/api/v1/nodes', { metadata: { name: 'inf-other' } });
    await api.call('POST', '/api/v1/nodes', { metadata: { name: 'inf-a', labels: { v: '1' } } });
    await waitFor('Node seen', 5000, () => informer.get(), 20);
    await api.call(
      'PATCH',
      '/api/v1/nodes/inf-a',
      { metadata: { labels: { v: '2' } } },
      'application/merge-patch+json',
    );
    await waitFor('edit seen', 5000, () => (informer.get()?.metadata?.labels?.v === '2' ? true : undefined), 20);
    await api.call('DELETE', '/api/v1/nodes/inf-a');
    await waitFor('deletion seen', 5000, () => (informer.get() === undefined ? true : undefined), 20);
    const t = api.traffic.snapshot('kubelet-ts/test');
    assert.deepEqual(t.openWatches, ['/api/v1/nodes?fieldSelector=metadata.name=inf-a']);
    assert.equal(t.requests['list nodes'], 1);
    assert.equal(t.requests['watch nodes'], 1);
    assert.equal(api.traffic.snapshot(TEST_CALL_USER_AGENT).requests['create nodes'], 2);
  } finally {
    informer.stop();
  }
});

test('status updates read the informer: no Node GET; a GET without it and after a failed update', async () => {
  const informer = new NodeInformer(clients.main, 'inf-b');
  informer.start();
  const hb = flakyHeartbeat();
  const m = createNodeStatusManager(deps('inf-b', hb.client, informer));
  try {
    m.start(); // registers, then the first update
    await m.registered();
    await firstUpdateDone('inf-b');
    await waitFor('informer has the Node', 5000, () => informer.get(), 20);
    await m.updateNodeStatus();
    const gets = nodeGets('inf-b');
    for (let i = 0; i < 3; i++) await m.updateNodeStatus();
    assert.equal(nodeGets('inf-b'), gets, 'updates read the informer, not the apiserver');
    hb.failPatches = 1;
    await assert.rejects(m.updateNodeStatus(), /connection reset/);
    assert.equal(nodeGets('inf-b'), gets, 'the failed try read the informer');
    await m.updateNodeStatus();
    assert.equal(nodeGets('inf-b'), gets + 1, 'the retry GETs the Node (upstream tryNumber > 0)');
    await m.updateNodeStatus();
    assert.equal(nodeGets('inf-b'), gets + 1, 'after a success the informer again');
  } finally {
    m.stop();
    informer.stop();
  }
});

test('without an informer every update GETs the Node', async () => {
  const m = createNodeStatusManager(deps('inf-c', clients.heartbeat));
  try {
    m.start();
    await m.registered();
    await firstUpdateDone('inf-c');
    const gets = nodeGets('inf-c');
    await m.updateNodeStatus();
    await m.updateNodeStatus();
    assert.equal(nodeGets('inf-c'), gets + 2);
  } finally {
    m.stop();
  }
});
