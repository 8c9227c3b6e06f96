// AppArmor admission: upstream pkg/security/apparmor validate_test.go (TestValidateBadHost,
// TestValidateValidHost with its multi-container pod), the host check of validateHost (runc's
// apparmor.IsEnabled) and lifecycle's AppArmorAdmitHandler (reason, message, pending pods only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import {
  appArmorRequired,
  AppArmorValidator,
  newAppArmorValidator,
  validateAppArmorHost,
} from '../../src/kubelet/apparmor.js';
import { testTempDir } from '../support/temp-dir.js';

const PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const HOST_ERROR = 'AppArmor is not enabled on the host';

/** upstream getPodWithProfile: the annotation on container "test", or none for "". */
function podWithProfile(profile: string): Pod {
  return {
    metadata: { name: 'p', annotations: profile === '' ? { foo: 'bar' } : { [`${PREFIX}test`]: profile } },
    spec: { containers: [{ name: 'test', image: 'busybox' }] },
  } as Pod;
}

test('TestValidateBadHost: a pod requiring AppArmor gets the host error; one without passes', () => {
  const v = new AppArmorValidator('expected host error');
  for (const [profile, valid] of [
    ['', true],
    ['runtime/default', false],
    ['localhost/docker-default', false],
  ] as const)
    assert.equal(v.validate(podWithProfile(profile)), valid ? undefined : 'expected host error', profile);
});

test('TestValidateValidHost: any profile passes but an empty localhost name', () => {
  const v = new AppArmorValidator(undefined);
  for (const [profile, valid] of [
    ['', true],
    ['runtime/default', true],
    ['localhost/docker-default', true],
    ['localhost/foo-container', true],
    ['localhost//usr/sbin/ntpd', true],
    ['localhost/', false],
    ['localhost/ ', false],
  ] as const) {
    const err = v.validate(podWithProfile(profile));
    if (valid) assert.equal(err, undefined, profile);
    else assert.match(err ?? '', /^invalid empty AppArmor profile name/, profile);
  }
  const multi = {
    metadata: {
      annotations: {
        [`${PREFIX}init`]: 'localhost/foo-container',
        [`${PREFIX}test1`]: 'runtime/default',
        [`${PREFIX}test2`]: 'localhost/docker-default',
      },
    },
    spec: {
      initContainers: [{ name: 'init' }],
      containers: [{ name: 'test1' }, { name: 'test2' }, { name: 'no-profile' }],
    },
  } as Pod;
  assert.equal(v.validate(multi), undefined, 'Multi-container pod should validate');
});

test('validateHost (runc apparmor.IsEnabled): securityfs present and the module parameter Y', () => {
  const dir = testTempDir('kts-apparmor-');
  const paths = { securityfs: join(dir, 'security', 'apparmor'), enabledParameter: join(dir, 'enabled') };
  assert.equal(validateAppArmorHost(paths), HOST_ERROR, 'nothing there');
  mkdirSync(paths.securityfs, { recursive: true });
  assert.equal(validateAppArmorHost(paths), HOST_ERROR, 'no module parameter');
  writeFileSync(paths.enabledParameter, 'N\n');
  assert.equal(validateAppArmorHost(paths), HOST_ERROR, 'module disabled');
  writeFileSync(paths.enabledParameter, 'Y\n');
  assert.equal(validateAppArmorHost(paths), undefined);
});

test('isRequired: any profile other than Unconfined, at pod or container level or in an annotation', () => {
  const pod = (spec: object, annotations?: Record<string, string>) =>
    ({ metadata: { name: 'p', ...(annotations ? { annotations } : {}) }, spec }) as Pod;
  const c = (appArmorProfile?: object) => ({
    name: 'c',
    ...(appArmorProfile ? { securityContext: { appArmorProfile } } : {}),
  });
  assert.equal(appArmorRequired(pod({ containers: [c()] })), false);
  assert.equal(appArmorRequired(pod({ containers: [c({ type: 'Unconfined' })] })), false);
  assert.equal(appArmorRequired(pod({ containers: [c({ type: 'RuntimeDefault' })] })), true);
  assert.equal(
    appArmorRequired(pod({ initContainers: [c({ type: 'Localhost', localhostProfile: 'x' })], containers: [c()] })),
    true,
  );
  assert.equal(
    appArmorRequired(pod({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } }, containers: [c()] })),
    true,
  );
  assert.equal(
    appArmorRequired(pod({ securityContext: { appArmorProfile: { type: 'Unconfined' } }, containers: [c()] })),
    false,
  );
  assert.equal(appArmorRequired(pod({ containers: [c()] }, { [`${PREFIX}c`]: 'unconfined' })), false);
  assert.equal(appArmorRequired(pod({ containers: [c()] }, { [`${PREFIX}c`]: 'runtime/default' })), true);
});

test('AppArmorAdmitHandler: reason AppArmor, "Cannot enforce AppArmor: ..."; running pods are not rechecked', () => {
  const v = new AppArmorValidator(HOST_ERROR);
  const asking = (phase?: string) =>
    ({
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }] },
      ...(phase ? { status: { phase } } : {}),
    }) as Pod;
  const refused = { admit: false, reason: 'AppArmor', message: `Cannot enforce AppArmor: ${HOST_ERROR}` };
  assert.deepEqual(v.admit(asking('Pending')), refused);
  assert.deepEqual(v.admit(asking()), refused, 'no phase yet counts as pending');
  assert.deepEqual(v.admit(asking('Running')), { admit: true });
  assert.deepEqual(v.admit(podWithProfile('unconfined')), { admit: true });
});

test('this host (no AppArmor in the kernel, as the brief says of these machines) refuses AppArmor pods', () => {
  const enabled = validateAppArmorHost() === undefined;
  const pod = podWithProfile('runtime/default');
  assert.equal(newAppArmorValidator().admit(pod).admit, enabled);
});

test('an ephemeral container asking AppArmor on a host without it waits; others and enabled hosts run', () => {
  const debug = (profile?: string) => ({
    name: 'debug',
    image: 'busybox',
    ...(profile ? { securityContext: { appArmorProfile: { type: profile } } } : {}),
  });
  const pod = {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c' }], ephemeralContainers: [debug('RuntimeDefault'), debug(), debug('Unconfined')] },
  } as Pod;
  const off = new AppArmorValidator(HOST_ERROR);
  assert.equal(off.ephemeralRefusal(pod, 0), `Cannot enforce AppArmor: ${HOST_ERROR}`);
  assert.equal(off.ephemeralRefusal(pod, 1), undefined);
  assert.equal(off.ephemeralRefusal(pod, 2), undefined);
  assert.equal(off.ephemeralRefusal(pod, 9), undefined, 'no such container');
  assert.equal(new AppArmorValidator(undefined).ephemeralRefusal(pod, 0), undefined);
});
