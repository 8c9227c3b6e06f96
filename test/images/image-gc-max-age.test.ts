/**
 * imageMaximumGCAge: unused images not used for longer than the max age are removed without
 * disk pressure, once the manager itself is older than the max age.
 * Mirrors upstream pkg/kubelet/images/image_gc_manager_test.go TestGarbageCollectImageTooOld /
 * TestGarbageCollectImageMaxAgeDisabled (the behaviour, not the code).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createImageGCManager } from '../../src/images/index.js';
import type { Container, Image } from '../../src/cri/types.js';
import type { Clock } from '../../src/util/clock.js';

function image(id: string, size = 100): Image {
  return { id, repoTags: [`${id}:latest`], repoDigests: [], size: BigInt(size), pinned: false };
}

function container(img: string): Container {
  return {
    id: `c-${img}`,
    podSandboxId: 's',
    metadata: { name: img, attempt: 0 },
    image: img,
    imageRef: img,
    state: 'CONTAINER_RUNNING',
    createdAt: 0n,
    labels: {},
    annotations: {},
  } as unknown as Container;
}

/** A runtime of `images` used by `containers`, a disk at 10 % usage (no pressure), a settable clock. */
function setup(maxAgeMs: number, highThresholdPercent = 85) {
  let now = 1_000_000;
  const clock: Clock = { now: () => now, setTimeout: () => ({ cancel() {} }) };
  const images = [image('a'), image('b'), image('used')];
  const containers = [container('used')];
  const removed: string[] = [];
  const gc = createImageGCManager({
    images: {
      listImages: async () => images.filter((i) => !removed.includes(i.id)),
      removeImage: async (id: string) => void removed.push(id),
      imageFsInfo: async () => [{ timestamp: 0n, mountpoint: '/images', usedBytes: 0n, inodesUsed: 0n }],
    },
    listContainers: async () => containers,
    policy: { highThresholdPercent, lowThresholdPercent: Math.max(0, highThresholdPercent - 5), minAgeMs: 0, maxAgeMs },
    fsCapacity: async () => ({ capacityBytes: 1000, availableBytes: 900 }),
    clock,
  });
  return {
    gc,
    removed,
    containers,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

test('images unused for longer than imageMaximumGCAge are removed without disk pressure', async () => {
  const { gc, removed, advance } = setup(60_000);
  await gc.garbageCollect();
  assert.deepEqual(removed, [], 'nothing is older than the max age yet');
  advance(30_000);
  await gc.garbageCollect();
  assert.deepEqual(removed, [], 'still younger than the max age');
  advance(31_000);
  const r = await gc.garbageCollect();
  assert.deepEqual(removed.sort(), ['a', 'b'], 'the image in use stays');
  assert.equal(r.bytesToFree, 0, 'no disk pressure');
  assert.equal(r.freedBytes, 200);
});

test('an image used recently is kept; its age counts from its last use', async () => {
  const { gc, removed, containers, advance } = setup(60_000);
  await gc.garbageCollect();
  advance(50_000);
  containers.push(container('a'));
  await gc.garbageCollect(); // 'a' is seen in use now
  containers.pop();
  advance(20_000);
  await gc.garbageCollect();
  assert.deepEqual(removed, ['b'], "'a' was last used 20s ago");
  advance(41_000);
  await gc.garbageCollect();
  assert.deepEqual(removed.sort(), ['a', 'b']);
});

test('imageMaximumGCAge 0 never removes by age; the loop runs with max age even when thresholds are off', async () => {
  const off = setup(0);
  off.advance(10 * 3_600_000);
  await off.gc.garbageCollect();
  assert.deepEqual(off.removed, []);
  assert.equal(off.gc.enabled, true, 'thresholds are on (85)');
  assert.equal(setup(0, 100).gc.enabled, false, 'high threshold 100 and no max age: image GC is off');
  const ageOnly = setup(60_000, 100);
  assert.equal(ageOnly.gc.enabled, true);
  await ageOnly.gc.garbageCollect();
  ageOnly.advance(61_000);
  await ageOnly.gc.garbageCollect();
  assert.deepEqual(ageOnly.removed.sort(), ['a', 'b']);
});

test('each look at the images hands their ids to pruneRecords (KEP-2535 PruneUnknownRecords)', async () => {
  const seen: [string[], Date][] = [];
  const before = new Date();
  const gc = createImageGCManager({
    images: {
      listImages: async () => [image('a'), image('b')],
      removeImage: async () => undefined,
      imageFsInfo: async () => [],
    },
    listContainers: async () => [],
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 0, maxAgeMs: 0 },
    pruneRecords: async (refs, until) => void seen.push([[...refs], until]),
  });
  await gc.detectImages(0);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0]![0], ['a', 'b']);
  assert.ok(seen[0]![1].getTime() >= before.getTime());
});
