// Seccomp and AppArmor profiles for the CRI, the cases of upstream's tables:
// pkg/kubelet/kuberuntime helpers_test.go TestGetSeccompProfile, TestGetSeccompProfileDefaultSeccomp
// and TestFieldProfile (here for fieldSeccompProfile, which replaced fieldProfile), and
// helpers_linux_test.go TestGetAppArmorProfile; plus the deprecated AppArmor annotations
// (pkg/security/apparmor GetProfile), the profile root confinement and the sandbox's profile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import type { SecurityProfile } from '../../src/cri/types.js';
import { generatePodSandboxConfig } from '../../src/kuberuntime/sandbox-config.js';
import {
  appArmorProfileFor,
  fieldSeccompProfile,
  seccompLocalhostRef,
  seccompProfileFor,
  SecurityProfileError,
} from '../../src/kuberuntime/security-profiles.js';

const ROOT = '/var/lib/kubelet/seccomp';
const UNCONFINED: SecurityProfile = { profileType: 'Unconfined' };
const RUNTIME_DEFAULT: SecurityProfile = { profileType: 'RuntimeDefault' };
const local = (f: string): SecurityProfile => ({ profileType: 'Localhost', localhostRef: `${ROOT}/${f}` });
const LOCAL_MISSING = 'localhostProfile must be set if seccompProfile type is Localhost.';

type Profile = { type: string; localhostProfile?: string };
type Row = { name: string; podSc?: Profile; containerSc?: Profile; want?: SecurityProfile; error?: string };

function podWith(row: Row): { pod: Pod; container: Container } {
  const container = {
    name: 'container1',
    image: 'busybox',
    ...(row.containerSc ? { securityContext: { seccompProfile: row.containerSc } } : {}),
  } as Container;
  const pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [container], ...(row.podSc ? { securityContext: { seccompProfile: row.podSc } } : {}) },
  } as Pod;
  return { pod, container };
}

/** The rows both upstream tables share: only "no seccomp" differs between them. */
function seccompRows(unset: SecurityProfile): Row[] {
  return [
    { name: 'no seccomp', want: unset },
    {
      name: 'pod seccomp profile set to unconfined returns unconfined',
      podSc: { type: 'Unconfined' },
      want: UNCONFINED,
    },
    {
      name: 'container seccomp profile set to unconfined returns unconfined',
      containerSc: { type: 'Unconfined' },
      want: UNCONFINED,
    },
    {
      name: 'pod seccomp profile set to SeccompProfileTypeRuntimeDefault returns runtime/default',
      podSc: { type: 'RuntimeDefault' },
      want: RUNTIME_DEFAULT,
    },
    {
      name: 'container seccomp profile set to SeccompProfileTypeRuntimeDefault returns runtime/default',
      containerSc: { type: 'RuntimeDefault' },
      want: RUNTIME_DEFAULT,
    },
    {
      name: "pod seccomp profile set to SeccompProfileTypeLocalhost returns 'localhost/' + LocalhostProfile",
      podSc: { type: 'Localhost', localhostProfile: 'filename' },
      want: local('filename'),
    },
    {
      name: 'pod seccomp profile set to SeccompProfileTypeLocalhost with empty LocalhostProfile returns error',
      podSc: { type: 'Localhost' },
      error: LOCAL_MISSING,
    },
    {
      name: 'container seccomp profile set to SeccompProfileTypeLocalhost with empty LocalhostProfile returns error',
      containerSc: { type: 'Localhost' },
      error: LOCAL_MISSING,
    },
    {
      name: "container seccomp profile set to SeccompProfileTypeLocalhost returns 'localhost/' + LocalhostProfile",
      containerSc: { type: 'Localhost', localhostProfile: 'filename2' },
      want: local('filename2'),
    },
    {
      name: 'prioritise container field over pod field (RuntimeDefault over Unconfined)',
      podSc: { type: 'Unconfined' },
      containerSc: { type: 'RuntimeDefault' },
      want: RUNTIME_DEFAULT,
    },
    {
      name: 'prioritise container field over pod field (two Localhost profiles)',
      podSc: { type: 'Localhost', localhostProfile: 'field-pod-profile.json' },
      containerSc: { type: 'Localhost', localhostProfile: 'field-cont-profile.json' },
      want: local('field-cont-profile.json'),
    },
  ];
}

for (const [upstream, seccompDefault, unset] of [
  ['TestGetSeccompProfile', false, UNCONFINED],
  ['TestGetSeccompProfileDefaultSeccomp', true, RUNTIME_DEFAULT],
] as const) {
  for (const row of seccompRows(unset)) {
    test(`${upstream}: ${row.name}`, () => {
      const { pod, container } = podWith(row);
      const get = () => seccompProfileFor(pod, container, { seccompDefault, seccompProfileRoot: ROOT });
      if (row.error) assert.throws(get, (e: unknown) => e instanceof SecurityProfileError && e.message === row.error);
      else assert.deepEqual(get(), row.want);
    });
  }
}

// TestFieldProfile's rows, for the CRI SecurityProfile fieldSeccompProfile returns today.
const fieldRows: Array<[string, Profile | undefined, string, SecurityProfile | string]> = [
  ['no seccompProfile should return unconfined', undefined, ROOT, UNCONFINED],
  ['type localhost without profile should return an error', { type: 'Localhost' }, ROOT, LOCAL_MISSING],
  ['unknown type should return unconfined', { type: '' }, ROOT, UNCONFINED],
  ['SeccompProfileTypeRuntimeDefault should return runtime/default', { type: 'RuntimeDefault' }, ROOT, RUNTIME_DEFAULT],
  ['SeccompProfileTypeUnconfined should return unconfined', { type: 'Unconfined' }, ROOT, UNCONFINED],
  [
    'SeccompProfileTypeLocalhost should return localhost',
    { type: 'Localhost', localhostProfile: 'profile.json' },
    '/test/',
    { profileType: 'Localhost', localhostRef: '/test/profile.json' },
  ],
];
for (const [name, field, root, want] of fieldRows) {
  test(`TestFieldProfile: ${name}`, () => {
    if (typeof want === 'string') assert.throws(() => fieldSeccompProfile(field, root, false), { message: want });
    else assert.deepEqual(fieldSeccompProfile(field, root, false), want);
  });
}

test('a Localhost seccomp profile stays below the profile root: ../ is refused, an absolute path is rooted', () => {
  assert.equal(seccompLocalhostRef(ROOT, 'a/b.json'), `${ROOT}/a/b.json`);
  assert.equal(seccompLocalhostRef(ROOT, '/etc/x.json'), `${ROOT}/etc/x.json`, 'as filepath.Join');
  assert.equal(seccompLocalhostRef(ROOT, 'a/../b.json'), `${ROOT}/b.json`);
  for (const escape of ['../x.json', 'a/../../x.json', '..', '.', '../seccomp-other/x.json'])
    assert.throws(
      () => seccompLocalhostRef(ROOT, escape),
      (e: unknown) => e instanceof SecurityProfileError && /must be a descending path below/.test(e.message),
      escape,
    );
});

// helpers_linux_test.go TestGetAppArmorProfile: the pod-level field, new and deprecated forms.
const appArmorRows: Array<[string, Profile | undefined, SecurityProfile | undefined, string | undefined, boolean]> = [
  ['no appArmor', undefined, undefined, undefined, false],
  ['runtime default', { type: 'RuntimeDefault' }, RUNTIME_DEFAULT, 'runtime/default', false],
  ['unconfined', { type: 'Unconfined' }, UNCONFINED, 'unconfined', false],
  [
    'localhost',
    { type: 'Localhost', localhostProfile: 'test' },
    { profileType: 'Localhost', localhostRef: 'test' },
    'localhost/test',
    false,
  ],
  ['invalid localhost', { type: 'Localhost' }, undefined, undefined, true],
  ['invalid type', { type: 'foo' }, undefined, undefined, true],
];
for (const [name, podProfile, want, wantOld, error] of appArmorRows) {
  test(`TestGetAppArmorProfile: ${name}`, () => {
    const container = { name: 'foo', image: 'busybox' } as Container;
    const pod = {
      metadata: { name: 'bar' },
      spec: { containers: [container], securityContext: { appArmorProfile: podProfile } },
    } as Pod;
    if (error) {
      assert.throws(() => appArmorProfileFor(pod, container), SecurityProfileError);
      return;
    }
    const got = appArmorProfileFor(pod, container);
    assert.deepEqual(got.apparmor, want);
    assert.equal(got.apparmorProfile, wantOld);
  });
}

test('AppArmor (apparmor.GetProfile): container field, then the deprecated annotation, then the pod field', () => {
  const key = 'container.apparmor.security.beta.kubernetes.io/c';
  const make = (annotation: string | undefined, own?: Profile): { pod: Pod; container: Container } => {
    const container = {
      name: 'c',
      image: 'busybox',
      ...(own ? { securityContext: { appArmorProfile: own } } : {}),
    } as Container;
    const pod = {
      metadata: { name: 'p', ...(annotation !== undefined ? { annotations: { [key]: annotation } } : {}) },
      spec: { containers: [container], securityContext: { appArmorProfile: { type: 'Unconfined' } } },
    } as Pod;
    return { pod, container };
  };
  const of = (a: string | undefined, own?: Profile) => {
    const { pod, container } = make(a, own);
    return appArmorProfileFor(pod, container).apparmor;
  };
  assert.deepEqual(of('runtime/default'), RUNTIME_DEFAULT);
  assert.deepEqual(of('localhost/k8s-nginx'), { profileType: 'Localhost', localhostRef: 'k8s-nginx' });
  assert.deepEqual(of('unconfined'), UNCONFINED);
  assert.deepEqual(of('bogus'), UNCONFINED, 'an invalid annotation is none: the pod field applies');
  assert.deepEqual(of(undefined), UNCONFINED, 'the pod field');
  assert.deepEqual(of('runtime/default', { type: 'Unconfined' }), UNCONFINED, 'the container field wins');
});

test('the sandbox always runs the RuntimeDefault seccomp profile, whatever the pod asks', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      securityContext: { seccompProfile: { type: 'Unconfined' } },
    },
  } as Pod;
  const cfg = generatePodSandboxConfig({
    pod,
    attempt: 0,
    podLogsDir: '/l',
    clusterDomain: '',
    dns: { servers: [], searches: [], options: [] },
  });
  assert.deepEqual(cfg.linux.securityContext.seccomp, RUNTIME_DEFAULT);
});
