/** Container GC policy (upstream containerGC): minimum age, per-container and node-wide caps, unknown containers. */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, type GCPolicy } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import type { Runtime } from '../../src/kuberuntime/types.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { FakeClock, container, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
let fake: FakeRuntimeService;
let clock: FakeClock;

function manager(gcPolicy: Partial<GCPolicy> = {}): Runtime {
  return createRuntimeManager({
    runtime: fake,
    imageManager: createImageManager({ images: fake, clock }),
    clock,
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
    nodeName: 'node-1',
    resolvConf: '',
    cgroupsPerQOS: false,
    gcPolicy,
  });
}

before(async () => {
  dir = testTempDir('kuberuntime-gc-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  // The fake runtime's clock (ns) and ours (ms) agree.
  clock = new FakeClock(Number(fake.nowNs / 1_000_000n));
});

/** A pod whose containers a, b, c each have `dead` exited instances and one running. */
async function podWithDead(rt: Runtime, dead: number): Promise<Pod> {
  const pod = makePod({ containers: [container('a'), container('b'), container('c')] });
  const sync = async () =>
    rt.syncPod(pod, await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!));
  await sync();
  for (let i = 0; i < dead; i++) {
    for (const n of ['a', 'b', 'c']) fake.exitContainer(fake.containersNamed(n).at(-1)!.id, 1);
    clock.advance(400_000); // past any back-off
    await sync();
  }
  clock.t = Number(fake.nowNs / 1_000_000n) + 1;
  return pod;
}

function dead(name?: string) {
  return [...fake.containers.values()].filter(
    (c) => c.state === 'CONTAINER_EXITED' && (!name || c.config.metadata.name === name),
  );
}

describe('garbageCollect policy', () => {
  it('default: one dead instance per container of an active pod', async () => {
    const rt = manager();
    const pod = await podWithDead(rt, 3);
    assert.equal(dead().length, 9);
    await rt.garbageCollect(new Set([pod.metadata!.uid!]));
    assert.deepEqual(
      ['a', 'b', 'c'].map((n) => dead(n).length),
      [1, 1, 1],
    );
    assert.equal(
      dead('a')[0]!.config.annotations['io.kubernetes.container.restartCount'],
      '2',
      'the newest dead instance is kept',
    );
  });

  it('maxPerPodContainer 2 keeps two; a negative value keeps all', async () => {
    const rt = manager({ maxPerPodContainer: 2 });
    const pod = await podWithDead(rt, 3);
    await manager({ maxPerPodContainer: -1 }).garbageCollect(new Set([pod.metadata!.uid!]));
    assert.equal(dead().length, 9);
    await rt.garbageCollect(new Set([pod.metadata!.uid!]));
    assert.deepEqual(
      ['a', 'b', 'c'].map((n) => dead(n).length),
      [2, 2, 2],
    );
  });

  it('maxContainers: an equal share per container (at least one), then the oldest first', async () => {
    const rt = manager({ maxContainers: 2, maxPerPodContainer: -1 });
    const pod = await podWithDead(rt, 2);
    const newestTwo = dead()
      .sort((x, y) => (x.createdAt > y.createdAt ? -1 : 1))
      .slice(0, 2)
      .map((c) => c.id);
    await rt.garbageCollect(new Set([pod.metadata!.uid!]));
    assert.deepEqual(
      dead()
        .map((c) => c.id)
        .sort(),
      newestTwo.sort(),
    );
    assert.equal(
      [...fake.containers.values()].filter((c) => c.state === 'CONTAINER_RUNNING').length,
      3,
      'running containers are never collected',
    );
  });

  it('minAge: dead containers younger than it stay, even of a pod that is gone', async () => {
    const rt = manager({ minAgeMs: 10_000 });
    await podWithDead(rt, 1);
    for (const id of [...fake.sandboxes.keys()]) await fake.stopPodSandbox(id); // the pod was killed
    await rt.garbageCollect(new Set());
    assert.equal(dead().length, 6, 'all younger than 10 s');
    clock.advance(10_001);
    await rt.garbageCollect(new Set());
    assert.equal(fake.containers.size, 0);
    assert.equal(fake.sandboxes.size, 0);
  });

  it('a container in unknown state is stopped before it is removed', async () => {
    const rt = manager();
    await podWithDead(rt, 0);
    const c = fake.containersNamed('a')[0]!;
    c.state = 'CONTAINER_UNKNOWN';
    await rt.garbageCollect(new Set());
    assert.ok(fake.stopped.some((s) => s.id === c.id));
    assert.equal(fake.containers.has(c.id), false);
  });
});
