// Attacks on the pull records (src/images/pullmanager/records.ts): a corrupt, truncated, empty or
// hand-edited record file, one of the wrong kind or apiVersion, a record of another image, a
// directory in the record's place. Each is treated as "must pull again" (the image is verified
// with the pod's credentials), with a log line; nothing throws out of the pull manager, and the
// good records beside it keep working. A later pull rewrites the bad record.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FsPullRecords,
  PullManager,
  cacheFilename,
  verificationPolicy,
  type ImagePullSecret,
} from '../../src/images/pullmanager/index.js';
import { testTempDir } from '../support/temp-dir.js';

type Policy = Parameters<typeof verificationPolicy>[0];
const IMG = 'docker.io/testing/test:latest';
const REPO = 'docker.io/testing/test';
const SECRET: ImagePullSecret = { uid: 'u1', namespace: 'default', name: 'pull', credentialHash: 'h1' };
const record = (over: Record<string, unknown>) =>
  JSON.stringify({
    kind: 'ImagePulledRecord',
    apiVersion: 'kubelet.config.k8s.io/v1alpha1',
    imageRef: 'ref',
    lastUpdatedTime: '2022-02-22T12:00:00Z',
    credentialMapping: { [REPO]: { kubernetesSecrets: [SECRET] } },
    ...over,
  });
const GOOD = record({});

/**
 * [name, the record file's content ('dir': a directory instead), policy]. Another image's record
 * is no record: under NeverVerifyPreloadedImages that is a preloaded image (upstream), so AlwaysVerify.
 */
const HOSTILE: Array<[string, string, Policy?]> = [
  ['truncated', GOOD.slice(0, GOOD.length / 2)],
  ['empty', ''],
  ['binary garbage', '\u0000\u00ff\u0001{'],
  ['JSON null', 'null'],
  ['a JSON list', '[1,2]'],
  ['the wrong kind', record({ kind: 'ImagePullIntent' })],
  ['the wrong apiVersion', record({ apiVersion: 'kubelet.config.k8s.io/v1' })],
  ['another image (a hash collision)', record({ imageRef: 'other' }), 'AlwaysVerify'],
  ['credentialMapping null', record({ credentialMapping: null })],
  ['credentialMapping a list', record({ credentialMapping: [SECRET] })],
  ['an entry a string', record({ credentialMapping: { [REPO]: 'x' } })],
  ['kubernetesSecrets a string', record({ credentialMapping: { [REPO]: { kubernetesSecrets: 'h1' } } })],
  ['a secret without a hash', record({ credentialMapping: { [REPO]: { kubernetesSecrets: [{ uid: 'u1' }] } } })],
  ['a secret null', record({ credentialMapping: { [REPO]: { kubernetesSecrets: [null] } } })],
  ['nodePodsAccessible a string', record({ credentialMapping: { [REPO]: { nodePodsAccessible: 'yes' } } })],
  ['a directory in its place', 'dir'],
];

describe('pull record attacks: a bad record means "pull again", never a crash', () => {
  for (const [name, content, policy = 'NeverVerifyPreloadedImages'] of HOSTILE) {
    it(name, async () => {
      const store = new FsPullRecords(testTempDir('kts-records-attack-'));
      await store.writePulled({
        imageRef: 'good',
        lastUpdatedTime: '2022-02-22T12:00:00Z',
        credentialMapping: { [REPO]: { kubernetesSecrets: [SECRET] } },
      });
      mkdirSync(store.pulledDir, { recursive: true });
      const path = join(store.pulledDir, cacheFilename('ref'));
      if (content === 'dir') mkdirSync(path);
      else writeFileSync(path, content);
      const m = new PullManager({ store, requireVerification: verificationPolicy(policy) });
      assert.equal(await m.mustAttemptImagePull(IMG, 'ref', [SECRET]), true, 'pull again');
      assert.equal(await m.mustAttemptImagePull(IMG, 'good', [SECRET]), false, 'the good record still counts');
      await m.pruneUnknownRecords(['good', 'ref'], new Date()); // lists the bad file: no throw
      if (content === 'dir') return;
      // The pull that follows rewrites the record with what it pulled with.
      await m.recordPullIntent(IMG);
      await m.recordImagePulled(IMG, 'ref', { kubernetesSecrets: [SECRET] });
      assert.equal(JSON.parse(readFileSync(path, 'utf8')).imageRef, 'ref');
      assert.equal(await m.mustAttemptImagePull(IMG, 'ref', [SECRET]), false);
    });
  }

  it('a corrupt intent file: the image counts as pulled by the kubelet only if a record says so', async () => {
    const store = new FsPullRecords(testTempDir('kts-records-attack-'));
    mkdirSync(store.pullingDir, { recursive: true });
    writeFileSync(join(store.pullingDir, cacheFilename(IMG)), '{"kind":');
    const m = new PullManager({ store, requireVerification: verificationPolicy('NeverVerifyPreloadedImages') });
    assert.equal(await m.mustAttemptImagePull(IMG, 'ref', [SECRET]), true);
    assert.deepEqual(await store.listIntents(), []);
  });
});
