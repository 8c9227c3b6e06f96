/**
 * imagePullCredentialsVerificationPolicy and preloadedImagesVerificationAllowlist
 * (KubeletEnsureSecretPulledImages): defaults, and validation after upstream's
 * TestValidateKubeletConfiguration cases ("invalid ImagePullCredentialsVerificationPolicy",
 * "allowlist set with a policy other than NeverVerifyAllowlistedImages") and the pull manager's
 * Test_getAllowlistImagePattern table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { problems, run } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';
import { parseAllowlistPattern } from '../../src/config/image-credentials.js';

function configFile(body: string): string {
  const p = join(testTempDir('kts-imgcred-'), 'config.yaml');
  writeFileSync(p, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
  return p;
}

const argv = (yaml: string) => [`--config=${configFile(`${yaml}\n`)}`, '--hostname-override=n'];

test('defaults: NeverVerifyPreloadedImages, an empty allowlist, the gate on', () => {
  const { kubelet } = run(['--hostname-override=n']);
  assert.equal(kubelet.imagePullCredentialsVerificationPolicy, 'NeverVerifyPreloadedImages');
  assert.deepEqual(kubelet.preloadedImagesVerificationAllowlist, []);
  assert.equal(
    run(argv('imagePullCredentialsVerificationPolicy: ""')).kubelet.imagePullCredentialsVerificationPolicy,
    'NeverVerifyPreloadedImages',
  );
});

test('the policy and the allowlist are validated as upstream', () => {
  const table: [yaml: string, refused?: RegExp][] = [
    ['imagePullCredentialsVerificationPolicy: NeverVerify'],
    ['imagePullCredentialsVerificationPolicy: AlwaysVerify'],
    ['imagePullCredentialsVerificationPolicy: NeverVerifyPreloadedImages'],
    ['imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages'],
    [
      'imagePullCredentialsVerificationPolicy: Sometimes',
      /option "Sometimes" specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify"/,
    ],
    [
      'preloadedImagesVerificationAllowlist: [registry.example/app]',
      /can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVerificationPolicy` is not "NeverVerifyAllowlistedImages"/,
    ],
    [
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: [registry.example/app, registry.example:5000/team/*]',
    ],
    [
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: [registry.example/app:v1]',
      /preloadedImagesVerificationAllowlist: neither tag nor digest/,
    ],
    [
      'imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist: ["registry.example/*/app"]',
      /only patterns ending with '\/\*' are allowed/,
    ],
  ];
  for (const [yaml, refused] of table) {
    if (refused) assert.match(problems(argv(yaml)).join('\n'), refused, yaml);
    else assert.doesNotThrow(() => run(argv(yaml)), yaml);
  }
});

test('allowlist patterns (upstream Test_getAllowlistImagePattern)', () => {
  const table: [pattern: string, want: { prefix: boolean; value: string } | RegExp][] = [
    ['registry.example/app', { prefix: false, value: 'registry.example/app' }],
    ['registry.example/org/*', { prefix: true, value: 'registry.example/org/' }],
    ['registry.example:5000/*', { prefix: true, value: 'registry.example:5000/' }],
    ['docker.io/library/busybox', { prefix: false, value: 'docker.io/library/busybox' }],
    ['busybox', /neither tag nor digest/],
    ['docker.io/busybox', /neither tag nor digest/],
    ['registry.example/app@sha256:' + 'a'.repeat(64), /neither tag nor digest|failed to parse/],
    [' registry.example/app', /leading\/trailing spaces/],
    ['/*', /at least registry hostname is required/],
    ['*', /only patterns ending with/],
    ['', /too short/],
    ['registry.example/App', /failed to parse as an image name/],
  ];
  for (const [pattern, want] of table) {
    if (want instanceof RegExp) assert.throws(() => parseAllowlistPattern(pattern), want, pattern);
    else assert.deepEqual(parseAllowlistPattern(pattern), want, pattern);
  }
});
