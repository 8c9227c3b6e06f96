/**
 * The garbage collection loops (upstream Kubelet.StartGarbageCollection) on a clock the test
 * moves: periods, no overlap with a slow pass, failure events, stop, and what container GC
 * keeps while the sources are not ready.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventRecorder } from '../../src/events/types.js';
import { createImageManager, ImageGCPeriodMs } from '../../src/images/index.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import {
  ContainerGCPeriodMs,
  createGarbageCollection,
  type GarbageCollectionDeps,
  type PodStateProvider,
} from '../../src/kubelet/gc-loops.js';
import { ManualClock, settle } from '../fakes/manual-clock.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, makePod } from '../kuberuntime/helpers.js';
import { testTempDir } from '../support/temp-dir.js';

const node = { kind: 'Node' as const, name: 'n1', uid: 'n1' };

/** A pass the test ends by hand (a slow GC), or that ends at once with `result`. */
class Passes {
  calls = 0;
  private pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  constructor(
    private readonly slow = false,
    public fail: Error | undefined = undefined,
  ) {}
  run = (): Promise<void> => {
    this.calls++;
    if (!this.slow) return this.fail ? Promise.reject(this.fail) : Promise.resolve();
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };
  finish(err?: Error): void {
    const p = this.pending.shift()!;
    if (err) p.reject(err);
    else p.resolve();
  }
}

function setup(opts: { container?: Passes; image?: Passes; imageEnabled?: boolean; pods?: PodStateProvider } = {}) {
  const clock = new ManualClock();
  const events: string[] = [];
  const recorder: EventRecorder = {
    event: (ref, type, reason, message) => events.push(`${ref.kind}/${ref.name} ${type} ${reason}: ${message}`),
  };
  const containerPasses = opts.container ?? new Passes();
  const imagePasses = opts.image ?? new Passes();
  const kept: Pick<ReadonlySet<string>, 'has'>[] = [];
  const deps: GarbageCollectionDeps = {
    runtime: {
      garbageCollect: (k) => {
        kept.push(k);
        return containerPasses.run();
      },
    },
    pods: opts.pods ?? { allSourcesReady: () => true, shouldPodContentBeRemoved: () => true },
    imageGC: {
      enabled: opts.imageEnabled ?? true,
      detectImages: async () => ({ images: [], inUse: new Set() }),
      garbageCollect: async () => {
        await imagePasses.run();
        return { usagePercent: 0, bytesToFree: 0, freedBytes: 0, removed: [] };
      },
    },
    recorder,
    node,
    clock,
  };
  const gc = createGarbageCollection(deps);
  return { gc, clock, events, kept, containerPasses, imagePasses };
}

test('container GC runs at once and then every minute; image GC at once and then every 5 minutes (upstream ContainerGCPeriod, ImageGCPeriod)', async () => {
  const { gc, clock, containerPasses, imagePasses } = setup();
  assert.equal(ContainerGCPeriodMs, 60_000);
  assert.equal(ImageGCPeriodMs, 300_000);
  gc.start();
  await settle();
  assert.deepEqual([containerPasses.calls, imagePasses.calls], [1, 1], 'both run at start, as wait.Until does');
  await clock.advance(ContainerGCPeriodMs - 1);
  assert.equal(containerPasses.calls, 1);
  await clock.advance(1);
  assert.equal(containerPasses.calls, 2);
  await clock.advance(ImageGCPeriodMs - ContainerGCPeriodMs);
  assert.deepEqual([containerPasses.calls, imagePasses.calls], [6, 2]);
  await gc.stop();
});

test('a slow pass is never overlapped: the next one starts a period after it ends', async () => {
  const slow = new Passes(true);
  const { gc, clock } = setup({ container: slow });
  gc.start();
  await settle();
  assert.equal(slow.calls, 1);
  await clock.advance(10 * ContainerGCPeriodMs);
  assert.equal(slow.calls, 1, 'no second pass while the first runs');
  slow.finish();
  await clock.advance(ContainerGCPeriodMs - 1);
  assert.equal(slow.calls, 1, 'the period counts from the end of the pass');
  await clock.advance(1);
  assert.equal(slow.calls, 2);
  slow.finish();
  await gc.stop();
});

test('every failed container pass records ContainerGCFailed on the Node; the loop goes on', async () => {
  const { gc, clock, events, containerPasses } = setup({
    container: new Passes(false, new Error('CRI ListContainers: down')),
  });
  gc.start();
  await settle();
  await clock.advance(ContainerGCPeriodMs);
  assert.deepEqual(events, [
    'Node/n1 Warning ContainerGCFailed: CRI ListContainers: down',
    'Node/n1 Warning ContainerGCFailed: CRI ListContainers: down',
  ]);
  containerPasses.fail = undefined;
  await clock.advance(ContainerGCPeriodMs);
  assert.equal(containerPasses.calls, 3);
  assert.equal(events.length, 2, 'a good pass records nothing');
  await gc.stop();
});

test('image GC records ImageGCFailed only from the second failed pass in a row (upstream: the first may be stats not ready)', async () => {
  const image = new Passes(false, new Error('Failed to garbage collect required amount of images'));
  const { gc, clock, events } = setup({ image });
  const imageEvents = () => events.filter((e) => e.includes('ImageGCFailed'));
  gc.start();
  await settle();
  assert.deepEqual(imageEvents(), [], 'first failure: logged only');
  await clock.advance(ImageGCPeriodMs);
  assert.deepEqual(imageEvents(), [
    'Node/n1 Warning ImageGCFailed: Failed to garbage collect required amount of images',
  ]);
  await clock.advance(ImageGCPeriodMs);
  assert.equal(imageEvents().length, 2, 'and on every failure after that');
  image.fail = undefined;
  await clock.advance(ImageGCPeriodMs);
  image.fail = new Error('again');
  await clock.advance(ImageGCPeriodMs);
  assert.equal(imageEvents().length, 2, 'a success resets the count');
  await gc.stop();
});

test('image GC disabled (high threshold 100): no image loop', async () => {
  const { gc, clock, imagePasses, containerPasses } = setup({ imageEnabled: false });
  gc.start();
  await clock.advance(2 * ImageGCPeriodMs);
  assert.equal(imagePasses.calls, 0);
  assert.ok(containerPasses.calls > 0, 'container GC still runs');
  await gc.stop();
});

test('stop: no pass after it; it waits for the pass in progress, whose failure is no event', async () => {
  const slow = new Passes(true);
  const { gc, clock, events } = setup({ container: slow, imageEnabled: false });
  gc.start();
  await settle();
  let stopped = false;
  const stopping = gc.stop().then(() => {
    stopped = true;
  });
  await settle();
  assert.equal(stopped, false, 'waits for the pass in progress');
  slow.finish(new Error('connection closed'));
  await stopping;
  assert.deepEqual(events, []);
  assert.equal(clock.pending, 0, 'no next pass scheduled');
  await clock.advance(10 * ContainerGCPeriodMs);
  assert.equal(slow.calls, 1);
});

test('container GC runs before the sources are ready, but keeps every pod until they are; then asks the Kubelet per pod', async () => {
  let ready = false;
  const removed = new Set(['gone']);
  const { gc, clock, kept } = setup({
    pods: { allSourcesReady: () => ready, shouldPodContentBeRemoved: (uid) => removed.has(uid) },
    imageEnabled: false,
  });
  gc.start();
  await settle();
  assert.equal(kept.length, 1, 'not gated on the sources');
  assert.deepEqual(
    ['gone', 'desired'].map((u) => kept[0]!.has(u)),
    [true, true],
    'sources not ready: no pod counts as deleted',
  );
  ready = true;
  await clock.advance(ContainerGCPeriodMs);
  assert.deepEqual(
    ['gone', 'desired'].map((u) => kept[1]!.has(u)),
    [false, true],
  );
  removed.delete('gone');
  assert.equal(kept[1]!.has('gone'), true, 'asked at the moment of the question: a pod added meanwhile is kept');
  await gc.stop();
});

// upstream pkg/kubelet/kuberuntime/kuberuntime_gc_test.go TestContainerGC ("containers for deleted pods may not be
// removed if allSourcesReady is set false"), through our runtime manager on the fake CRI.
test('the dead containers of a deleted pod stay while the sources are not ready and go once they are', async () => {
  const dir = testTempDir('kts-gc-loops-');
  try {
    const fake = new FakeRuntimeService();
    fake.addImage('busybox:1.36');
    const clock = new ManualClock(1_700_000_000_000);
    const rt = createRuntimeManager({
      runtime: fake,
      imageManager: createImageManager({ images: fake, clock }),
      clock,
      podLogsDir: join(dir, 'logs'),
      rootDir: join(dir, 'root'),
      volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
      nodeName: 'n1',
      hostIP: '192.0.2.1',
      resolvConf: '',
      memoryCapacity: 2 ** 30,
      cgroupsPerQOS: false,
    });
    const pod = makePod({ containers: [container('a')] });
    await rt.syncPod(pod, await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!));
    const [running] = await rt.getPods(false);
    await rt.killPod(pod, running!);
    assert.equal(fake.containers.size, 1, 'one dead container');
    let ready = false;
    const gc = createGarbageCollection({
      runtime: rt,
      pods: { allSourcesReady: () => ready, shouldPodContentBeRemoved: () => true },
      clock,
    });
    gc.start();
    await clock.waitForTimers(1); // the first pass ended
    assert.equal(fake.containers.size, 1, 'sources not ready: kept');
    ready = true;
    await clock.advance(ContainerGCPeriodMs);
    await clock.waitForTimers(1);
    assert.equal(fake.containers.size, 0, 'sources ready: the deleted pod loses it');
    assert.equal(fake.sandboxes.size, 0);
    await gc.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
