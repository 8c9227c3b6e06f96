/**
 * The crash-loop back-off configured through RuntimeManagerDeps and the image-pull back-off through
 * the ImageManager, seen through SyncPod on the CRI fake with a hand-moved clock.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import type { BackOffSettings } from '../../src/util/backoff.js';
import { CriError } from '../../src/errors.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, type RuntimeManagerDeps } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import type { Runtime } from '../../src/kuberuntime/types.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { FakeClock, container, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
before(async () => {
  dir = testTempDir('kuberuntime-backoff-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function setup(
  extra: Partial<RuntimeManagerDeps>,
  pullBackOff?: BackOffSettings,
): { fake: FakeRuntimeService; clock: FakeClock; rt: Runtime } {
  const fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  const clock = new FakeClock(Number(fake.nowNs / 1_000_000n));
  const rt = createRuntimeManager({
    runtime: fake,
    imageManager: createImageManager({ images: fake, clock, pullBackOff }),
    clock,
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
    nodeName: 'n',
    resolvConf: '',
    cgroupsPerQOS: false,
    ...extra,
  });
  return { fake, clock, rt };
}

async function sync(rt: Runtime, pod: Pod) {
  return rt.syncPod(pod, await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!));
}

describe('configurable back-off', () => {
  it('CrashLoopBackOff grows from initialMs, doubles, caps at maxMs, and resets after 2×max of clean running', async () => {
    const { fake, clock, rt } = setup({ crashLoopBackOff: { initialMs: 1000, maxMs: 4000 } });
    const pod = makePod({ containers: [container('a')] });
    await sync(rt, pod);
    const delays: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = fake.containersNamed('a').at(-1)!;
      fake.exitContainer(c.id, 1);
      clock.t = Number(fake.nowNs / 1_000_000n);
      const r = await sync(rt, pod);
      const w = r.waiting.get('a');
      delays.push(w ? w.message.split(' ')[1]! : 'immediate');
      // Wait out the delay (a hand-moved clock), then the restart happens.
      clock.advance(5000);
      if (w) assert.deepEqual([...(await sync(rt, pod)).waiting], []);
    }
    assert.deepEqual(delays, ['immediate', '1s', '2s', '4s', '4s']);
    // Clean running for more than 2×max: the next crash restarts at once, and the one after waits
    // the initial delay again.
    fake.nowNs += 20_000_000_000n;
    clock.t = Number(fake.nowNs / 1_000_000n);
    fake.exitContainer(fake.containersNamed('a').at(-1)!.id, 1);
    assert.deepEqual([...(await sync(rt, pod)).waiting], []);
    fake.exitContainer(fake.containersNamed('a').at(-1)!.id, 1);
    clock.t = Number(fake.nowNs / 1_000_000n);
    assert.match((await sync(rt, pod)).waiting.get('a')!.message, /^back-off 1s /);
  });

  it('ImagePullBackOff uses its own settings', async () => {
    const { fake, clock, rt } = setup({}, { initialMs: 500, maxMs: 1000 });
    fake.alwaysFail.set('pullImage', new CriError('KTS_ERR_CRI', 'PullImage', 'no such host'));
    const pod = makePod({ containers: [container('a', { image: 'registry.invalid/x:1', imagePullPolicy: 'Always' })] });
    const reason = async () => (await sync(rt, pod)).waiting.get('a')?.reason;
    assert.equal(await reason(), 'ErrImagePull');
    assert.equal(await reason(), 'ImagePullBackOff');
    clock.advance(501);
    assert.equal(await reason(), 'ErrImagePull');
    clock.advance(501);
    assert.equal(await reason(), 'ImagePullBackOff', 'doubled to 1 s');
    clock.advance(500);
    assert.equal(await reason(), 'ErrImagePull');
    clock.advance(1001);
    assert.equal(await reason(), 'ErrImagePull', 'capped at 1 s');
  });

  it('rejects a back-off whose max is below its initial delay', () => {
    assert.throws(() => setup({ crashLoopBackOff: { initialMs: 5000, maxMs: 1000 } }), RangeError);
  });
});
