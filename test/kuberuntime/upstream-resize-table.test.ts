/**
 * The resize decisions of the runtime manager, table by table, with the cases of upstream's
 * kuberuntime_manager_test.go TestComputePodActionsForPodResize (which running container is
 * updated in place for which resource, which is restarted by its resizePolicy) and
 * TestUpdatePodContainerResources / doPodResizeAction (decreases before increases, the pod
 * cgroup grown before and shrunk after the containers, one UpdateContainerResources per
 * container and resource with the other resource as last actuated).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, ResourceRequirements } from '../../src/api/types.js';
import type { PodContainerManager, ResourceConfig } from '../../src/cm/types.js';
import { computePodActions } from '../../src/kuberuntime/pod-actions.js';
import { doPodResizeAction, type ActuatedResources } from '../../src/kuberuntime/resize.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, cstatus, makePod, podStatus, sandbox } from './helpers.js';

const res = (cpuReq: string, cpuLim: string, memReq: string, memLim: string): ResourceRequirements => ({
  requests: { cpu: cpuReq, memory: memReq },
  limits: { cpu: cpuLim, memory: memLim },
});
const base = res('100m', '200m', '100Mi', '200Mi');
type Policy = 'NotRequired' | 'RestartContainer';
const c = (
  name: string,
  r: ResourceRequirements,
  cpu: Policy = 'NotRequired',
  mem: Policy = 'NotRequired',
): Container =>
  container(name, {
    resources: r,
    resizePolicy: [
      { resourceName: 'cpu', restartPolicy: cpu },
      { resourceName: 'memory', restartPolicy: mem },
    ],
  });

interface Case {
  name: string;
  /** Allocated spec of containers a, b. */
  containers: Container[];
  /** Actuated resources by container (default: base). */
  actuated?: Record<string, ResourceRequirements>;
  want: { cpu: string[]; memory: string[]; kill: string[]; start: number[] };
}

// upstream TestComputePodActionsForPodResize.
const cases: Case[] = [
  {
    name: 'Update container CPU and memory resources',
    containers: [c('a', res('100m', '400m', '100Mi', '300Mi')), c('b', base)],
    want: { cpu: ['a'], memory: ['a'], kill: [], start: [] },
  },
  {
    name: 'Update container CPU resources',
    containers: [c('a', res('100m', '400m', '100Mi', '200Mi')), c('b', base)],
    want: { cpu: ['a'], memory: [], kill: [], start: [] },
  },
  {
    name: 'Update container memory resources',
    containers: [c('a', base), c('b', res('100m', '200m', '100Mi', '300Mi'))],
    want: { cpu: [], memory: ['b'], kill: [], start: [] },
  },
  {
    name: 'Nothing when spec.Resources and status.Resources are equal',
    containers: [c('a', base), c('b', base)],
    want: { cpu: [], memory: [], kill: [], start: [] },
  },
  {
    name: 'Update container CPU resources with restart policy RestartContainer',
    containers: [c('a', res('100m', '400m', '100Mi', '200Mi'), 'RestartContainer'), c('b', base)],
    want: { cpu: [], memory: [], kill: ['a'], start: [0] },
  },
  {
    name: 'Update container memory resources with restart policy RestartContainer',
    containers: [c('a', base), c('b', res('100m', '200m', '100Mi', '300Mi'), 'NotRequired', 'RestartContainer')],
    want: { cpu: [], memory: [], kill: ['b'], start: [1] },
  },
  {
    name: 'Update container CPU with memory restart policy RestartContainer: in place',
    containers: [c('a', res('100m', '400m', '100Mi', '200Mi'), 'NotRequired', 'RestartContainer'), c('b', base)],
    want: { cpu: ['a'], memory: [], kill: [], start: [] },
  },
  {
    name: 'Update container memory with CPU restart policy RestartContainer: in place',
    containers: [c('a', res('100m', '200m', '100Mi', '300Mi'), 'RestartContainer'), c('b', base)],
    want: { cpu: [], memory: ['a'], kill: [], start: [] },
  },
  {
    name: 'Update container memory request only (NotRequired): updated in place',
    containers: [c('a', res('100m', '200m', '150Mi', '200Mi')), c('b', base)],
    want: { cpu: [], memory: ['a'], kill: [], start: [] },
  },
  {
    name: 'decreases are ordered before increases',
    containers: [c('a', res('100m', '400m', '100Mi', '200Mi')), c('b', res('100m', '150m', '100Mi', '200Mi'))],
    want: { cpu: ['b', 'a'], memory: [], kill: [], start: [] },
  },
  {
    name: 'no actuated record: the spec counts as actuated, nothing is resized',
    containers: [c('a', res('100m', '400m', '100Mi', '300Mi')), c('b', base)],
    actuated: {},
    want: { cpu: [], memory: [], kill: [], start: [] },
  },
];

function actions(k: Case) {
  const pod = makePod({ containers: k.containers });
  const status = podStatus(
    [sandbox('sb1')],
    [
      cstatus('a', 'running', { spec: k.containers[0]!, id: 'ca' }),
      cstatus('b', 'running', { spec: k.containers[1]!, id: 'cb' }),
    ],
  );
  const actuated = k.actuated ?? { a: base, b: base };
  return computePodActions(pod, status, { actuated: (name) => actuated[name] });
}

describe('computePodResizeAction (upstream TestComputePodActionsForPodResize)', () => {
  for (const k of cases)
    it(k.name, () => {
      const got = actions(k);
      assert.deepEqual(
        got.containersToUpdate.cpu.map((u) => u.container.name),
        k.want.cpu,
        'cpu updates',
      );
      assert.deepEqual(
        got.containersToUpdate.memory.map((u) => u.container.name),
        k.want.memory,
        'memory updates',
      );
      assert.deepEqual(
        got.containersToKill.map((x) => x.name),
        k.want.kill,
      );
      assert.deepEqual(got.containersToStart, k.want.start);
      for (const kill of got.containersToKill) {
        assert.equal(kill.reason, 'ResizeRestart');
        assert.equal(kill.message, `Container ${kill.name} resize requires restart`);
      }
    });
});

/** Pod cgroup writes and CRI updates in one ordered log. */
function harness(actuatedInit: Record<string, ResourceRequirements>) {
  const runtime = new FakeRuntimeService();
  const log: string[] = [];
  const store = new Map(Object.entries(actuatedInit));
  const actuated: ActuatedResources = {
    getActuated: (_uid, name) => store.get(name),
    setActuated: (_uid, name, r) => void store.set(name, r),
  };
  const podCgroups = {
    enabled: true,
    setPodCgroupConfig: async (_pod: Pod, r: ResourceConfig) => void log.push(`pod ${JSON.stringify(r)}`),
  } as unknown as PodContainerManager;
  const orig = runtime.updateContainerResources.bind(runtime);
  runtime.updateContainerResources = async (id, linux) => {
    log.push(`ctr ${id} quota=${linux.cpuQuota} mem=${linux.memoryLimitInBytes ?? 0}`);
    return orig(id, linux);
  };
  return { runtime, log, store, deps: { runtime, podCgroups, memoryCapacity: 1 << 34, actuated } };
}

// upstream TestUpdatePodContainerResources and doPodResizeAction's ordering.
describe('doPodResizeAction (upstream TestUpdatePodContainerResources)', () => {
  async function run(containers: Container[], actuated: Record<string, ResourceRequirements>) {
    const h = harness(actuated);
    const pod = makePod({ containers });
    for (const i of containers.keys()) h.runtime.containers.set(`c${i}`, { id: `c${i}` } as never);
    const status = podStatus(
      [sandbox('sb1')],
      containers.map((x, i) => cstatus(x.name, 'running', { spec: x, id: `c${i}` })),
    );
    const acts = computePodActions(pod, status, { actuated: (n) => h.store.get(n) });
    await doPodResizeAction(h.deps, pod, acts.containersToUpdate);
    return h;
  }

  it('cpu limit increase: pod cgroup quota first, then the container', async () => {
    const h = await run([c('a', res('100m', '400m', '100Mi', '200Mi'))], { a: base });
    assert.deepEqual(h.log, ['pod {"cpuQuota":40000,"cpuPeriod":100000}', 'ctr c0 quota=40000 mem=209715200']);
    assert.deepEqual(h.store.get('a')?.limits, { cpu: '400m', memory: '200Mi' });
  });

  it('cpu limit decrease: the container first, then the pod cgroup', async () => {
    const h = await run([c('a', res('100m', '150m', '100Mi', '200Mi'))], { a: base });
    assert.deepEqual(h.log, ['ctr c0 quota=15000 mem=209715200', 'pod {"cpuQuota":15000,"cpuPeriod":100000}']);
  });

  it('memory limit increase then cpu: memory resized first, the cpu step keeps the new memory', async () => {
    const h = await run([c('a', res('100m', '400m', '100Mi', '300Mi'))], { a: base });
    assert.deepEqual(h.log, [
      `pod {"memory":${300 * 1024 * 1024}}`,
      `ctr c0 quota=20000 mem=${300 * 1024 * 1024}`,
      'pod {"cpuQuota":40000,"cpuPeriod":100000}',
      `ctr c0 quota=40000 mem=${300 * 1024 * 1024}`,
    ]);
  });

  it('one container shrinks, another grows: the shrink is applied first', async () => {
    const h = await run(
      [c('a', res('100m', '300m', '100Mi', '200Mi')), c('b', res('100m', '100m', '100Mi', '200Mi'))],
      { a: base, b: base },
    );
    assert.deepEqual(
      h.log.filter((l) => l.startsWith('ctr')),
      ['ctr c1 quota=10000 mem=209715200', 'ctr c0 quota=30000 mem=209715200'],
    );
  });

  it('a failed update stops the rest and leaves the actuated resources as they were', async () => {
    const h = harness({ a: base });
    const pod = makePod({ containers: [c('a', res('100m', '150m', '100Mi', '200Mi'))] });
    const status = podStatus(
      [sandbox('sb1')],
      [cstatus('a', 'running', { spec: pod.spec!.containers[0]!, id: 'gone' })],
    );
    const acts = computePodActions(pod, status, { actuated: (n) => h.store.get(n) });
    await assert.rejects(
      doPodResizeAction(h.deps, pod, acts.containersToUpdate),
      /failed to update resources of container a \(cpu\)/,
    );
    assert.deepEqual(h.store.get('a'), base);
    assert.ok(!h.log.some((l) => l.startsWith('pod')), 'the pod cgroup is not shrunk after a failed container update');
  });
});
