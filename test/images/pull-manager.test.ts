/**
 * The image pull manager (KEP-2535) after upstream pkg/kubelet/images/pullmanager tests:
 * Test_pulledRecordMergeNewCreds, TestFileBasedImagePullManager_MustAttemptImagePull (same case
 * names, the records upstream keeps in testdata/ written here through our file store),
 * TestFileBasedImagePullManager_RecordPullIntent / _RecordImagePulled / _initialize, and the
 * policies of image_pull_policies_test.go (TestNeverVerifyAllowlistedImages). Then the image
 * manager with the records, on the CRI fake with a registry that wants one password.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod } from '../../src/api/types.js';
import type { AuthConfig, PodSandboxConfig } from '../../src/cri/types.js';
import { ContainerStartError, CriError } from '../../src/errors.js';
import { createImageManager, type PullSecret } from '../../src/images/index.js';
import {
  FsPullRecords,
  PullManager,
  cacheFilename,
  mergeNewCreds,
  verificationPolicy,
  type ImagePullCredentials,
  type ImagePullSecret,
} from '../../src/images/pullmanager/index.js';
import type { ImagePulledRecord } from '../../src/images/pullmanager/records.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { testTempDir } from '../support/temp-dir.js';

const T0 = new Date('2022-02-22T12:00:00Z');
const T1 = new Date('2022-02-22T12:00:01Z');
const s = (uid: string, namespace: string, name: string, credentialHash: string): ImagePullSecret => ({
  uid,
  namespace,
  name,
  credentialHash,
});

describe('pulledRecordMergeNewCreds (upstream Test_pulledRecordMergeNewCreds)', () => {
  const base = (): ImagePulledRecord => ({
    imageRef: 'testImageRef',
    lastUpdatedTime: T0.toISOString(),
    credentialMapping: {
      'test-image1': { kubernetesSecrets: [s('uid1', 'namespace1', 'name1', 'hash1')] },
      'test-image2': {
        kubernetesSecrets: [s('uid1', 'namespace1', 'name1', 'hash1'), s('uid2', 'namespace2', 'name2', 'hash2')],
      },
      'test-nodewide': { nodePodsAccessible: true },
    },
  });
  const cases: [name: string, image: string, creds: ImagePullCredentials | undefined, want?: ImagePullCredentials][] = [
    [
      'create a new image record',
      'new-image',
      { kubernetesSecrets: [s('newuid', 'newnamespace', 'newname', 'newhash')] },
      { kubernetesSecrets: [s('newuid', 'newnamespace', 'newname', 'newhash')] },
    ],
    [
      'merge with an existing image secret',
      'test-image1',
      { kubernetesSecrets: [s('newuid', 'newnamespace', 'newname', 'newhash')] },
      {
        kubernetesSecrets: [
          s('uid1', 'namespace1', 'name1', 'hash1'),
          s('newuid', 'newnamespace', 'newname', 'newhash'),
        ],
      },
    ],
    [
      'merge with existing image record secrets',
      'test-image2',
      { kubernetesSecrets: [s('newuid', 'namespace1', 'newname', 'newhash')] },
      {
        kubernetesSecrets: [
          s('uid1', 'namespace1', 'name1', 'hash1'),
          s('newuid', 'namespace1', 'newname', 'newhash'),
          s('uid2', 'namespace2', 'name2', 'hash2'),
        ],
      },
    ],
    [
      'node-accessible overrides all secrets',
      'test-image2',
      { nodePodsAccessible: true },
      { nodePodsAccessible: true },
    ],
    [
      'new creds have the same secret coordinates but a different hash',
      'test-image2',
      { kubernetesSecrets: [s('uid2', 'namespace2', 'name2', 'newhash')] },
      {
        kubernetesSecrets: [s('uid1', 'namespace1', 'name1', 'hash1'), s('uid2', 'namespace2', 'name2', 'newhash')],
      },
    ],
    [
      'new creds have the same hash but a different coordinates',
      'test-image2',
      { kubernetesSecrets: [s('uid3', 'namespace2', 'name3', 'hash2')] },
      {
        kubernetesSecrets: [
          s('uid1', 'namespace1', 'name1', 'hash1'),
          s('uid2', 'namespace2', 'name2', 'hash2'),
          s('uid3', 'namespace2', 'name3', 'hash2'),
        ],
      },
    ],
    // Ours: what does not change the record reports no update.
    ['node-wide record stays node-wide', 'test-nodewide', { kubernetesSecrets: [s('u', 'n', 'x', 'h')] }],
    ['no credentials: no update', 'test-image1', undefined],
    [
      'the same secret again: no update',
      'test-image1',
      { kubernetesSecrets: [s('uid1', 'namespace1', 'name1', 'hash1')] },
    ],
  ];
  for (const [name, image, creds, want] of cases)
    it(name, () => {
      const got = mergeNewCreds(base(), image, creds, T1);
      if (!want) return assert.equal(got, undefined);
      assert.ok(got);
      assert.equal(got.lastUpdatedTime, T1.toISOString());
      assert.deepEqual(got.credentialMapping, { ...base().credentialMapping, [image]: want });
    });
});

/** upstream's testdata records, written with our store. */
async function seed(root: string): Promise<FsPullRecords> {
  const store = new FsPullRecords(root);
  const rec = (imageRef: string, credentialMapping: Record<string, ImagePullCredentials>) =>
    store.writePulled({ imageRef, lastUpdatedTime: T0.toISOString(), credentialMapping });
  await rec('testimageref', {
    'docker.io/testing/test': { kubernetesSecrets: [s('testsecretuid', 'default', 'pull-secret', 'testsecrethash')] },
  });
  await rec('testemptycredmapping', {});
  await rec('testimage-anonpull', { 'docker.io/testing/test': { nodePodsAccessible: true } });
  await rec('test-brokenhash', {
    'docker.io/testing/test': { kubernetesSecrets: [s('testsecretuid', 'default', 'pull-secret', '')] },
  });
  return store;
}

describe('MustAttemptImagePull (upstream TestFileBasedImagePullManager_MustAttemptImagePull)', () => {
  const exact = s('testsecretuid', 'default', 'pull-secret', 'testsecrethash');
  const IMG = 'docker.io/testing/test:latest';
  type Case = [
    name: string,
    policy: Parameters<typeof verificationPolicy>[0],
    secrets: ImagePullSecret[],
    image: string,
    ref: string,
    want: boolean,
    intent?: boolean,
  ];
  const cases: Case[] = [
    [
      "image exists and is recorded with pod's exact secret",
      'NeverVerifyPreloadedImages',
      [exact],
      IMG,
      'testimageref',
      false,
    ],
    ['image exists and is recorded, no pod secrets', 'NeverVerifyPreloadedImages', [], IMG, 'testimageref', true],
    [
      'image exists and is recorded with the same secret but different credential hash',
      'NeverVerifyPreloadedImages',
      [{ ...exact, credentialHash: 'differenthash' }],
      IMG,
      'testimageref',
      false,
    ],
    [
      'image exists and is recorded with a different secret with a different UID',
      'NeverVerifyPreloadedImages',
      [s('different uid', 'default', 'pull-secret', 'differenthash')],
      IMG,
      'testimageref',
      true,
    ],
    [
      'image exists and is recorded with a different secret',
      'NeverVerifyPreloadedImages',
      [s('testsecretuid', 'differentns', 'pull-secret', 'differenthash')],
      IMG,
      'testimageref',
      true,
    ],
    [
      'image exists and is recorded with a different secret with the same credential hash',
      'NeverVerifyPreloadedImages',
      [s('testsecretuid', 'differentns', 'pull-secret', 'testsecrethash')],
      IMG,
      'testimageref',
      false,
    ],
    [
      'image exists but the pull is recorded with a different image name but with the exact same secret',
      'NeverVerifyPreloadedImages',
      [exact],
      'docker.io/testing/different:latest',
      'testimageref',
      true,
    ],
    [
      'image exists and is recorded with empty credential mapping',
      'NeverVerifyPreloadedImages',
      [],
      IMG,
      'testemptycredmapping',
      true,
    ],
    ['image does not exist and there are no records of it', 'NeverVerifyPreloadedImages', [], IMG, '', true],
    [
      'image exists and there are no records of it with NeverVerifyPreloadedImages pull policy',
      'NeverVerifyPreloadedImages',
      [],
      IMG,
      'testexistingref',
      false,
    ],
    [
      'image exists and there are no records of it with AlwaysVerify pull policy',
      'AlwaysVerify',
      [],
      IMG,
      'testexistingref',
      true,
    ],
    [
      'image exists but is only recorded via pulling intent',
      'NeverVerifyPreloadedImages',
      [exact],
      IMG,
      'testexistingref',
      true,
      true,
    ],
    [
      'image exists but is only recorded via pulling intent - NeverVerify policy',
      'NeverVerify',
      [exact],
      IMG,
      'testexistingref',
      false,
      true,
    ],
    [
      'image exists and is recorded as node-accessible, no pod secrets',
      'NeverVerifyPreloadedImages',
      [],
      IMG,
      'testimage-anonpull',
      false,
    ],
    [
      'image exists and is recorded as node-accessible, request with pod secrets',
      'NeverVerifyPreloadedImages',
      [exact],
      IMG,
      'testimage-anonpull',
      false,
    ],
    [
      'image exists and is recorded with empty hash as its hashing originally failed, the same fail for a different pod secret',
      'NeverVerifyPreloadedImages',
      [s('testsecretuid', 'differentns', 'pull-secret', '')],
      IMG,
      'test-brokenhash',
      true,
    ],
    [
      'image exists and is recorded with empty hash as its hashing originally failed, the same fail for the same pod secret',
      'NeverVerifyPreloadedImages',
      [s('testsecretuid', 'default', 'pull-secret', '')],
      IMG,
      'test-brokenhash',
      false,
    ],
    // Ours: the allowlist policy, and a record that cannot be read.
    ['allowlisted image, no records: no check', 'NeverVerifyAllowlistedImages', [], IMG, 'testexistingref', false],
    [
      'not allowlisted, no records: must pull',
      'NeverVerifyAllowlistedImages',
      [],
      'registry.example/other:1',
      'testexistingref',
      true,
    ],
    ['an unreadable record: must pull (fail safe)', 'NeverVerify', [exact], IMG, 'corrupt', true],
  ];
  for (const [name, policy, secrets, image, ref, want, intent] of cases)
    it(name, async () => {
      const root = testTempDir('kts-pullmgr-');
      const store = await seed(root);
      if (intent) await store.writeIntent(IMG);
      mkdirSync(store.pulledDir, { recursive: true });
      writeFileSync(join(store.pulledDir, cacheFilename('corrupt')), '{not json');
      const m = new PullManager({ store, requireVerification: verificationPolicy(policy, ['docker.io/testing/*']) });
      assert.equal(await m.mustAttemptImagePull(image, ref, secrets), want);
      // upstream GetPodCredentials: the same answer when the secrets are looked up lazily.
      assert.equal(await m.mustAttemptImagePull(image, ref, async () => secrets), want);
    });

  it('the lazy lookup of the pod secrets is not made when no record needs them', async () => {
    const store = await seed(testTempDir('kts-pullmgr-'));
    let lookups = 0;
    const lookup = async () => {
      lookups++;
      return [exact];
    };
    const never = new PullManager({ store, requireVerification: verificationPolicy('NeverVerify') });
    assert.equal(await never.mustAttemptImagePull(IMG, 'testimageref', lookup), false);
    assert.equal(lookups, 0);
    const always = new PullManager({ store, requireVerification: verificationPolicy('AlwaysVerify') });
    assert.equal(await always.mustAttemptImagePull(IMG, 'testimageref', lookup), false);
    assert.equal(lookups, 1);
  });

  it('a match by hash with new coordinates is written to the record (upstream writes while matching)', async () => {
    const store = await seed(testTempDir('kts-pullmgr-'));
    const m = new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') });
    const other = s('otheruid', 'otherns', 'other', 'testsecrethash');
    assert.equal(await m.mustAttemptImagePull(IMG, 'testimageref', [other]), false);
    const rec = await store.getPulled('testimageref');
    assert.deepEqual(rec?.credentialMapping['docker.io/testing/test']?.kubernetesSecrets, [exact, other]);
  });
});

describe('intents and records (upstream _RecordPullIntent, _RecordImagePulled, _initialize)', () => {
  const files = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

  it('an intent per image while pulls are in flight; removed after the last one ends', async () => {
    const store = new FsPullRecords(testTempDir('kts-pullmgr-'));
    const m = new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') });
    await m.recordPullIntent('img:1');
    await m.recordPullIntent('img:1');
    assert.deepEqual(files(store.pullingDir), [cacheFilename('img:1')]);
    const intent = JSON.parse(readFileSync(join(store.pullingDir, cacheFilename('img:1')), 'utf8'));
    assert.deepEqual(intent, { kind: 'ImagePullIntent', apiVersion: 'kubelet.config.k8s.io/v1alpha1', image: 'img:1' });
    // While pulling, an image already there counts as pulled by the kubelet: verified.
    assert.equal(await m.mustAttemptImagePull('img:1', 'sha256:x', []), true);
    await m.recordImagePullFailed('img:1');
    assert.equal(files(store.pullingDir).length, 1);
    await m.recordImagePulled('img:1', 'sha256:x', { nodePodsAccessible: true });
    assert.deepEqual(files(store.pullingDir), []);
    const rec = JSON.parse(readFileSync(join(store.pulledDir, cacheFilename('sha256:x')), 'utf8'));
    assert.equal(rec.kind, 'ImagePulledRecord');
    assert.equal(rec.apiVersion, 'kubelet.config.k8s.io/v1alpha1');
    assert.deepEqual(rec.credentialMapping, { 'docker.io/library/img': { nodePodsAccessible: true } });
  });

  it('initialize: a previous run’s intent whose image the runtime has becomes a record without credentials', async () => {
    const root = testTempDir('kts-pullmgr-');
    const store = new FsPullRecords(root);
    await store.writeIntent('registry.example/a:1');
    await store.writeIntent('registry.example/gone:1');
    const m = new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') });
    await m.initialize(async () => [{ id: 'sha256:a', repoTags: ['registry.example/a:1'], repoDigests: [] }]);
    assert.deepEqual(await store.listIntents(), ['registry.example/gone:1']);
    assert.deepEqual((await store.getPulled('sha256:a'))?.credentialMapping, {});
    // Pulled by the kubelet, credentials unknown: every pod must pull it again.
    assert.equal(await m.mustAttemptImagePull('registry.example/a:1', 'sha256:a', []), true);
  });
});

describe('PruneUnknownRecords (upstream TestPullManager_PruneUnknownRecords)', () => {
  it('drops records of images gone from the node, keeps present ones and ones updated since `until`', async () => {
    const store = await seed(testTempDir('kts-pullmgr-'));
    await store.writePulled({ imageRef: 'fresh', lastUpdatedTime: T1.toISOString(), credentialMapping: {} });
    const m = new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') });
    await m.pruneUnknownRecords(['testimageref', 'testimage-anonpull'], T1);
    const left = (await store.listPulled()).map((r) => r.imageRef).sort();
    assert.deepEqual(left, ['fresh', 'testimage-anonpull', 'testimageref']);
  });
});

describe('policies (upstream image_pull_policies_test.go)', () => {
  it('each policy on a preloaded and a kubelet-pulled image', () => {
    const table: [policy: Parameters<typeof verificationPolicy>[0], preloaded: boolean, pulled: boolean][] = [
      ['NeverVerify', false, false],
      ['NeverVerifyPreloadedImages', false, true],
      ['AlwaysVerify', true, true],
    ];
    for (const [policy, preloaded, pulled] of table) {
      const f = verificationPolicy(policy);
      assert.equal(f('registry.example/a:1', false), preloaded, policy);
      assert.equal(f('registry.example/a:1', true), pulled, policy);
    }
  });

  it('NeverVerifyAllowlistedImages: exact repositories and "/*" prefixes, tags and digests ignored', () => {
    const f = verificationPolicy('NeverVerifyAllowlistedImages', ['registry.example/app', 'docker.io/library/*']);
    const table: [image: string, verify: boolean][] = [
      ['registry.example/app:1', false],
      ['registry.example/app@sha256:' + 'a'.repeat(64), false],
      ['registry.example/app/sub:1', true],
      ['registry.example/apple:1', true],
      ['busybox:1.36', false],
      ['docker.io/other/img', true],
    ];
    for (const [image, verify] of table) {
      assert.equal(f(image, true), verify, image);
      assert.equal(f(image, false), verify, image);
    }
  });
});

/** A registry that serves `private/*` only to kts:pw and kts2:pw2, and the rest to anyone. */
const ALLOWED = new Set(['kts:pw', 'kts2:pw2']);
class AuthFake extends FakeRuntimeService {
  override async pullImage(image: string, auth?: AuthConfig, cfg?: PodSandboxConfig): Promise<string> {
    if (image.startsWith('registry.example/private/') && !ALLOWED.has(`${auth?.username}:${auth?.password}`)) {
      this.calls.push('pullImage');
      throw new CriError('KTS_ERR_CRI', 'PullImage', 'pull access denied: 401 Unauthorized');
    }
    return super.pullImage(image, auth, cfg);
  }
}

describe('the image manager with the pull records', () => {
  const PRIVATE = 'registry.example/private/app:1';
  const SANDBOX = { metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 } } as PodSandboxConfig;
  const pod = (ns: string, uid: string): Pod => ({
    metadata: { name: 'p', namespace: ns, uid },
    spec: { containers: [] },
  });
  const ctr = (imagePullPolicy: 'IfNotPresent' | 'Never'): Container => ({
    name: 'c',
    image: PRIVATE,
    imagePullPolicy,
  });
  const secret = (ns: string, uid: string, password = 'pw'): PullSecret => ({
    metadata: { name: 'regcred', namespace: ns, uid },
    type: 'kubernetes.io/dockerconfigjson',
    data: {
      '.dockerconfigjson': Buffer.from(
        JSON.stringify({ auths: { 'registry.example': { username: 'kts', password } } }),
      ).toString('base64'),
    },
  });
  async function setup(gate = true) {
    const fake = new AuthFake();
    const store = new FsPullRecords(testTempDir('kts-pullmgr-'));
    const pullManager = gate
      ? new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') })
      : undefined;
    const manager = createImageManager({
      images: fake,
      pullBackOff: { initialMs: 1, maxMs: 1 },
      ...(pullManager ? { pullManager } : {}),
    });
    await manager.ensureImageExists(pod('a', 'pa'), ctr('IfNotPresent'), [secret('a', 'sa')], SANDBOX);
    fake.calls.length = 0;
    return { fake, manager, store };
  }
  const reason = async (p: Promise<string>) =>
    p.then(
      () => undefined,
      (err: unknown) => (assert.ok(err instanceof ContainerStartError, String(err)), `${err.reason}: ${err.message}`),
    );

  it('records the pod secret the pull succeeded with', async () => {
    const { store } = await setup();
    const [file] = readdirSync(store.pulledDir);
    const body = JSON.parse(readFileSync(join(store.pulledDir, file!), 'utf8'));
    const creds = body.credentialMapping['registry.example/private/app'].kubernetesSecrets;
    assert.equal(creds.length, 1);
    assert.deepEqual(
      { ...creds[0], credentialHash: creds[0].credentialHash.length },
      { uid: 'sa', namespace: 'a', name: 'regcred', credentialHash: 64 },
    );
  });

  it('IfNotPresent without secrets: pulled again, and the 401 is ErrImagePull', async () => {
    const { fake, manager } = await setup();
    const r = await reason(manager.ensureImageExists(pod('b', 'pb'), ctr('IfNotPresent'), [], SANDBOX));
    assert.match(r ?? '', /^ErrImagePull: .*401/);
    assert.deepEqual(fake.calls, ['imageStatus', 'pullImage']);
  });

  it('Never without secrets: ErrImageNeverPull naming the missing credentials', async () => {
    const { fake, manager } = await setup();
    const r = await reason(manager.ensureImageExists(pod('b', 'pb'), ctr('Never'), [], SANDBOX));
    assert.match(
      r ?? '',
      /^ErrImageNeverPull: .*is present with pull policy of "Never" but does not have the proper credentials/,
    );
    assert.deepEqual(fake.calls, ['imageStatus']);
  });

  it('the same secret (coordinates) or equal credentials in another namespace: used without a pull', async () => {
    const { fake, manager } = await setup();
    await manager.ensureImageExists(pod('a', 'pa2'), ctr('Never'), [secret('a', 'sa')], SANDBOX);
    await manager.ensureImageExists(pod('c', 'pc'), ctr('IfNotPresent'), [secret('c', 'sc')], SANDBOX);
    assert.deepEqual(fake.calls, ['imageStatus', 'imageStatus']);
  });

  it('another secret with other (right) credentials: pulled once, then recorded', async () => {
    const { fake, manager } = await setup();
    const other: PullSecret = secret('c', 'sc');
    const cfg = { auths: { 'registry.example': { auth: Buffer.from('kts2:pw2').toString('base64') } } };
    other.data = { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') };
    await manager.ensureImageExists(pod('c', 'pc'), ctr('IfNotPresent'), [other], SANDBOX);
    assert.deepEqual(fake.calls, ['imageStatus', 'pullImage']);
    fake.calls.length = 0;
    await manager.ensureImageExists(pod('c', 'pc2'), ctr('Never'), [other], SANDBOX);
    assert.deepEqual(fake.calls, ['imageStatus']);
  });

  it('gate off: a present image is used by every pod, no records kept', async () => {
    const { fake, manager, store } = await setup(false);
    await manager.ensureImageExists(pod('b', 'pb'), ctr('IfNotPresent'), [], SANDBOX);
    assert.deepEqual(fake.calls, ['imageStatus']);
    assert.equal(existsSync(store.pulledDir), false);
  });
});
