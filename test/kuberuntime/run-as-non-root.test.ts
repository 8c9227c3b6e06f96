// runAsNonRoot against the effective user: our table of upstream TestVerifyRunAsNonRoot
// (pkg/kubelet/kuberuntime/security_context_others_test.go) and TestGetImageUser
// (kuberuntime_container_test.go), plus the pod-level and message cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import {
  getImageUser,
  imageUserOf,
  runAsNonRootProblem,
  type ImageUser,
} from '../../src/kuberuntime/run-as-non-root.js';
import type { Image } from '../../src/cri/types.js';

type Sc = Container['securityContext'];
const pod = (sc: Sc, podSc: NonNullable<Pod['spec']>['securityContext'] = undefined): Pod =>
  ({
    metadata: { uid: '12345678', name: 'bar', namespace: 'new' },
    spec: { containers: [{ name: 'foo', image: 'busybox', securityContext: sc }], securityContext: podSc },
  }) as Pod;

const check = (sc: Sc, user: ImageUser, podSc?: NonNullable<Pod['spec']>['securityContext']) => {
  const p = pod(sc, podSc);
  return runAsNonRootProblem(p, p.spec!.containers[0]!, user);
};

const root: ImageUser = { uid: 0n, username: '' };
const any: ImageUser = { uid: 1000n, username: '' };
const unset: ImageUser = { username: '' };
const WHO = '(pod: "bar_new(12345678)", container: foo)';

// desc, securityContext, image user, fails — the rows of TestVerifyRunAsNonRoot.
const rows: [string, Sc, ImageUser, boolean][] = [
  ['Pass if SecurityContext is not set', undefined, root, false],
  ['Pass if RunAsUser is non-root and RunAsNonRoot is true', { runAsNonRoot: true, runAsUser: 1000 }, unset, false],
  ['Pass if RunAsNonRoot is not set', { runAsUser: 0 }, root, false],
  ['Pass if RunAsNonRoot is false (image user is root)', { runAsNonRoot: false }, root, false],
  ['Pass if RunAsNonRoot is false (RunAsUser is root)', { runAsNonRoot: false, runAsUser: 0 }, root, false],
  ["Fail if container's RunAsUser is root and RunAsNonRoot is true", { runAsNonRoot: true, runAsUser: 0 }, root, true],
  ["Fail if image's user is root and RunAsNonRoot is true", { runAsNonRoot: true }, root, true],
  ["Fail if image's username is set and RunAsNonRoot is true", { runAsNonRoot: true }, { username: 'test' }, true],
  ["Pass if image's user is non-root and RunAsNonRoot is true", { runAsNonRoot: true }, any, false],
  [
    "Pass if container's user and image's user aren't set and RunAsNonRoot is true",
    { runAsNonRoot: true },
    unset,
    false,
  ],
  [
    "Fail if image's user is invalid and RunAsNonRoot is true",
    { runAsNonRoot: true },
    { uid: 2147483648n, username: '' },
    true,
  ],
  [
    "Fail if image's user is negative and RunAsNonRoot is true",
    { runAsNonRoot: true },
    { uid: -1000n, username: '' },
    true,
  ],
  [
    "Pass if image's user is math.MaxInt32 and RunAsNonRoot is true",
    { runAsNonRoot: true },
    { uid: 2147483647n, username: '' },
    false,
  ],
];
for (const [desc, sc, user, fails] of rows) {
  test(`TestVerifyRunAsNonRoot: ${desc}`, () => {
    assert.equal(check(sc, user) !== undefined, fails, check(sc, user));
  });
}

test("upstream's messages, word for word", () => {
  assert.equal(check({ runAsNonRoot: true, runAsUser: 0 }, any), `container's runAsUser breaks non-root policy ${WHO}`);
  assert.equal(check({ runAsNonRoot: true }, root), `container has runAsNonRoot and image will run as root ${WHO}`);
  assert.equal(
    check({ runAsNonRoot: true }, { username: 'nobody' }),
    `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root ${WHO}`,
  );
  assert.equal(
    check({ runAsNonRoot: true }, { uid: -1000n, username: '' }),
    `container has runAsNonRoot and image has an invalid user id (-1000). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${WHO}`,
  );
});

test('the effective security context: the container over the pod (DetermineEffectiveSecurityContext)', () => {
  assert.match(check(undefined, root, { runAsNonRoot: true })!, /image will run as root/, "the pod's runAsNonRoot");
  assert.equal(check(undefined, root, { runAsNonRoot: true, runAsUser: 1000 }), undefined, "the pod's runAsUser");
  assert.match(check({ runAsUser: 0 }, any, { runAsNonRoot: true, runAsUser: 1000 })!, /runAsUser breaks/);
  assert.equal(check({ runAsNonRoot: false }, root, { runAsNonRoot: true }), undefined, 'the container opts out');
  assert.equal(check({ runAsUser: 5 }, { username: 'nobody' }, { runAsNonRoot: true }), undefined, 'a uid is set');
});

// TestGetImageUser: the ImageStatus answer → (uid, username); only one is ever set.
const imageRows: [string, Partial<Image> | undefined, ImageUser][] = [
  ['image without username and uid: uid 0', {}, root],
  ['image with username and no uid: the username', { username: 'testUser' }, { username: 'testUser' }],
  ['image with uid: the uid, no username', { uid: 2n, username: 'whatever' }, { uid: 2n, username: '' }],
  ['no image in the answer: uid 0', undefined, root],
];
for (const [desc, image, want] of imageRows) {
  test(`TestGetImageUser: ${desc}`, async () => {
    assert.deepEqual(imageUserOf(image), want);
    const images = { imageStatus: (name: string) => Promise.resolve(name === 'img' ? (image as Image) : undefined) };
    assert.deepEqual(await getImageUser(images, 'img'), want);
  });
}

test('an ImageStatus error is passed on (CreateContainerConfigError upstream)', async () => {
  const images = { imageStatus: () => Promise.reject(new Error('rpc error: image service down')) };
  await assert.rejects(getImageUser(images, 'img'), /image service down/);
});
