/**
 * In-place pod resize (GA in 1.35) with the real kubectl against the test apiserver's `resize`
 * subresource, on the real runtime: a cpu and a memory limit change keep the container (same
 * ID, restart count 0) and reach its cgroup (cpu.cfs_quota_us, memory.limit_in_bytes), status
 * shows allocatedResources and the actual resources; a container whose memory resizePolicy is
 * RestartContainer is restarted alone; a resize beyond the node's cpu is PodResizePending
 * Infeasible; an agent restart keeps the allocation (docs/resize.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, Pod } from '../../src/api/types.js';
import { containerCgroupFile } from '../support/container-pids.js';
import { startKubelet, stopKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { apiModeE2e } from '../support/api-mode-e2e.js';

const fx = await apiModeE2e('resize');
const { ns: NS, node: NODE, endpoint, dir, manifests, api, kubeconfig, skip } = fx;

const kubectl = fx.kubectl;

async function resize(container: string, resources: unknown): Promise<void> {
  const patch = JSON.stringify({ spec: { containers: [{ name: container, resources }] } });
  const r = await kubectl(['patch', 'pod', 'web', '--subresource', 'resize', '--patch', patch]);
  assert.equal(r.code, 0, r.stderr);
}

const apiPod = () => api.store.get('pods', NS, 'web') as Pod | undefined;
const statusOf = (name: string): ApiContainerStatus | undefined =>
  apiPod()?.status?.containerStatuses?.find((s) => s.name === name);
const cid = (name: string) => statusOf(name)?.containerID?.replace(/^[a-z]+:\/\//, '') ?? '';

/** waitFor, naming the pod's status when it times out. */
async function waitForStatus<T>(what: string, ms: number, check: () => T | undefined, every: number): Promise<T> {
  try {
    return await waitFor(what, ms, check, every);
  } catch (err) {
    throw new Error(`${String(err)}: status ${JSON.stringify(apiPod()?.status)}`, { cause: err });
  }
}

function start(): KubeletProcess {
  return startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${kubeconfig}`, `--hostname-override=${NODE}`, '--node-ip=127.0.0.1'],
  });
}

const container = (name: string, memoryPolicy: 'NotRequired' | 'RestartContainer') => ({
  name,
  image: 'localhost/kubelet-ts/busybox:latest',
  imagePullPolicy: 'IfNotPresent',
  command: ['sleep', '3600'],
  resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
  resizePolicy: [
    { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    { resourceName: 'memory', restartPolicy: memoryPolicy },
  ],
});

test(
  'in-place resize through kubectl: cgroups, status, RestartContainer, Infeasible, agent restart',
  { skip },
  async () => {
    fx.kubelet = start();
    await waitFor('node registered', 60_000, () => api.store.get('nodes', undefined, NODE), 250);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: NS },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [container('main', 'NotRequired'), container('restarter', 'RestartContainer')],
      },
    } as Pod;
    assert.equal((await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
    await waitFor(
      'both running',
      90_000,
      () => (statusOf('main')?.state?.running && statusOf('restarter')?.state?.running) || undefined,
      250,
    );
    const mainId = cid('main');
    const restarterId = cid('restarter');
    assert.deepEqual(statusOf('main')?.allocatedResources, { cpu: '100m', memory: '32Mi' });
    assert.equal(containerCgroupFile('cpu', mainId, 'cpu.cfs_quota_us'), '20000');

    // NotRequired: cpu and memory limits change in place.
    await resize('main', { limits: { cpu: '300m', memory: '96Mi' } });
    await waitForStatus(
      'main resized in status',
      60_000,
      () => {
        const l = statusOf('main')?.resources?.limits as Record<string, string> | undefined;
        return l?.cpu === '300m' && l.memory === '96Mi' ? true : undefined;
      },
      250,
    );
    assert.equal(cid('main'), mainId, 'same container');
    assert.equal(statusOf('main')?.restartCount, 0);
    assert.equal(containerCgroupFile('cpu', mainId, 'cpu.cfs_quota_us'), '30000');
    assert.equal(containerCgroupFile('memory', mainId, 'memory.limit_in_bytes'), String(96 * 1024 * 1024));
    assert.ok(!apiPod()?.status?.conditions?.some((c) => c.type === 'PodResizeInProgress'), 'no resize in progress');

    // RestartContainer for memory: only that container restarts.
    await resize('restarter', { limits: { cpu: '200m', memory: '80Mi' } });
    await waitForStatus(
      'restarter restarted',
      60_000,
      () => (statusOf('restarter')?.restartCount === 1 && statusOf('restarter')?.state?.running) || undefined,
      250,
    );
    assert.notEqual(cid('restarter'), restarterId);
    assert.equal(containerCgroupFile('memory', cid('restarter'), 'memory.limit_in_bytes'), String(80 * 1024 * 1024));
    assert.equal(cid('main'), mainId, 'the other container keeps running');
    assert.equal(statusOf('main')?.restartCount, 0);

    // More cpu than the node has: Infeasible, nothing changes.
    await resize('main', { requests: { cpu: '1000' }, limits: { cpu: '1000' } });
    const pending = await waitForStatus(
      'PodResizePending',
      60_000,
      () => apiPod()?.status?.conditions?.find((c) => c.type === 'PodResizePending'),
      250,
    );
    assert.equal(pending.reason, 'Infeasible');
    assert.match(pending.message ?? '', /^Node didn't have enough capacity: cpu, requested: 1000100, capacity: \d+$/);
    assert.deepEqual(statusOf('main')?.allocatedResources, { cpu: '100m', memory: '32Mi' });

    // An agent restart keeps the allocation: the pod is admitted at it and still runs as it was.
    await stopKubelet(fx.kubelet!);
    fx.kubelet = start();
    await waitForStatus(
      're-evaluated after the restart',
      60_000,
      () => {
        const p = apiPod();
        return p?.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'PodResizePending')
          ? true
          : undefined;
      },
      250,
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(apiPod()?.status?.phase, 'Running', 'not rejected at the spec resources');
    assert.equal(cid('main'), mainId);
    assert.equal(statusOf('main')?.restartCount, 0);
    assert.equal(containerCgroupFile('cpu', mainId, 'cpu.cfs_quota_us'), '30000');
    assert.deepEqual(statusOf('main')?.allocatedResources, { cpu: '100m', memory: '32Mi' });
  },
);
