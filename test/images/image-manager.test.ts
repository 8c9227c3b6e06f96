/**
 * The ImageManager through its own interface (ensureImageExists, withSignal) on the CRI fake.
 *
 * The policy table is upstream's pullerTestCases (pkg/kubelet/images/image_manager_test.go), run
 * as upstream runs it by TestSerializedPuller (serializeImagePulls) and TestParallelPuller (no
 * limit): Always / IfNotPresent / Never × present / absent, an inspect failure, and a pull that
 * keeps failing (ErrImagePull, ImagePullBackOff, ErrImagePull, ImagePullBackOff, ImagePullBackOff
 * with the clock stepped 1 s before each call). The calls the runtime sees are compared as upstream
 * compares them (GetImageRef ≡ imageStatus; upstream's extra GetImageSize we do not make). The
 * bound on parallel pulls is upstream's TestMaxParallelImagePullsLimit. The behaviour, not the code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import type { AuthConfig, PodSandboxConfig } from '../../src/cri/types.js';
import { ContainerStartError, CriError } from '../../src/errors.js';
import type { EventRecorder, ObjectReference } from '../../src/events/types.js';
import {
  createImageManager,
  type ImageManager,
  type ImageManagerOptions,
  type PullPolicy,
  type PullSecret,
} from '../../src/images/index.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { ManualClock } from '../fakes/manual-clock.js';

const SANDBOX = { metadata: { name: 'p', uid: 'uid-1', namespace: 'ns', attempt: 0 } } as PodSandboxConfig;
const POD: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'uid-1' },
  spec: { containers: [{ name: 'c' }], initContainers: [{ name: 'init' }] },
};
const PRESENT = 'present_image:1';
const MISSING = 'missing_image:1';

const ctr = (image: string, imagePullPolicy?: PullPolicy, name = 'c'): Container => ({
  name,
  image,
  ...(imagePullPolicy ? { imagePullPolicy } : {}),
});

/** One call's expectation: the runtime calls it makes, and its waiting reason (undefined: an image ref). */
interface Expect {
  calls: string[];
  reason?: string;
}

interface PullerCase {
  name: string;
  image: string;
  policy: PullPolicy;
  inspectErr?: Error;
  pullErr?: Error;
  expected: Expect[];
}

const ok = (...calls: string[]): Expect => ({ calls, reason: undefined });
const fail = (reason: string, ...calls: string[]): Expect => ({ calls, reason });

/** upstream pullerTestCases, the cases that do not exercise registryPullQPS (not implemented). */
const pullerTestCases: PullerCase[] = [
  {
    name: 'image missing, pull',
    image: MISSING,
    policy: 'IfNotPresent',
    expected: [ok('imageStatus', 'pullImage'), ok('imageStatus'), ok('imageStatus')],
  },
  {
    name: "image present, don't pull",
    image: PRESENT,
    policy: 'IfNotPresent',
    expected: [ok('imageStatus'), ok('imageStatus'), ok('imageStatus')],
  },
  {
    name: 'image present, pull it',
    image: PRESENT,
    policy: 'Always',
    expected: [ok('imageStatus', 'pullImage'), ok('imageStatus', 'pullImage'), ok('imageStatus', 'pullImage')],
  },
  {
    name: 'image missing, pull it (Always)',
    image: MISSING,
    policy: 'Always',
    expected: [ok('imageStatus', 'pullImage'), ok('imageStatus', 'pullImage')],
  },
  {
    name: 'image present, never pull',
    image: PRESENT,
    policy: 'Never',
    expected: [ok('imageStatus'), ok('imageStatus')],
  },
  {
    name: 'image missing, never pull',
    image: MISSING,
    policy: 'Never',
    expected: [
      fail('ErrImageNeverPull', 'imageStatus'),
      fail('ErrImageNeverPull', 'imageStatus'),
      fail('ErrImageNeverPull', 'imageStatus'),
    ],
  },
  {
    name: 'image missing, unable to inspect',
    image: MISSING,
    policy: 'IfNotPresent',
    inspectErr: new CriError('KTS_ERR_CRI', 'ImageStatus', 'unknown inspectError'),
    expected: [
      fail('ImageInspectError', 'imageStatus'),
      fail('ImageInspectError', 'imageStatus'),
      fail('ImageInspectError', 'imageStatus'),
    ],
  },
  {
    name: 'image missing, unable to fetch',
    image: 'typo_image:1',
    policy: 'IfNotPresent',
    pullErr: new CriError('KTS_ERR_CRI', 'PullImage', '404'),
    expected: [
      fail('ErrImagePull', 'imageStatus', 'pullImage'),
      fail('ImagePullBackOff', 'imageStatus'),
      fail('ErrImagePull', 'imageStatus', 'pullImage'),
      fail('ImagePullBackOff', 'imageStatus'),
      fail('ImagePullBackOff', 'imageStatus'),
    ],
  },
];

function env(extra: Partial<ImageManagerOptions> = {}) {
  const fake = new FakeRuntimeService();
  fake.addImage(PRESENT);
  const clock = new ManualClock(1_700_000_000_000);
  // upstream's test back-off: 1 s stepped by 1 s; ours starts at 2 s so each step lands inside it.
  const manager = createImageManager({
    images: fake,
    clock,
    pullBackOff: { initialMs: 2000, maxMs: 60_000 },
    ...extra,
  });
  return { fake, clock, manager };
}

async function outcome(p: Promise<string>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    assert.ok(err instanceof ContainerStartError, String(err));
    return err.reason;
  }
}

function pullerTestEnv(serialized: boolean): void {
  for (const c of pullerTestCases) {
    it(c.name, async () => {
      const { fake, clock, manager } = env({ serializeImagePulls: serialized });
      if (c.inspectErr) fake.alwaysFail.set('imageStatus', c.inspectErr);
      if (c.pullErr) fake.alwaysFail.set('pullImage', c.pullErr);
      for (const [tick, want] of c.expected.entries()) {
        fake.calls.length = 0;
        clock.t += 1000;
        const reason = await outcome(manager.ensureImageExists(POD, ctr(c.image, c.policy), [], SANDBOX));
        assert.deepEqual({ calls: [...fake.calls], reason }, want, `tick ${tick}`);
      }
    });
  }
}

describe('TestSerializedPuller (serializeImagePulls: true)', () => pullerTestEnv(true));
describe('TestParallelPuller (serializeImagePulls: false)', () => pullerTestEnv(false));

describe('ImageManager', () => {
  it('the default pull policy: Always for :latest or no tag, IfNotPresent for another tag or a digest', async () => {
    const { fake, manager } = env();
    for (const image of ['app:latest', 'app', 'app:1', 'app@sha256:abc']) fake.addImage(image);
    const pulls: string[] = [];
    for (const image of ['app:latest', 'app', 'app:1', 'app@sha256:abc']) {
      fake.calls.length = 0;
      await manager.ensureImageExists(POD, ctr(image), [], SANDBOX);
      if (fake.calls.includes('pullImage')) pulls.push(image);
    }
    assert.deepEqual(pulls, ['app:latest', 'app']);
  });

  it('a container without an image: InvalidImageName, no runtime call', async () => {
    const { fake, manager } = env();
    assert.equal(await outcome(manager.ensureImageExists(POD, { name: 'c' }, [], SANDBOX)), 'InvalidImageName');
    assert.deepEqual(fake.calls, []);
  });

  it('a pull failure carries the runtime words; a success ends the back-off', async () => {
    const { fake, clock, manager } = env();
    fake.failNext('pullImage', new CriError('KTS_ERR_CRI', 'PullImage', 'manifest unknown'));
    await assert.rejects(
      manager.ensureImageExists(POD, ctr(MISSING, 'Always'), [], SANDBOX),
      (err: ContainerStartError) => {
        assert.equal(err.code, 'KTS_ERR_IMAGE_PULL');
        assert.equal(err.message, `Failed to pull image "${MISSING}": manifest unknown`);
        return true;
      },
    );
    clock.t += 2000;
    assert.match(await manager.ensureImageExists(POD, ctr(MISSING, 'Always'), [], SANDBOX), /^sha256:/);
    fake.failNext('pullImage', new Error('again'));
    assert.equal(
      await outcome(manager.ensureImageExists(POD, ctr(MISSING, 'Always'), [], SANDBOX)),
      'ErrImagePull',
      'no back-off left',
    );
  });

  it('events: Pulling, Pulled and BackOff on the container (its field path), Pulled for an image present', async () => {
    const events: Array<{ ref: ObjectReference; reason: string; message: string }> = [];
    const recorder: EventRecorder = { event: (ref, _type, reason, message) => events.push({ ref, reason, message }) };
    const { fake, manager } = env({ recorder });
    await manager.ensureImageExists(POD, ctr(PRESENT, 'IfNotPresent', 'init'), [], SANDBOX);
    await manager.ensureImageExists(POD, ctr(MISSING, 'IfNotPresent'), [], SANDBOX);
    fake.alwaysFail.set('pullImage', new Error('down'));
    await outcome(manager.ensureImageExists(POD, ctr('other:1', 'IfNotPresent'), [], SANDBOX));
    await outcome(manager.ensureImageExists(POD, ctr('other:1', 'IfNotPresent'), [], SANDBOX));
    assert.deepEqual(
      events.map((e) => [e.ref.fieldPath, e.reason]),
      [
        ['spec.initContainers{init}', 'Pulled'],
        ['spec.containers{c}', 'Pulling'],
        ['spec.containers{c}', 'Pulled'],
        ['spec.containers{c}', 'Pulling'],
        ['spec.containers{c}', 'BackOff'],
      ],
    );
    assert.equal(events[0]!.message, `Container image "${PRESENT}" already present on machine`);
    assert.match(events[2]!.message, new RegExp(`^Successfully pulled image "${MISSING}" in \\d+ms$`));
    assert.deepEqual(
      { ...events[1]!.ref, fieldPath: undefined },
      { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'uid-1', apiVersion: 'v1', fieldPath: undefined },
    );
  });

  it('pull secrets: the matching credential goes to PullImage; none applies → anonymous; a refused one → the next', async () => {
    const { fake, manager } = env();
    const auths: Array<AuthConfig | undefined> = [];
    const pullImage = fake.pullImage.bind(fake);
    fake.pullImage = async (image, auth, sb) => {
      auths.push(auth);
      if (auth?.username === 'bad') throw new Error('401 unauthorized');
      return pullImage(image, auth, sb);
    };
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const secret = (auths: object): PullSecret => ({
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
    });
    const secrets = [
      secret({ 'reg.example/team': { username: 'bad', password: 'x' } }),
      secret({ 'reg.example': { username: 'good', password: 'y' } }),
    ];
    await manager.ensureImageExists(POD, ctr('reg.example/team/app:1', 'Always'), secrets, SANDBOX);
    await manager.ensureImageExists(POD, ctr('other.example/app:1', 'Always'), secrets, SANDBOX);
    assert.deepEqual(
      auths.map((a) => a?.username),
      ['bad', 'good', undefined],
    );
  });

  it('TestMaxParallelImagePullsLimit: at most maxParallelImagePulls pulls run at once, the rest wait', async () => {
    const { fake, manager } = env({ serializeImagePulls: false, maxParallelImagePulls: 2 });
    let running = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const pullImage = fake.pullImage.bind(fake);
    fake.pullImage = async (image, auth, sb) => {
      most = Math.max(most, ++running);
      await new Promise<void>((r) => release.push(r));
      running--;
      return pullImage(image, auth, sb);
    };
    const pulls = [1, 2, 3, 4, 5].map((i) =>
      manager.ensureImageExists(POD, ctr(`img${i}:1`, 'IfNotPresent'), [], SANDBOX),
    );
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await settle();
    assert.equal(release.length, 2, 'two pulls in flight, three waiting');
    while (release.length > 0) {
      release.shift()!();
      await settle();
    }
    await Promise.all(pulls);
    assert.equal(most, 2);
  });

  it('withSignal: a pull cancelled by its signal rejects with the cancellation, without back-off or event', async () => {
    const events: string[] = [];
    const { fake, manager } = env({ recorder: { event: (_r, _t, reason) => events.push(reason) } });
    const ac = new AbortController();
    fake.pullImage = async () => {
      ac.abort(new Error('killed'));
      throw new Error('cancelled by the runtime client');
    };
    const bound: ImageManager = manager.withSignal(ac.signal);
    await assert.rejects(
      bound.ensureImageExists(POD, ctr(MISSING, 'Always'), [], SANDBOX),
      /cancelled by the runtime client/,
    );
    assert.deepEqual(events, ['Pulling']);
    fake.pullImage = async () => 'sha256:ok';
    assert.equal(
      await manager.ensureImageExists(POD, ctr(MISSING, 'Always'), [], SANDBOX),
      'sha256:ok',
      'no back-off: the unbound manager pulls at once',
    );
  });
});
