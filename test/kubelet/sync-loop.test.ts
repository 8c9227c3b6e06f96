// syncLoopIteration (src/kubelet/sync-loop.ts) driven with a fake SyncHandler, as upstream's
// syncLoopIteration takes a SyncHandler: each input reaches the handler method it names.
// The PLEG rows follow upstream pkg/kubelet/kubelet_test.go TestSyncLoopIteration-style checks of
// isSyncPodWorthy (ContainerRemoved is not) and cleanUpContainersInPod after ContainerDied.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { syncLoopIteration } from '../../src/kubelet/sync-loop.js';
import type { SyncHandler, SyncLoopInput, SyncLoopView } from '../../src/kubelet/types.js';

const pod = (uid: string): Pod => ({ metadata: { uid, name: uid, namespace: 'ns' } }) as Pod;

class FakeHandler implements SyncHandler {
  readonly calls: string[] = [];
  private record(kind: string, pods: Pod[]): void {
    this.calls.push(`${kind}:${pods.map((p) => p.metadata!.uid).join(',')}`);
  }
  handlePodAdditions(pods: Pod[]) {
    this.record('add', pods);
  }
  handlePodUpdates(pods: Pod[]) {
    this.record('update', pods);
  }
  handlePodRemoves(pods: Pod[]) {
    this.record('remove', pods);
  }
  handlePodReconcile(pods: Pod[]) {
    this.record('reconcile', pods);
  }
  handlePodSyncs(pods: Pod[]) {
    this.record('sync', pods);
  }
  async handlePodCleanups() {
    this.calls.push('cleanup');
  }
}

const cleanups: string[] = [];
const view: SyncLoopView = {
  getPodByUID: (uid) => (uid === 'gone' ? undefined : pod(uid)),
  podsDueForSync: () => ['a', 'gone', 'b'],
  cleanUpContainersInPod: (uid, cid) => {
    cleanups.push(`cleanup-containers:${uid}/${cid}`);
  },
};
const config = (op: 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE' | 'SET'): SyncLoopInput => ({
  kind: 'config',
  update: { op, pods: [pod('p')], source: 'file' },
});

const CASES: Array<[name: string, input: SyncLoopInput, calls: string[]]> = [
  ['ADD → HandlePodAdditions', config('ADD'), ['add:p']],
  ['UPDATE → HandlePodUpdates', config('UPDATE'), ['update:p']],
  ['DELETE → HandlePodUpdates (graceful deletion is an update)', config('DELETE'), ['update:p']],
  ['REMOVE → HandlePodRemoves', config('REMOVE'), ['remove:p']],
  ['RECONCILE → HandlePodReconcile', config('RECONCILE'), ['reconcile:p']],
  ['SET → nothing (PodConfig turns it into the above)', config('SET'), []],
  [
    'ContainerStarted of a desired pod → HandlePodSyncs',
    { kind: 'pleg', event: { id: 'x', type: 'ContainerStarted', data: 'c' } },
    ['sync:x'],
  ],
  [
    'ContainerDied of a desired pod → HandlePodSyncs, then cleanUpContainersInPod',
    { kind: 'pleg', event: { id: 'x', type: 'ContainerDied', data: 'c' } },
    ['sync:x', 'cleanup-containers:x/c'],
  ],
  [
    'ContainerRemoved → nothing (not sync-worthy, upstream isSyncPodWorthy)',
    { kind: 'pleg', event: { id: 'x', type: 'ContainerRemoved', data: 'c' } },
    [],
  ],
  [
    'ContainerDied of a pod no longer desired → no sync (housekeeping handles it), dead containers still cleaned up',
    { kind: 'pleg', event: { id: 'gone', type: 'ContainerDied', data: 'c' } },
    ['cleanup-containers:gone/c'],
  ],
  ['probe result change → HandlePodSyncs', { kind: 'probe', podUid: 'y' }, ['sync:y']],
  ['sync tick → HandlePodSyncs of the due pods still desired', { kind: 'sync' }, ['sync:a,b']],
  ['housekeeping tick → HandlePodCleanups', { kind: 'housekeeping' }, ['cleanup']],
];

for (const [name, input, calls] of CASES) {
  it(name, async () => {
    const h = new FakeHandler();
    cleanups.length = 0;
    await syncLoopIteration(input, h, view);
    assert.deepEqual([...h.calls, ...cleanups], calls);
  });
}
