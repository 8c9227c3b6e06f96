// upstream pkg/kubelet/pod_container_deletor_test.go (TestGetContainersToDeleteInPodWithFilter,
// TestGetContainersToDeleteInPod, TestGetContainersToDeleteInPodWithNoMatch) against
// containersToDeleteInPod, and the deletor's queue: one removal at a time, removeAll keeps none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { containersToDeleteInPod, PodContainerDeletor } from '../../src/kuberuntime/container-deletor.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus, RuntimeContainerState } from '../../src/kuberuntime/types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const c = (id: string, name: string, ageS: number, state: RuntimeContainerState): ContainerRuntimeStatus => ({
  id,
  name,
  state,
  createdAt: new Date(T0 + ageS * 1000),
  exitCode: 0,
  image: 'i',
  imageRef: 'r',
  restartCount: 0,
  reason: '',
  message: '',
  hash: 'h',
  podSandboxId: 's',
});
// upstream's pod: 1 foo exited; 2, 3, 4 bar exited (older to newer); 5 bar running.
const POD: PodRuntimeStatus = {
  uid: 'u',
  name: 'p',
  namespace: 'ns',
  ips: [],
  sandboxStatuses: [],
  timestamp: new Date(T0),
  containerStatuses: [
    c('1', 'foo', 0, 'exited'),
    c('2', 'bar', 1, 'exited'),
    c('3', 'bar', 2, 'exited'),
    c('4', 'bar', 3, 'exited'),
    c('5', 'bar', 4, 'running'),
  ],
};

const ROWS: Array<[upstream: string, filter: string, keep: number, expected: string[]]> = [
  ['TestGetContainersToDeleteInPodWithFilter', '4', 0, ['4', '3', '2']],
  ['TestGetContainersToDeleteInPodWithFilter', '4', 1, ['3', '2']],
  ['TestGetContainersToDeleteInPodWithFilter', '4', 2, ['2']],
  ['TestGetContainersToDeleteInPod', '', 0, ['4', '3', '2', '1']],
  ['TestGetContainersToDeleteInPod', '', 1, ['3', '2', '1']],
  ['TestGetContainersToDeleteInPod', '', 2, ['2', '1']],
  ['TestGetContainersToDeleteInPodWithNoMatch', 'abc', 5, []],
];

describe('containersToDeleteInPod (upstream getContainersToDeleteInPod)', () => {
  for (const [upstream, filter, keep, expected] of ROWS) {
    it(`${upstream}: filter ${JSON.stringify(filter)}, keep ${keep} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(
        containersToDeleteInPod(filter, POD, keep).map((x) => x.id),
        expected,
      );
    });
  }
});

describe('PodContainerDeletor', () => {
  /** Until `n` removals were seen (bounded), then a little longer to catch any extra. */
  const settle = async (done: () => number, n: number) => {
    for (let i = 0; i < 200 && done() < n; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
  };

  it("removes one at a time, keeping containersToKeep of the dead container's name", async () => {
    const removed: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const d = new PodContainerDeletor(async (id) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 2));
      removed.push(id);
      inFlight--;
    }, 1);
    d.deleteContainersInPod('4', POD, false);
    d.deleteContainersInPod('4', POD, false); // a repeated request adds nothing
    await settle(() => removed.length, 2);
    assert.deepEqual(removed, ['3', '2']);
    assert.equal(maxInFlight, 1);
  });

  it('removeAll keeps none and ignores the filter; a failed removal does not stop the rest', async () => {
    const removed: string[] = [];
    const d = new PodContainerDeletor(async (id) => {
      if (id === '3') throw new Error('busy');
      removed.push(id);
    }, 1);
    d.deleteContainersInPod('abc', POD, true);
    await settle(() => removed.length, 3);
    assert.deepEqual(removed, ['4', '2', '1']);
  });
});
