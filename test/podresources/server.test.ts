/**
 * The pod resources API v1 server over a real unix socket, called with a gRPC client built from the
 * vendored proto, as a monitoring agent calls it. Tables mirror upstream's
 * pkg/kubelet/apis/podresources/server_v1_test.go (each names its upstream test). Upstream's tables
 * also feed CPUs, memory and DRA resources through mock providers; kubelet-ts has no CPU or
 * memory manager and no DRA, so those fields are always empty and those columns are left out.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import {
  PodResourcesServer,
  type ContainerDevices,
  type DevicesProvider,
  type PodResourcesProviders,
} from '../../src/podresources/index.js';
import { podResourcesDefinition } from '../../src/podresources/proto.js';
import type { Clock } from '../../src/util/clock.js';
import { testTempDir } from '../support/temp-dir.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- proto-loader's untyped client and messages */

const POD_NAME = 'pod-name';
const POD_NAMESPACE = 'pod-namespace';
const POD_UID = 'pod-uid';
const CONTAINER = 'container-name';
const INIT_CONTAINER = 'init-container-name';

const DEVS: ContainerDevices[] = [
  { resourceName: 'resource', deviceIds: ['dev0', 'dev1'], topology: { nodes: [{ ID: 1 }] } },
];
/** What the client decodes DEVS to: int64 as decimal strings. */
const DEVS_WIRE = [{ resourceName: 'resource', deviceIds: ['dev0', 'dev1'], topology: { nodes: [{ ID: '1' }] } }];

function makePod(opts: { name?: string; uid?: string; init?: { restartPolicy?: string } } = {}): Pod {
  const init = opts.init ? [{ name: INIT_CONTAINER, ...opts.init }] : undefined;
  return {
    metadata: { name: opts.name ?? POD_NAME, namespace: POD_NAMESPACE, uid: opts.uid ?? POD_UID },
    spec: { containers: [{ name: CONTAINER }], ...(init ? { initContainers: init } : {}) },
  } as Pod;
}

/** A container entry as the client decodes it. */
function wireContainer(name: string, devices: unknown[] = []) {
  return { name, devices, cpuIds: [], memory: [], dynamicResources: [] };
}

/** Providers the test sets per case; counts UpdateAllocatedDevices. */
class Fakes implements PodResourcesProviders {
  allPods: Pod[] = [];
  active: Pod[] = [];
  byContainer = new Map<string, ContainerDevices[]>();
  allocatable: ContainerDevices[] = [];
  updates = 0;
  readonly pods = {
    activePods: () => this.active,
    podByName: (ns: string, name: string) =>
      this.allPods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name),
  };
  readonly devices: DevicesProvider = {
    updateAllocatedDevices: () => void this.updates++,
    getDevices: (uid, c) => this.byContainer.get(`${uid}/${c}`) ?? [],
    getAllocatableDevices: () => this.allocatable,
  };

  set(pods: Pod[], devices: Record<string, ContainerDevices[]> = {}): void {
    this.allPods = pods;
    this.active = pods;
    this.byContainer = new Map(Object.entries(devices));
  }
}

const manualClock = (): Clock & { t: number } => ({
  t: 0,
  now() {
    return this.t;
  },
  setTimeout: () => ({ cancel: () => undefined }),
});

async function serve(dir: string, name: string, providers: PodResourcesProviders, extra = {}) {
  const socketPath = join(dir, name, 'kubelet.sock');
  const server = new PodResourcesServer({ socketPath, providers, ...extra });
  await server.start();
  const pkg = grpc.loadPackageDefinition(podResourcesDefinition()) as any;
  const client = new pkg.v1.PodResourcesLister(`unix:${socketPath}`, grpc.credentials.createInsecure());
  const call = (method: string, req: object = {}): Promise<any> =>
    new Promise((resolve, reject) =>
      client[method](req, { deadline: Date.now() + 5000 }, (err: unknown, reply: unknown) =>
        err ? reject(err) : resolve(reply),
      ),
    );
  const close = () => (client.close(), server.stop());
  return { server, socketPath, call, close };
}

describe('pod resources API v1 server', async () => {
  const dir = testTempDir('kts-podresources-');
  const fakes = new Fakes();
  // Tables make many calls at once: a bucket that never runs dry; the rate limit has its own server.
  const api = await serve(dir, 'tables', fakes, { qps: 1e9, burst: 1e9 });
  after(() => api.close());

  // upstream TestListPodResourcesV1 (the "dynamic resources" cases need DRA, which kubelet-ts has not).
  const listCases: { desc: string; pods: Pod[]; devices: Record<string, ContainerDevices[]>; want: unknown[] }[] = [
    { desc: 'no pods', pods: [], devices: {}, want: [] },
    {
      desc: 'pod without devices',
      pods: [makePod()],
      devices: {},
      want: [{ name: POD_NAME, namespace: POD_NAMESPACE, containers: [wireContainer(CONTAINER)] }],
    },
    {
      desc: 'pod with devices',
      pods: [makePod()],
      devices: { [`${POD_UID}/${CONTAINER}`]: DEVS },
      want: [{ name: POD_NAME, namespace: POD_NAMESPACE, containers: [wireContainer(CONTAINER, DEVS_WIRE)] }],
    },
  ];
  for (const tc of listCases) {
    it(`List: ${tc.desc} (TestListPodResourcesV1)`, async () => {
      fakes.set(tc.pods, tc.devices);
      const before = fakes.updates;
      const reply = await api.call('List');
      assert.deepEqual(reply.podResources, tc.want);
      assert.equal(fakes.updates, before + 1, 'UpdateAllocatedDevices before the list');
    });
  }

  // upstream TestListPodResourcesUsesOnlyActivePodsV1.
  const names = (n: number[]) => n.map((i) => makePod({ name: `pod-${i}`, uid: `uid-${i}` }));
  for (const tc of [
    { desc: 'no pods', pods: [] as number[], active: [] as number[] },
    { desc: 'no differences', pods: [1, 2, 3, 4, 5], active: [1, 2, 3, 4, 5] },
    { desc: 'some terminated pods', pods: [1, 2, 3, 4, 5, 6, 7], active: [1, 3, 4, 5, 6] },
  ]) {
    it(`List: only active pods, ${tc.desc} (TestListPodResourcesUsesOnlyActivePodsV1)`, async () => {
      fakes.allPods = names(tc.pods);
      fakes.active = names(tc.active);
      const reply = await api.call('List');
      assert.deepEqual(
        reply.podResources.map((p: any) => `${p.namespace}/${p.name}`).sort(),
        tc.active.map((i) => `${POD_NAMESPACE}/pod-${i}`).sort(),
      );
    });
  }

  // upstream TestListPodResourcesWithInitContainersV1 and TestGetPodResourcesWithInitContainersV1.
  const initCases = [
    { desc: 'pod having an init container', init: {}, want: [wireContainer(CONTAINER, DEVS_WIRE)] },
    {
      desc: 'pod having a restartable init container',
      init: { restartPolicy: 'Always' },
      want: [wireContainer(INIT_CONTAINER, DEVS_WIRE), wireContainer(CONTAINER, DEVS_WIRE)],
    },
  ];
  for (const tc of initCases) {
    const devices = { [`${POD_UID}/${CONTAINER}`]: DEVS, [`${POD_UID}/${INIT_CONTAINER}`]: DEVS };
    it(`List: ${tc.desc} (TestListPodResourcesWithInitContainersV1)`, async () => {
      fakes.set([makePod({ init: tc.init })], devices);
      const reply = await api.call('List');
      assert.deepEqual(reply.podResources, [{ name: POD_NAME, namespace: POD_NAMESPACE, containers: tc.want }]);
    });
    it(`Get: ${tc.desc} (TestGetPodResourcesWithInitContainersV1)`, async () => {
      fakes.set([makePod({ init: tc.init })], devices);
      const reply = await api.call('Get', { podName: POD_NAME, podNamespace: POD_NAMESPACE });
      assert.deepEqual(reply.podResources, { name: POD_NAME, namespace: POD_NAMESPACE, containers: tc.want });
    });
  }

  // upstream TestGetPodResourcesV1.
  const getCases: { desc: string; pods: Pod[]; devices: Record<string, ContainerDevices[]>; want?: unknown[] }[] = [
    { desc: 'pod not exist', pods: [], devices: {} },
    { desc: 'pod without devices', pods: [makePod()], devices: {}, want: [wireContainer(CONTAINER)] },
    {
      desc: 'pod with devices',
      pods: [makePod()],
      devices: { [`${POD_UID}/${CONTAINER}`]: DEVS },
      want: [wireContainer(CONTAINER, DEVS_WIRE)],
    },
  ];
  for (const tc of getCases) {
    it(`Get: ${tc.desc} (TestGetPodResourcesV1)`, async () => {
      fakes.set(tc.pods, tc.devices);
      const req = { podName: POD_NAME, podNamespace: POD_NAMESPACE };
      if (tc.want === undefined) {
        await assert.rejects(api.call('Get', req), (e: any) => {
          assert.equal(e.code, grpc.status.UNKNOWN);
          assert.equal(e.details, `pod ${POD_NAME} in namespace ${POD_NAMESPACE} not found`);
          return true;
        });
        return;
      }
      const reply = await api.call('Get', req);
      assert.deepEqual(reply.podResources, { name: POD_NAME, namespace: POD_NAMESPACE, containers: tc.want });
    });
  }

  it('Get finds a pod that is no longer active (upstream GetPodByName: the pod manager)', async () => {
    fakes.allPods = [makePod()];
    fakes.active = [];
    const reply = await api.call('Get', { podName: POD_NAME, podNamespace: POD_NAMESPACE });
    assert.equal(reply.podResources.name, POD_NAME);
  });

  // upstream TestAllocatableResources (its CPU and memory columns are always empty here).
  const node = (...ids: number[]) => ({ nodes: ids.map((ID) => ({ ID })) });
  const allDevs: ContainerDevices[] = [
    { resourceName: 'resource', deviceIds: ['dev0'], topology: node(0) },
    { resourceName: 'resource', deviceIds: ['dev1'], topology: node(1) },
    { resourceName: 'resource-nt', deviceIds: ['devA'] },
    { resourceName: 'resource-mm', deviceIds: ['devM0'], topology: node(0) },
    { resourceName: 'resource-mm', deviceIds: ['devMM'], topology: node(0, 1) },
  ];
  const wire = (d: ContainerDevices) => ({
    ...d,
    topology: d.topology ? { nodes: d.topology.nodes.map((n) => ({ ID: String(n.ID) })) } : null,
  });
  for (const tc of [
    { desc: 'no devices, no CPUs', devices: [] as ContainerDevices[] },
    { desc: 'with devices, no CPUs', devices: allDevs },
  ]) {
    it(`GetAllocatableResources: ${tc.desc} (TestAllocatableResources)`, async () => {
      fakes.allocatable = tc.devices;
      const reply = await api.call('GetAllocatableResources');
      assert.deepEqual(reply, { devices: tc.devices.map(wire), cpuIds: [], memory: [] });
    });
  }

  it('Get with the KubeletPodResourcesGet gate off: Unknown "PodResources API Get method disabled"', async () => {
    const off = await serve(dir, 'get-off', fakes, { getEnabled: false });
    try {
      fakes.set([makePod()]);
      await assert.rejects(off.call('Get', { podName: POD_NAME, podNamespace: POD_NAMESPACE }), {
        code: grpc.status.UNKNOWN,
        details: 'PodResources API Get method disabled',
      });
      assert.equal((await off.call('List')).podResources.length, 1);
    } finally {
      off.close();
    }
  });

  it('without a device manager every devices list is empty', async () => {
    const bare = await serve(dir, 'bare', { pods: fakes.pods });
    try {
      fakes.set([makePod()]);
      assert.deepEqual((await bare.call('List')).podResources[0].containers, [wireContainer(CONTAINER)]);
      assert.deepEqual((await bare.call('GetAllocatableResources')).devices, []);
    } finally {
      bare.close();
    }
  });

  it('rate limit: burst 10, then ResourceExhausted "rejected by rate limit" until a token is back (100/s)', async () => {
    const clock = manualClock();
    const limited = await serve(dir, 'limited', fakes, { clock });
    try {
      fakes.set([makePod()]);
      const methods = ['List', 'GetAllocatableResources', 'Get'];
      for (let i = 0; i < 10; i++)
        await limited.call(methods[i % 3]!, { podName: POD_NAME, podNamespace: POD_NAMESPACE });
      await assert.rejects(limited.call('List'), (e: any) => {
        assert.equal(e.code, grpc.status.RESOURCE_EXHAUSTED);
        assert.equal(e.details, 'rejected by rate limit');
        return true;
      });
      clock.t += 10; // 100 per second: one token back after 10 ms
      await limited.call('GetAllocatableResources');
      await assert.rejects(limited.call('GetAllocatableResources'), { code: grpc.status.RESOURCE_EXHAUSTED });
    } finally {
      limited.close();
    }
  });

  it('replaces a file left at the socket path; stop removes the socket', async () => {
    const path = join(dir, 'stale', 'kubelet.sock');
    const first = await serve(dir, 'stale', fakes);
    first.close();
    assert.equal(existsSync(path), false);
    writeFileSync(path, 'left over');
    const again = await serve(dir, 'stale', fakes);
    try {
      assert.deepEqual((await again.call('GetAllocatableResources')).cpuIds, []);
    } finally {
      again.close();
    }
  });

  it('refuses a relative socket path with a KTS_ERR_POD_RESOURCES error', async () => {
    const server = new PodResourcesServer({ socketPath: 'pod-resources/kubelet.sock', providers: fakes });
    await assert.rejects(server.start(), { code: 'KTS_ERR_POD_RESOURCES', message: /is not absolute/ });
  });
});
