// The security context a container gets from the runtime (upstream
// determineEffectiveSecurityContext; cases after TestDetermineEffectiveSecurityContext and
// TestAddNoNewPrivileges in pkg/kubelet/kuberuntime and pkg/securitycontext).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { generateContainerConfig } from '../../src/kuberuntime/container-config.js';
import type { ImageUser } from '../../src/kuberuntime/run-as-non-root.js';
import { configInput } from './helpers.js';

/** An image that names no user runs as root: upstream getImageUser gives uid 0. */
const ROOT_IMAGE: ImageUser = { uid: 0n, username: '' };

async function securityOf(
  container: Partial<Container>,
  podSc: NonNullable<Pod['spec']>['securityContext'] = {},
  imageUser = ROOT_IMAGE,
) {
  const c = { name: 'c', image: 'busybox', ...container } as Container;
  const pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [c], securityContext: podSc },
  } as Pod;
  const cfg = await generateContainerConfig(configInput(pod, c, imageUser));
  return cfg.linux!.securityContext!;
}

test('nothing set: writable rootfs, privilege escalation allowed, seccomp Unconfined, no capabilities', async () => {
  const sc = await securityOf({});
  assert.equal(sc.readonlyRootfs, false);
  assert.equal(sc.noNewPrivs, false);
  assert.deepEqual(sc.seccomp, { profileType: 'Unconfined' });
  assert.equal(sc.capabilities, undefined);
});

test('capabilities are passed as given; readOnlyRootFilesystem sets readonly_rootfs', async () => {
  const sc = await securityOf({
    securityContext: { capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] }, readOnlyRootFilesystem: true },
  });
  assert.deepEqual(sc.capabilities, { addCapabilities: ['NET_BIND_SERVICE'], dropCapabilities: ['ALL'] });
  assert.equal(sc.readonlyRootfs, true);
});

test('AddNoNewPrivileges: only allowPrivilegeEscalation false on a container that is not privileged', async () => {
  const cases: [Container['securityContext'], boolean][] = [
    [{}, false],
    [{ allowPrivilegeEscalation: true }, false],
    [{ allowPrivilegeEscalation: false }, true],
    [{ allowPrivilegeEscalation: false, privileged: true }, false],
  ];
  for (const [securityContext, want] of cases)
    assert.equal((await securityOf({ securityContext })).noNewPrivs, want, JSON.stringify(securityContext));
});

type Sc = Container['securityContext'];
const profileCases: [string, Sc, NonNullable<Pod['spec']>['securityContext'], string, string | undefined][] = [
  ['nothing set', {}, {}, 'Unconfined', undefined],
  [
    'the pod profiles',
    {},
    { seccompProfile: { type: 'RuntimeDefault' }, appArmorProfile: { type: 'Unconfined' } },
    'RuntimeDefault',
    'Unconfined',
  ],
  [
    'the container profiles over the pod ones',
    { seccompProfile: { type: 'Unconfined' }, appArmorProfile: { type: 'RuntimeDefault' } },
    { seccompProfile: { type: 'RuntimeDefault' }, appArmorProfile: { type: 'Unconfined' } },
    'Unconfined',
    'RuntimeDefault',
  ],
];
for (const [what, own, podSc, seccomp, apparmor] of profileCases) {
  test(`seccomp and AppArmor profiles: ${what}`, async () => {
    const sc = await securityOf({ securityContext: own }, podSc);
    assert.deepEqual(sc.seccomp, { profileType: seccomp });
    assert.deepEqual(sc.apparmor, apparmor && { profileType: apparmor });
  });
}

test('stdin, stdinOnce and tty are passed to the runtime', async () => {
  const c = { name: 'c', image: 'busybox', stdin: true, stdinOnce: true, tty: true } as Container;
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [c] } } as Pod;
  const cfg = await generateContainerConfig(configInput(pod, c));
  assert.deepEqual([cfg.stdin, cfg.stdinOnce, cfg.tty], [true, true, true]);
});

test("verifyRunAsNonRoot fails the config with upstream's message (the table: run-as-non-root.test.ts)", async () => {
  await assert.rejects(
    securityOf({ securityContext: { runAsNonRoot: true, runAsUser: 0 } }),
    /container's runAsUser breaks non-root policy \(pod: "p_ns\(u\)", container: c\)$/,
  );
  await assert.rejects(
    securityOf({}, { runAsNonRoot: true }),
    /container has runAsNonRoot and image will run as root \(pod: "p_ns\(u\)", container: c\)/,
  );
});

// upstream determineEffectiveSecurityContext: with no runAsUser, RunAsUser is the image's uid and
// RunAsUsername its user name (getImageUser sets only one of them).
const userCases: [string, Partial<Container>, ImageUser, number | undefined, string | undefined][] = [
  ['an image without a user runs as uid 0', {}, ROOT_IMAGE, 0, undefined],
  ["the image's uid", {}, { uid: 1000n, username: '' }, 1000, undefined],
  ["the image's user name", {}, { username: 'nobody' }, undefined, 'nobody'],
  ['runAsUser over the image uid', { securityContext: { runAsUser: 7 } }, { uid: 1000n, username: '' }, 7, undefined],
  ['runAsUser over the image name', { securityContext: { runAsUser: 7 } }, { username: 'nobody' }, 7, undefined],
];
for (const [what, c, image, uid, name] of userCases) {
  test(`run_as_user and run_as_username: ${what}`, async () => {
    const sc = await securityOf(c, {}, image);
    assert.deepEqual(sc.runAsUser, uid === undefined ? undefined : { value: uid });
    assert.equal(sc.runAsUsername, name);
  });
}
