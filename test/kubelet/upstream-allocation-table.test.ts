/**
 * The allocation manager's resize admission, with the cases of upstream's
 * allocation_manager_test.go TestHandlePodResourcesResize (and kubelet_test.go's before it):
 * a resize that fits is allocated (PodResizeInProgress), one beyond the node's allocatable is
 * PodResizePending Infeasible with upstream's message, one that does not fit beside the other
 * pods is Deferred with the admission message; a static pod's is Infeasible; and the allocation
 * checkpoint outlives the manager (an agent restart).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod, ResourceRequirements } from '../../src/api/types.js';
import { canAdmitPod } from '../../src/kubelet/admission.js';
import { ALLOCATED_STATE_FILE, AllocationManager } from '../../src/kubelet/allocation.js';
import type { NodeInfo } from '../../src/node/node-info.js';
import type { PodRuntimeStatus } from '../../src/kuberuntime/types.js';
import { testTempDir } from '../support/temp-dir.js';

const GiB = 1024 ** 3;
const node: NodeInfo = {
  name: 'n',
  labels: {},
  capacity: { milliCPU: 4000, memory: 4 * GiB, pods: 110, hugePages: {} },
  allocatable: { milliCPU: 4000, memory: 4 * GiB, pods: 110, hugePages: {} },
};

const r = (cpu: string, memory: string): ResourceRequirements => ({
  requests: { cpu, memory },
  limits: { cpu, memory },
});

function pod(uid: string, res: ResourceRequirements, annotations?: Record<string, string>): Pod {
  return {
    metadata: { name: uid, namespace: 'default', uid, ...(annotations ? { annotations } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox', resources: res }] },
  };
}

const fits = (p: Pod, others: readonly Pod[]) => canAdmitPod(p, others, node);

interface Case {
  name: string;
  newResources: ResourceRequirements;
  want: { allocatedCPU: string; conditions: { type: string; reason?: string; message?: string }[] };
}

// Original: 1 cpu / 1Gi; another pod holds 2 cpu / 2Gi (upstream's testPod2 role).
const cases: Case[] = [
  {
    name: 'Request CPU and memory decrease - expect InProgress',
    newResources: r('500m', '512Mi'),
    want: { allocatedCPU: '500m', conditions: [{ type: 'PodResizeInProgress' }] },
  },
  {
    name: 'Request CPU increase, memory decrease - expect InProgress',
    newResources: r('1500m', '512Mi'),
    want: { allocatedCPU: '1500m', conditions: [{ type: 'PodResizeInProgress' }] },
  },
  {
    name: 'Request CPU increase that does not fit now - expect Deferred',
    newResources: r('2500m', '1Gi'),
    want: {
      allocatedCPU: '1',
      conditions: [
        {
          type: 'PodResizePending',
          reason: 'Deferred',
          message: "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000",
        },
      ],
    },
  },
  {
    name: 'Request memory increase beyond node capacity - expect Infeasible',
    newResources: r('1', '4500Mi'),
    want: {
      allocatedCPU: '1',
      conditions: [
        {
          type: 'PodResizePending',
          reason: 'Infeasible',
          message: `Node didn't have enough capacity: memory, requested: ${4500 * 1024 * 1024}, capacity: ${4 * GiB}`,
        },
      ],
    },
  },
  {
    name: 'Request CPU increase beyond node capacity - expect Infeasible',
    newResources: r('5', '1Gi'),
    want: {
      allocatedCPU: '1',
      conditions: [
        {
          type: 'PodResizePending',
          reason: 'Infeasible',
          message: "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
        },
      ],
    },
  },
  {
    name: 'No resize - no conditions',
    newResources: r('1', '1Gi'),
    want: { allocatedCPU: '1', conditions: [] },
  },
];

const strip = (cs: { type: string; reason?: string; message?: string }[]) =>
  cs.map(({ type, reason, message }) => ({ type, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }));

describe('handlePodResourcesResize (upstream TestHandlePodResourcesResize)', () => {
  for (const k of cases)
    it(k.name, () => {
      const m = new AllocationManager({ now: () => 0 });
      const original = pod('p1', r('1', '1Gi'));
      const other = pod('p2', r('2', '2Gi'));
      m.addPod(original);
      m.addPod(other);
      const resized = pod('p1', k.newResources);
      const run = m.handlePodResourcesResize(resized, () => [other], node, fits);
      assert.equal((m.getAllocated('p1', 'c')?.requests as Record<string, string>).cpu, k.want.allocatedCPU);
      assert.equal((run.spec!.containers[0]!.resources!.requests as Record<string, string>).cpu, k.want.allocatedCPU);
      assert.deepEqual(strip(m.resizeConditions('p1')), k.want.conditions);
    });

  it('static pods: Infeasible', () => {
    const m = new AllocationManager({ now: () => 0 });
    const file = { 'kubernetes.io/config.source': 'file' };
    m.addPod(pod('s', r('1', '1Gi'), file));
    m.handlePodResourcesResize(pod('s', r('2', '1Gi'), file), () => [], node, fits);
    assert.deepEqual(strip(m.resizeConditions('s')), [
      { type: 'PodResizePending', reason: 'Infeasible', message: 'In-place resize of static-pods is not supported' },
    ]);
  });

  it('an actuation error is PodResizeInProgress reason Error; done clears it', () => {
    const m = new AllocationManager({ now: () => 0 });
    const p = pod('p', r('1', '1Gi'));
    m.addPod(p);
    const status = {
      containerStatuses: [{ name: 'c', state: 'running' }],
    } as unknown as PodRuntimeStatus;
    m.setActuated('p', 'c', r('500m', '1Gi'));
    m.updateResizeInProgress(p, status, 'failed to update resources of container c (cpu): boom');
    assert.deepEqual(strip(m.resizeConditions('p')), [
      {
        type: 'PodResizeInProgress',
        reason: 'Error',
        message: 'failed to update resources of container c (cpu): boom',
      },
    ]);
    m.setActuated('p', 'c', r('1', '1Gi'));
    m.updateResizeInProgress(p, status, undefined);
    assert.deepEqual(m.resizeConditions('p'), []);
  });

  it('a sync with no resize pending never asks for the other pods (issue 30: O(pods) per sync)', () => {
    const m = new AllocationManager({ rootDir: testTempDir('alloc-'), now: () => 0 });
    const p = pod('p', r('1', '1Gi'));
    m.addPod(p);
    let asked = 0;
    const others = () => (asked++, [pod('o', r('1', '1Gi'))]);
    assert.equal(m.handlePodResourcesResize(p, others, node, fits), p);
    assert.equal(asked, 0);
    m.handlePodResourcesResize(pod('p', r('2', '1Gi')), others, node, fits);
    assert.equal(asked, 1, 'a pending resize is checked against the other pods');
  });

  it('the allocation checkpoint outlives the manager; a corrupt one is ignored', () => {
    const dir = testTempDir('alloc-');
    const m = new AllocationManager({ rootDir: dir, now: () => 0 });
    m.addPod(pod('p', r('1', '1Gi')));
    m.handlePodResourcesResize(pod('p', r('2', '1Gi')), () => [], node, fits);
    m.setActuated('p', 'c', r('2', '1Gi'));
    const again = new AllocationManager({ rootDir: dir, now: () => 0 });
    assert.equal((again.getAllocated('p', 'c')?.requests as Record<string, string>).cpu, '2');
    assert.deepEqual(again.getActuated('p', 'c'), r('2', '1Gi'));
    // Admission after a restart uses the allocation, not a pending spec.
    assert.equal(
      (
        again.updatePodFromAllocation(pod('p', r('3', '1Gi'))).pod.spec!.containers[0]!.resources!.requests as Record<
          string,
          string
        >
      ).cpu,
      '2',
    );
    writeFileSync(join(dir, ALLOCATED_STATE_FILE), '{"data":"{}","checksum":"bad"}');
    assert.equal(new AllocationManager({ rootDir: dir, now: () => 0 }).getAllocated('p', 'c'), undefined);
  });
});
