/**
 * OrphanedPodCgroups (upstream cleanupOrphanedPodCgroups, kubelet_pods.go): what it removes,
 * what it keeps, and how a refusal (a cgroup that still holds processes) is reported and retried.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodContainerManager } from '../../src/cm/types.js';
import { OrphanedPodCgroups } from '../../src/kuberuntime/orphaned-pod-cgroups.js';
import { captureLogs, LEVEL } from '../support/logs.js';

class FakePodCgroups implements Pick<PodContainerManager, 'enabled' | 'destroy' | 'getAllPodsFromCgroups'> {
  enabled = true;
  readonly cgroups = new Map<string, string>();
  readonly busy = new Set<string>();
  readonly destroyed: string[] = [];
  lists = 0;

  add(uid: string, qos = 'besteffort'): void {
    this.cgroups.set(uid, `/kubepods/${qos}/pod${uid}`);
  }
  async getAllPodsFromCgroups(): Promise<Map<string, string>> {
    this.lists++;
    return new Map(this.cgroups);
  }
  async destroy(name: string): Promise<void> {
    if (this.busy.has(name)) throw Object.assign(new Error(`rmdir ${name}: EBUSY`), { code: 'EBUSY' });
    this.destroyed.push(name);
    for (const [uid, n] of this.cgroups) if (n === name) this.cgroups.delete(uid);
  }
}

const make = () => {
  const pcm = new FakePodCgroups();
  return { pcm, orphans: new OrphanedPodCgroups(pcm as unknown as PodContainerManager) };
};

test('cgroups of pods not kept are destroyed; kept ones stay (table)', async () => {
  const cases: Array<{ name: string; present: string[]; kept: string[]; destroyed: string[] }> = [
    { name: 'nothing on the node', present: [], kept: [], destroyed: [] },
    { name: 'every pod kept', present: ['a', 'b'], kept: ['a', 'b'], destroyed: [] },
    { name: 'one orphan among kept pods', present: ['a', 'b'], kept: ['a'], destroyed: ['b'] },
    { name: 'all orphans', present: ['a', 'b'], kept: [], destroyed: ['a', 'b'] },
    { name: 'kept pods without a cgroup change nothing', present: ['a'], kept: ['x'], destroyed: ['a'] },
  ];
  for (const c of cases) {
    const { pcm, orphans } = make();
    for (const uid of c.present) pcm.add(uid);
    await orphans.cleanup(async (uid) => c.kept.includes(uid));
    assert.deepEqual(
      pcm.destroyed,
      c.destroyed.map((uid) => `/kubepods/besteffort/pod${uid}`),
      c.name,
    );
  }
});

test('pod cgroups turned off: the cgroup tree is not read', async () => {
  const { pcm, orphans } = make();
  pcm.enabled = false;
  pcm.add('a');
  await orphans.cleanup(async () => false);
  assert.equal(pcm.lists, 0);
  assert.deepEqual(pcm.destroyed, []);
});

test('a refused removal warns once, is retried quietly every pass, and warns again after it recovered', async () => {
  const { pcm, orphans } = make();
  pcm.add('a');
  pcm.busy.add('/kubepods/besteffort/poda');
  const logs = await captureLogs(async () => {
    await orphans.cleanup(async () => false);
    await orphans.cleanup(async () => false);
    await orphans.cleanup(async () => false);
  });
  const warned = logs.filter((l) => l.msg === 'failed to remove pod cgroup; will retry');
  assert.deepEqual(
    warned.map((l) => l.level),
    [LEVEL.warn, LEVEL.debug, LEVEL.debug],
  );
  assert.equal(warned[0]!.uid, 'a');
  assert.match(String(warned[0]!.err), /EBUSY/);
  pcm.busy.clear();
  await orphans.cleanup(async () => false);
  assert.deepEqual(pcm.destroyed, ['/kubepods/besteffort/poda'], 'removed once its processes are gone');
  pcm.add('a');
  pcm.busy.add('/kubepods/besteffort/poda');
  const again = await captureLogs(() => orphans.cleanup(async () => false));
  assert.deepEqual(
    again.filter((l) => l.msg === 'failed to remove pod cgroup; will retry').map((l) => l.level),
    [LEVEL.warn],
    'a new failure after a removal is news again',
  );
});

test('a pod kept again after a refusal warns again when a later removal is refused', async () => {
  const { pcm, orphans } = make();
  pcm.add('a');
  pcm.busy.add('/kubepods/besteffort/poda');
  const refusals = (logs: Array<{ msg?: unknown; level?: unknown }>) =>
    logs.filter((l) => l.msg === 'failed to remove pod cgroup; will retry').map((l) => l.level);
  const first = await captureLogs(async () => {
    await orphans.cleanup(async () => false);
    await orphans.cleanup(async () => true); // its manifest is back: the pod runs again
  });
  assert.deepEqual(refusals(first), [LEVEL.warn]);
  const later = await captureLogs(() => orphans.cleanup(async () => false));
  assert.deepEqual(refusals(later), [LEVEL.warn], 'the pod ran in between: the new refusal is news');
});
