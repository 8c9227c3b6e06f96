// The CRI security context of containers and sandboxes, with upstream's test cases as the spec:
// pkg/securitycontext/util_test.go (TestDetermineEffectiveSecurityContext,
// Test_securityContextFromPodSecurityContext, TestDetermineEffectiveRunAsUser,
// TestConvertToRuntimeMaskedPaths, TestConvertToRuntimeReadonlyPaths), kuberuntime
// kuberuntime_container_linux_test.go (TestGenerateLinuxConfigSupplementalGroupsPolicy) and
// kuberuntime_sandbox_linux_test.go / kuberuntime_sandbox_test.go
// (TestGeneratePodSandboxLinuxConfigSupplementalGroupsPolicy,
// TestGeneratePodSandboxConfigWithLinuxSecurityContext, TestGeneratePodSandboxConfig), plus ours
// for what upstream tests elsewhere (the image user, the groups' order, the thermal paths).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { ContainerConfigError, generateContainerConfig } from '../../src/kuberuntime/container-config.js';
import { generatePodSandboxConfig } from '../../src/kuberuntime/sandbox-config.js';
import {
  BASE_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  containerIdentity,
  defaultMaskedPaths,
  effectiveSecurityContext,
  maskedPathsFor,
  parsePossibleCPUs,
  readonlyPathsFor,
} from '../../src/kuberuntime/security-context.js';
import { KubeletError } from '../../src/errors.js';
import { configInput } from './helpers.js';

type PodSc = NonNullable<Pod['spec']>['securityContext'];
type Sc = Container['securityContext'];

const pod = (podSc: PodSc | undefined, sc?: Sc, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  ({
    metadata: { name: 'bar', namespace: 'new', uid: '12345678' },
    spec: {
      containers: [{ name: 'foo', image: 'busybox', ...(sc !== undefined ? { securityContext: sc } : {}) }],
      ...(podSc !== undefined ? { securityContext: podSc } : {}),
      ...extra,
    },
  }) as Pod;
const first = (p: Pod): Container => p.spec!.containers[0]!;

describe('TestDetermineEffectiveSecurityContext (pkg/securitycontext)', () => {
  const podWin = { gmsaCredentialSpecName: 'pod gmsa spec name', gmsaCredentialSpec: 'pod credential spec' };
  const podWindows = { ...podWin, runAsUserName: 'pod username', hostProcess: true };
  const ctrWindows = {
    gmsaCredentialSpecName: 'container gmsa spec name',
    gmsaCredentialSpec: 'container credential spec',
    runAsUserName: 'container username',
    hostProcess: true,
  };
  const podAll = {
    seLinuxOptions: { user: 'foo' },
    windowsOptions: podWindows,
    runAsUser: 1001,
    runAsGroup: 1001,
    runAsNonRoot: true,
  };
  const ctrHardening = {
    privileged: false,
    readOnlyRootFilesystem: false,
    allowPrivilegeEscalation: true,
    procMount: 'Default',
  };
  const ctrAll = {
    seLinuxOptions: { user: 'bar' },
    windowsOptions: ctrWindows,
    runAsUser: 1,
    runAsGroup: 1,
    runAsNonRoot: false,
    capabilities: { add: ['SYS_CHROOT'] },
    ...ctrHardening,
  };
  const rows: Array<[string, PodSc | undefined, Sc | undefined, Sc]> = [
    ["pod and container's SecurityContext are empty", undefined, undefined, {}],
    [
      "pod's SecurityContext is not empty and container's SecurityContext is empty",
      { seLinuxOptions: { user: 'foo' } },
      undefined,
      { seLinuxOptions: { user: 'foo' } },
    ],
    [
      "pod's SecurityContext is empty and container's SecurityContext is not empty",
      undefined,
      { runAsUser: 1001, runAsGroup: 1001 },
      { runAsUser: 1001, runAsGroup: 1001 },
    ],
    ['merge SecurityContexts for all values', podAll, ctrAll, ctrAll],
    [
      'merge SecurityContexts for part of values',
      podAll,
      { windowsOptions: ctrWindows, ...ctrHardening },
      {
        seLinuxOptions: { user: 'foo' },
        windowsOptions: ctrWindows,
        runAsUser: 1001,
        runAsGroup: 1001,
        runAsNonRoot: true,
        ...ctrHardening,
      },
    ],
    [
      'WindowsOptions values',
      { windowsOptions: podWindows },
      { windowsOptions: { gmsaCredentialSpec: 'container credential spec', runAsUserName: 'c', hostProcess: true } },
      { windowsOptions: { gmsaCredentialSpec: 'container credential spec', runAsUserName: 'c', hostProcess: true } },
    ],
  ];
  for (const [name, podSc, sc, want] of rows)
    it(name, () => {
      const p = pod(podSc, sc);
      assert.deepEqual(effectiveSecurityContext(p, first(p)), want);
    });

  it('Test_securityContextFromPodSecurityContext: the pod fields a container inherits', () => {
    const p = pod({ ...podAll, fsGroup: 5, supplementalGroups: [6], sysctls: [] });
    assert.deepEqual(effectiveSecurityContext(p, first(p)), podAll);
  });
});

describe('TestDetermineEffectiveRunAsUser (pkg/securitycontext)', () => {
  const rows: Array<[string, PodSc | undefined, Sc | undefined, number | undefined]> = [
    ['no securityContext in pod, no securityContext in container', undefined, undefined, undefined],
    ['no runAsUser in pod, no runAsUser in container', {}, {}, undefined],
    ['runAsUser in pod, no runAsUser in container', { runAsUser: 0 }, {}, 0],
    ['no runAsUser in pod, runAsUser in container', {}, { runAsUser: 0 }, 0],
    ['runAsUser in pod, runAsUser in container', { runAsUser: 0 }, { runAsUser: 1 }, 1],
  ];
  for (const [name, podSc, sc, want] of rows)
    it(name, () => {
      const p = pod(podSc, sc);
      assert.equal(effectiveSecurityContext(p, first(p)).runAsUser, want);
      assert.deepEqual(containerIdentity(p, first(p)).runAsUser, want === undefined ? undefined : { value: want });
    });
});

describe('TestConvertToRuntimeMaskedPaths and TestConvertToRuntimeReadonlyPaths (pkg/securitycontext)', () => {
  for (const [name, procMount] of [
    ['procMount nil', undefined],
    ['procMount default', 'Default'],
  ] as const)
    it(`${name}: the defaults`, () => {
      assert.deepEqual(maskedPathsFor(procMount).slice(0, BASE_MASKED_PATHS.length), BASE_MASKED_PATHS);
      assert.deepEqual(readonlyPathsFor(procMount), DEFAULT_READONLY_PATHS);
    });
  it('procMount unmasked: none', () => {
    assert.deepEqual(maskedPathsFor('Unmasked'), []);
    assert.deepEqual(readonlyPathsFor('Unmasked'), []);
  });
  it("upstream 1.35's lists (moby's: /proc/asound masked, /proc/interrupts and powercap too)", () => {
    assert.deepEqual(BASE_MASKED_PATHS, [
      '/proc/asound',
      '/proc/acpi',
      '/proc/interrupts',
      '/proc/kcore',
      '/proc/keys',
      '/proc/latency_stats',
      '/proc/timer_list',
      '/proc/timer_stats',
      '/proc/sched_debug',
      '/proc/scsi',
      '/sys/firmware',
      '/sys/devices/virtual/powercap',
    ]);
    assert.deepEqual(DEFAULT_READONLY_PATHS, [
      '/proc/bus',
      '/proc/fs',
      '/proc/irq',
      '/proc/sys',
      '/proc/sysrq-trigger',
    ]);
  });
  it('the thermal_throttle directory of each possible CPU that has one (upstream possibleCPUs)', () => {
    assert.deepEqual(parsePossibleCPUs('0-3,5\n'), [0, 1, 2, 3, 5]);
    assert.deepEqual(parsePossibleCPUs('0'), [0]);
    assert.equal(parsePossibleCPUs('zero'), undefined);
    const has = new Set([
      '/sys/devices/system/cpu/cpu0/thermal_throttle',
      '/sys/devices/system/cpu/cpu5/thermal_throttle',
    ]);
    const got = defaultMaskedPaths({ possibleCPUs: () => '0-1,5', exists: (p) => has.has(p) });
    assert.deepEqual(got.slice(BASE_MASKED_PATHS.length), [...has]);
    assert.deepEqual(defaultMaskedPaths({ possibleCPUs: () => undefined, exists: () => true }), BASE_MASKED_PATHS);
  });
});

const containerSc = async (p: Pod, imageUser?: { uid?: bigint; username?: string }) =>
  (await generateContainerConfig(configInput(p, first(p), imageUser && { username: '', ...imageUser }))).linux!
    .securityContext!;

describe('TestGenerateLinuxConfigSupplementalGroupsPolicy (kuberuntime_container_linux_test.go)', () => {
  it('Merge and Strict are passed; unset is the enum zero (Merge)', async () => {
    assert.equal((await containerSc(pod({ supplementalGroupsPolicy: 'Merge' }))).supplementalGroupsPolicy, 'Merge');
    assert.equal((await containerSc(pod({ supplementalGroupsPolicy: 'Strict' }))).supplementalGroupsPolicy, 'Strict');
    assert.equal((await containerSc(pod({}))).supplementalGroupsPolicy, undefined);
  });
  it('an unknown policy is a config error (CreateContainerConfigError)', async () => {
    await assert.rejects(
      containerSc(pod({ supplementalGroupsPolicy: 'UnSupported' })),
      (e) => e instanceof ContainerConfigError && /unsupported supplementalGroupsPolicy: UnSupported/.test(e.message),
    );
  });
});

describe('determineEffectiveSecurityContext: user, groups, SELinux, paths (kuberuntime security_context.go)', () => {
  it("groups: fsGroup, then supplementalGroups; the container's runAsGroup over the pod's", async () => {
    const sc = await containerSc(
      pod({ fsGroup: 2000, supplementalGroups: [3000, 4000], runAsGroup: 10 }, { runAsGroup: 11 }),
    );
    assert.deepEqual(sc.supplementalGroups, [2000, 3000, 4000]);
    assert.deepEqual(sc.runAsGroup, { value: 11 });
  });
  it("the image's user when the spec sets none: a uid, or a name (run_as_username)", async () => {
    assert.deepEqual((await containerSc(pod({}), { uid: 1234n })).runAsUser, { value: 1234 });
    const named = await containerSc(pod({}), { username: 'nobody' });
    assert.equal(named.runAsUser, undefined);
    assert.equal(named.runAsUsername, 'nobody');
    const spec = await containerSc(pod({ runAsUser: 7 }), { username: 'nobody' });
    assert.deepEqual([spec.runAsUser, spec.runAsUsername], [{ value: 7 }, undefined]);
    assert.deepEqual((await containerSc(pod({}, { runAsUser: 8 }), { uid: 0n })).runAsUser, { value: 8 });
  });
  it("SELinux options: the container's replace the pod's whole; every part is sent", async () => {
    const podLabel = { seLinuxOptions: { user: 'u', role: 'r', type: 'spc_t', level: 's0:c1,c2' } };
    assert.deepEqual((await containerSc(pod(podLabel))).selinuxOptions, {
      user: 'u',
      role: 'r',
      type: 'spc_t',
      level: 's0:c1,c2',
    });
    assert.deepEqual((await containerSc(pod(podLabel, { seLinuxOptions: { level: 's0' } }))).selinuxOptions, {
      user: '',
      role: '',
      type: '',
      level: 's0',
    });
    assert.equal((await containerSc(pod({}))).selinuxOptions, undefined);
  });
  it('masked and read-only paths for every container (procMount Default or unset)', async () => {
    const sc = await containerSc(pod({}, { procMount: 'Default' }));
    assert.deepEqual(sc.maskedPaths!.slice(0, BASE_MASKED_PATHS.length), BASE_MASKED_PATHS);
    assert.deepEqual(sc.readonlyPaths, DEFAULT_READONLY_PATHS);
  });
});

const dns = { servers: [], searches: [], options: [] };
const sandboxSc = (p: Pod) =>
  generatePodSandboxConfig({ pod: p, attempt: 0, podLogsDir: '/l', clusterDomain: '', dns }).linux.securityContext;

describe('the sandbox security context (kuberuntime_sandbox.go generatePodSandboxLinuxConfig)', () => {
  it('TestGeneratePodSandboxConfigWithLinuxSecurityContext: SELinux, runAsUser, runAsGroup', () => {
    const sc = sandboxSc(pod({ seLinuxOptions: { user: 'qux' }, runAsUser: 1000, runAsGroup: 10 }));
    assert.deepEqual(sc.selinuxOptions, { user: 'qux', role: '', type: '', level: '' });
    assert.deepEqual(sc.runAsUser, { value: 1000 });
    assert.deepEqual(sc.runAsGroup, { value: 10 });
  });
  it('TestGeneratePodSandboxConfig: not privileged, seccomp RuntimeDefault (#84623), rootfs left writable', () => {
    const sc = sandboxSc(pod(undefined));
    assert.deepEqual(sc, {
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      privileged: false,
      seccomp: { profileType: 'RuntimeDefault' },
    });
  });
  it('privileged when any container is, ephemeral ones too (HasPrivilegedContainer)', () => {
    assert.equal(sandboxSc(pod({}, { privileged: true })).privileged, true);
    const eph = pod(
      {},
      {},
      { ephemeralContainers: [{ name: 'd', image: 'b', securityContext: { privileged: true } }] },
    );
    assert.equal(sandboxSc(eph).privileged, true);
  });
  it('groups: fsGroup then supplementalGroups', () => {
    assert.deepEqual(sandboxSc(pod({ fsGroup: 2000, supplementalGroups: [3000] })).supplementalGroups, [2000, 3000]);
  });
  it('TestGeneratePodSandboxLinuxConfigSupplementalGroupsPolicy', () => {
    const rows: Array<[string, string | undefined, string]> = [
      ['SupplementalGroups=nil should convert to Merge', undefined, 'Merge'],
      ['SupplementalGroups=Merge should convert to Merge', 'Merge', 'Merge'],
      ['SupplementalGroups=Strict should convert to Strict', 'Strict', 'Strict'],
    ];
    for (const [name, policy, want] of rows) {
      const sc = sandboxSc(pod(policy ? { supplementalGroupsPolicy: policy } : {}));
      assert.equal(sc.supplementalGroupsPolicy ?? 'Merge', want, name);
    }
    assert.throws(
      () => sandboxSc(pod({ supplementalGroupsPolicy: 'UnSupported' })),
      (e) =>
        e instanceof KubeletError &&
        e.code === 'KTS_ERR_SANDBOX' &&
        /unsupported supplementalGroupsPolicy: UnSupported/.test(e.message),
    );
  });
});
