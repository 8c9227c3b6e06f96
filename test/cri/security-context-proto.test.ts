// Our api.proto against upstream cri-api v1 (staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto):
// every field of the security context messages, the ContainerUser status and the
// SupplementalGroupsPolicy enum, by name and number, so that what we send is what a runtime reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packageDefinition } from '../../src/cri/proto.js';
import { containerStatusFromWire } from '../../src/cri/convert.js';

/** upstream's numbers, message by message (wire names in proto-loader's camelCase). */
const UPSTREAM: Record<string, Record<string, number>> = {
  LinuxSandboxSecurityContext: {
    namespaceOptions: 1,
    selinuxOptions: 2,
    runAsUser: 3,
    readonlyRootfs: 4,
    supplementalGroups: 5,
    privileged: 6,
    seccompProfilePath: 7,
    runAsGroup: 8,
    seccomp: 9,
    apparmor: 10,
    supplementalGroupsPolicy: 11,
  },
  LinuxContainerSecurityContext: {
    capabilities: 1,
    privileged: 2,
    namespaceOptions: 3,
    selinuxOptions: 4,
    runAsUser: 5,
    runAsUsername: 6,
    readonlyRootfs: 7,
    supplementalGroups: 8,
    apparmorProfile: 9,
    seccompProfilePath: 10,
    noNewPrivs: 11,
    runAsGroup: 12,
    maskedPaths: 13,
    readonlyPaths: 14,
    seccomp: 15,
    apparmor: 16,
    supplementalGroupsPolicy: 17,
  },
  SELinuxOption: { user: 1, role: 2, type: 3, level: 4 },
  Capability: { addCapabilities: 1, dropCapabilities: 2, addAmbientCapabilities: 3 },
  SecurityProfile: { profileType: 1, localhostRef: 2 },
  ContainerUser: { linux: 1 },
  LinuxContainerUser: { uid: 1, gid: 2, supplementalGroups: 3 },
};

type Field = { name: string; number: number; options: { deprecated?: boolean } | null };

for (const [message, fields] of Object.entries(UPSTREAM)) {
  test(`runtime.v1.${message}: every upstream field, by number`, () => {
    const def = packageDefinition()[`runtime.v1.${message}`] as unknown as { type: { field: Field[] } };
    const ours = Object.fromEntries(def.type.field.map((f) => [f.name, f.number]));
    assert.deepEqual(ours, fields);
  });
}

test('the deprecated string profiles stay deprecated; ContainerStatus.user is field 18', () => {
  const fieldsOf = (m: string) =>
    (packageDefinition()[`runtime.v1.${m}`] as unknown as { type: { field: Field[] } }).type.field;
  const deprecated = (m: string) =>
    fieldsOf(m)
      .filter((f) => f.options?.deprecated)
      .map((f) => f.name);
  assert.deepEqual(deprecated('LinuxSandboxSecurityContext'), ['seccompProfilePath']);
  assert.deepEqual(deprecated('LinuxContainerSecurityContext'), ['apparmorProfile', 'seccompProfilePath']);
  assert.equal(fieldsOf('ContainerStatus').find((f) => f.name === 'user')?.number, 18);
  const policy = packageDefinition()['runtime.v1.SupplementalGroupsPolicy'] as unknown as {
    type: { value: { name: string; number: number }[] };
  };
  assert.deepEqual(
    policy.type.value.map((v) => [v.name, v.number]),
    [
      ['Merge', 0],
      ['Strict', 1],
    ],
  );
});

test('ContainerStatus.user from the wire: int64 ids as numbers; absent from runtimes without it', () => {
  const base = { id: 'c', metadata: { name: 'a' }, state: 'CONTAINER_RUNNING', labels: {}, annotations: {} };
  const st = containerStatusFromWire({
    ...base,
    user: { linux: { uid: '1000', gid: '3000', supplementalGroups: ['3000', '4000'] } },
  });
  assert.deepEqual(st.user, { linux: { uid: 1000, gid: 3000, supplementalGroups: [3000, 4000] } });
  assert.equal(containerStatusFromWire({ ...base, user: null }).user, undefined);
  assert.deepEqual(containerStatusFromWire({ ...base, user: { linux: null } }).user, {});
});
