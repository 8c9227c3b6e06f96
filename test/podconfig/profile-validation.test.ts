// Static pod manifests with seccomp and AppArmor profiles (upstream validateSeccompProfileField,
// validateLocalDescendingPath, ValidateAppArmorProfileField): a Localhost seccomp profile is a
// file the runtime reads as root, so a manifest naming one outside <root-dir>/seccomp is
// refused, naming the field, before anything runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManifestError } from '../../src/errors.js';
import { decodeSinglePod } from '../../src/podconfig/index.js';

const FILE = '/etc/kubernetes/manifests/p.json';

/** A manifest with `podSc` as the pod's security context and `sc` as its container's. */
function manifest(podSc: object | undefined, sc?: object): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      ...(podSc ? { securityContext: podSc } : {}),
      containers: [{ name: 'c', image: 'busybox', ...(sc ? { securityContext: sc } : {}) }],
    },
  });
}

const refusals: Array<[string, string, string, RegExp]> = [
  [
    'a seccomp profile climbing out with ../',
    manifest({ seccompProfile: { type: 'Localhost', localhostProfile: '../../../etc/shadow' } }),
    'spec.securityContext.seccompProfile.localhostProfile',
    /Invalid value: "\.\.\/\.\.\/\.\.\/etc\/shadow": must not contain '\.\.'/,
  ],
  [
    'a seccomp profile climbing out in the middle',
    manifest(undefined, { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/../../x.json' } }),
    'spec.containers[0].securityContext.seccompProfile.localhostProfile',
    /must not contain '\.\.'/,
  ],
  [
    'an absolute seccomp profile path',
    manifest(undefined, { seccompProfile: { type: 'Localhost', localhostProfile: '/etc/x.json' } }),
    'spec.containers[0].securityContext.seccompProfile.localhostProfile',
    /Invalid value: "\/etc\/x.json": must be a relative path/,
  ],
  [
    'Localhost without a profile',
    manifest({ seccompProfile: { type: 'Localhost' } }),
    'spec.securityContext.seccompProfile.localhostProfile',
    /Required value: must be set when seccomp type is Localhost/,
  ],
  [
    'a profile with another type',
    manifest({ seccompProfile: { type: 'RuntimeDefault', localhostProfile: 'x.json' } }),
    'spec.securityContext.seccompProfile.localhostProfile',
    /can only be set when seccomp type is Localhost/,
  ],
  [
    'an unknown seccomp type',
    manifest({ seccompProfile: { type: 'Permissive' } }),
    'spec.securityContext.seccompProfile.type',
    /Unsupported value: "Permissive": supported values: "Localhost", "RuntimeDefault", "Unconfined"/,
  ],
  [
    'a seccomp profile without a type',
    manifest({ seccompProfile: {} }),
    'spec.securityContext.seccompProfile.type',
    /Required value: type is required when seccompProfile is set/,
  ],
  [
    'an AppArmor Localhost profile padded with whitespace',
    manifest(undefined, { appArmorProfile: { type: 'Localhost', localhostProfile: ' x ' } }),
    'spec.containers[0].securityContext.appArmorProfile.localhostProfile',
    /must not be padded with whitespace/,
  ],
  [
    'an AppArmor Localhost profile without a name',
    manifest({ appArmorProfile: { type: 'Localhost', localhostProfile: '' } }),
    'spec.securityContext.appArmorProfile.localhostProfile',
    /Required value: must be set when AppArmor type is Localhost/,
  ],
  [
    'an unknown AppArmor type',
    manifest({ appArmorProfile: { type: 'Complain' } }),
    'spec.securityContext.appArmorProfile.type',
    /Unsupported value: "Complain"/,
  ],
];

for (const [name, text, field, message] of refusals) {
  test(`refused: ${name}`, () => {
    assert.throws(
      () => decodeSinglePod(text, FILE),
      (err: unknown) => {
        assert.ok(err instanceof ManifestError, String(err));
        assert.equal(err.field, field);
        assert.match(err.message, message);
        return true;
      },
    );
  });
}

test('accepted: descending Localhost profiles, RuntimeDefault, Unconfined, a named AppArmor profile', () => {
  const ok = [
    manifest({ seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } }),
    manifest({ seccompProfile: { type: 'RuntimeDefault' } }, { seccompProfile: { type: 'Unconfined' } }),
    manifest({ appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-apparmor-example' } }),
    manifest(undefined, { appArmorProfile: { type: 'RuntimeDefault' } }),
  ];
  for (const text of ok) assert.doesNotThrow(() => decodeSinglePod(text, FILE), text);
});
