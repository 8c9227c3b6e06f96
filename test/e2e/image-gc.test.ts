/**
 * Image GC against real containerd: throwaway images with distinct ids, one used by a (created)
 * container, one too young; thresholds chosen for the test so that GC must act.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import type { ContainerConfig, PodSandboxConfig } from '../../src/cri/types.js';
import type { EventRecorder } from '../../src/events/types.js';
import { createImageGCManager, ImageGCPeriodMs } from '../../src/images/index.js';
import { createGarbageCollection } from '../../src/kubelet/gc-loops.js';
import { ManualClock } from '../fakes/manual-clock.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES, uniqueName } from '../support/containerd.js';
import { importImage, makeVariantImage } from '../support/variant-images.js';
import { SETUID_IMAGE } from '../support/images.js';
import { testTempDir } from '../support/temp-dir.js';

const RUN = uniqueName('imggc');
const endpoint = await runtimeEndpoint();
const { runtime, images } = connectRuntime(endpoint);
const work = testTempDir('kts-imggc-');
const name = (v: string) => `localhost/kubelet-ts/gc-${RUN}:${v}`;

after(async () => {
  await removeTestPods(runtime, { labels: { 'kubelet-ts.test/owner': RUN } });
  for (const v of ['old1', 'old2', 'used', 'young', 'stale', 'recent'])
    await images.removeImage(name(v)).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
  runtime.close();
  images.close();
});

const idOf = async (v: string) => (await images.imageStatus(name(v)))?.id;

async function containerUsing(image: string, tag: string): Promise<string> {
  const sb: PodSandboxConfig = {
    metadata: { name: `${RUN}-${tag}`, uid: `${RUN}-${tag}`, namespace: 'kts-e2e', attempt: 0 },
    hostname: '',
    logDirectory: join(work, tag),
    portMappings: [],
    labels: { 'kubelet-ts.test/owner': RUN },
    annotations: {},
    linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
  };
  const id = await runtime.runPodSandbox(sb);
  const c: ContainerConfig = {
    metadata: { name: 'c', attempt: 0 },
    image: { image },
    command: ['sleep', '1'],
    args: [],
    workingDir: '/',
    envs: [],
    mounts: [],
    labels: { 'kubelet-ts.test/owner': RUN },
    annotations: {},
    logPath: 'c.log',
  };
  await runtime.createContainer(id, c, sb);
  return id;
}

test('image GC removes unused images least recently used first, never in-use, pinned or young ones', async () => {
  for (const v of ['old1', 'old2', 'used'])
    await importImage(endpoint, await makeVariantImage(name(v), `${RUN}-${v}`, work));
  const ids = { old1: await idOf('old1'), old2: await idOf('old2'), used: await idOf('used') };
  assert.ok(ids.old1 && ids.old2 && ids.used && new Set(Object.values(ids)).size === 3, 'three distinct images');

  let now = 1_000_000;
  const events: string[] = [];
  const recorder: EventRecorder = {
    event: (ref, type, reason, message) => events.push(`${ref.kind}/${ref.name} ${type} ${reason}: ${message}`),
  };
  const base = {
    images,
    listContainers: () => runtime.listContainers(),
    recorder,
    node: { kind: 'Node' as const, name: 'e2e-node' },
    // The local images are shared with every other e2e test: pinned here, as the sandbox image is
    // in the agent; so is the setuid image attack-security-context imports (it may run first).
    pinnedImages: [...Object.values(TEST_IMAGES), SETUID_IMAGE],
    clock: {
      now: () => now,
      setTimeout: (fn: () => void, ms: number) => {
        const t = setTimeout(fn, ms);
        return { cancel: () => clearTimeout(t) };
      },
    },
  };

  // old2 was used by a container at t0 (then removed); old1 never: old1 is the least recently used.
  const sbOld2 = await containerUsing(name('old2'), 'old2');
  const gcA = createImageGCManager({
    ...base,
    policy: { highThresholdPercent: 41, lowThresholdPercent: 40, minAgeMs: 60_000 },
    // 41 % used and 1 byte short of the low threshold: exactly one image goes.
    fsCapacity: async () => ({ capacityBytes: 100e9, availableBytes: 60e9 - 1 }),
  });
  await gcA.detectImages(now);
  await runtime.stopPodSandbox(sbOld2);
  await removeTestPods(runtime, { labels: { 'kubelet-ts.test/owner': RUN } });
  await containerUsing(name('used'), 'used');
  now += 120_000;
  const a = await gcA.garbageCollect();
  assert.equal(a.usagePercent, 41);
  assert.equal(a.bytesToFree, 1);
  assert.deepEqual(a.removed, [ids.old1], 'the least recently used image only');
  assert.equal(await idOf('old1'), undefined);

  // Now the real image filesystem (statfs) with high 1 % / low 0 %: GC must free more than it can.
  const gcB = createImageGCManager({
    ...base,
    policy: { highThresholdPercent: 1, lowThresholdPercent: 0, minAgeMs: 60_000 },
  });
  await gcB.detectImages(now - 120_000); // everything present now was seen two minutes ago …
  await importImage(endpoint, await makeVariantImage(name('young'), `${RUN}-young`, work)); // … this one is new
  const before = new Set((await images.listImages()).map((i) => i.id));
  await assert.rejects(gcB.garbageCollect(), /Failed to garbage collect required amount of images/);
  const afterIds = new Set((await images.listImages()).map((i) => i.id));
  assert.ok(before.has(ids.old2!) && !afterIds.has(ids.old2!), 'old2 removed');
  assert.ok(afterIds.has(ids.used!), 'the image of an existing container is kept');
  assert.ok(await idOf('young'), 'an image younger than imageMinimumGCAge is kept');
  assert.ok(await images.imageStatus(TEST_IMAGES.busybox), 'pinned busybox kept');
  assert.ok(await images.imageStatus(TEST_IMAGES.pause), 'pinned pause kept');
  assert.ok(
    events.some((e) => /^Node\/e2e-node Warning FreeDiskSpaceFailed: Failed to garbage collect/.test(e)),
    events.join('\n'),
  );
  // The periodic loop (upstream StartGarbageCollection): ImageGCFailed only when passes fail twice in a row.
  const loopClock = new ManualClock();
  const loops = createGarbageCollection({
    runtime: { garbageCollect: async () => undefined },
    pods: { allSourcesReady: () => false, shouldPodContentBeRemoved: () => false },
    imageGC: gcB,
    recorder,
    node: base.node,
    clock: loopClock,
  });
  loops.start();
  // Two timers: the container loop's (a no-op here) and, once its first pass has ended, the image loop's.
  await loopClock.waitForTimers(2, 60_000);
  assert.equal(events.filter((e) => / FreeDiskSpaceFailed: /.test(e)).length, 2, 'the first pass ran at once');
  assert.ok(!events.some((e) => / ImageGCFailed: /.test(e)), 'not on the first failure of the loop');
  await loopClock.advance(ImageGCPeriodMs);
  await loopClock.waitForTimers(2, 60_000); // the second pass, 5 minutes later
  assert.ok(
    events.some((e) => /^Node\/e2e-node Warning ImageGCFailed: Failed to garbage collect/.test(e)),
    events.join('\n'),
  );
  await loops.stop();
});

test('imageMaximumGCAge removes images unused for longer than it, with no disk pressure and thresholds off', async () => {
  for (const v of ['stale', 'recent'])
    await importImage(endpoint, await makeVariantImage(name(v), `${RUN}-${v}`, work));
  const ids = { stale: await idOf('stale'), recent: await idOf('recent') };
  assert.ok(ids.stale && ids.recent && ids.stale !== ids.recent, 'two distinct images');
  let now = 5_000_000;
  const gc = createImageGCManager({
    images,
    listContainers: () => runtime.listContainers(),
    pinnedImages: Object.values(TEST_IMAGES),
    // High threshold 100: only the max-age rule can remove anything.
    policy: { highThresholdPercent: 100, lowThresholdPercent: 80, minAgeMs: 0, maxAgeMs: 60_000 },
    clock: { now: () => now, setTimeout: () => ({ cancel() {} }) },
  });
  assert.equal(gc.enabled, true, 'the periodic loop runs for the max-age rule');
  await gc.garbageCollect(); // first sight of both images
  now += 40_000;
  const sb = await containerUsing(name('recent'), 'recent');
  await gc.garbageCollect(); // 'recent' is in use at +40s
  await runtime.stopPodSandbox(sb);
  await removeTestPods(runtime, { labels: { 'kubelet-ts.test/owner': RUN } });
  now += 30_000;
  const r = await gc.garbageCollect();
  assert.equal(r.bytesToFree, 0);
  // Other unpinned images left by the test above (e.g. 'young') are unused for 70s too.
  assert.ok(r.removed.includes(ids.stale!), 'unused for 70s: removed');
  assert.ok(!r.removed.includes(ids.recent!), 'last used 30s ago: kept');
  assert.equal(await idOf('stale'), undefined);
  assert.ok(await idOf('recent'));
  for (const img of Object.values(TEST_IMAGES)) assert.ok(await images.imageStatus(img), `pinned ${img} kept`);
});
