// Pod sysctls at admission (upstream pkg/kubelet/sysctl: TestNewAllowlist, TestAllowlist and the
// SafeSysctlAllowlist kernel versions) and in the sandbox config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { admitSysctls } from '../../src/kubelet/sysctls.js';
import { podSysctls, sysctlDotted } from '../../src/util/sysctl.js';

const pod = (sysctls: { name: string; value: string }[], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [{ name: 'c', image: 'x' }], securityContext: { sysctls }, ...extra },
  }) as Pod;

const KERNEL: [number, number] = [6, 8];

test('safe sysctls are admitted; none at all is admitted', () => {
  assert.deepEqual(admitSysctls(pod([]), KERNEL), { admit: true });
  assert.deepEqual(
    admitSysctls(
      pod([
        { name: 'kernel.shm_rmid_forced', value: '1' },
        { name: 'net.ipv4.ip_local_port_range', value: '1024 65535' },
        { name: 'net/ipv4/ip_unprivileged_port_start', value: '0' },
      ]),
      KERNEL,
    ),
    { admit: true },
  );
});

const cases: [string, { name: string; value: string }[], Partial<NonNullable<Pod['spec']>>, string][] = [
  [
    'an unsafe sysctl',
    [{ name: 'kernel.msgmax', value: '1' }],
    {},
    'forbidden sysctl: "kernel.msgmax" not allowlisted',
  ],
  [
    'a net sysctl with hostNetwork',
    [{ name: 'net.ipv4.tcp_syncookies', value: '1' }],
    { hostNetwork: true },
    'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled',
  ],
  [
    'a kernel.shm sysctl with hostIPC',
    [{ name: 'kernel.shm_rmid_forced', value: '1' }],
    { hostIPC: true },
    'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled',
  ],
];
for (const [what, sysctls, extra, message] of cases) {
  test(`SysctlForbidden: ${what}`, () => {
    assert.deepEqual(admitSysctls(pod(sysctls, extra), KERNEL), { admit: false, reason: 'SysctlForbidden', message });
  });
}

test('a safe sysctl the running kernel does not namespace yet is not allowlisted', () => {
  const p = pod([{ name: 'net.ipv4.tcp_rmem', value: '4096 87380 6291456' }]);
  assert.equal(admitSysctls(p, [4, 14]).admit, false);
  assert.equal(admitSysctls(p, [4, 15]).admit, true);
  assert.equal(admitSysctls(p, [5, 0]).admit, true);
});

test("ConvertSysctlVariableToDotsSeparator: '/' names swap separators; dotted names stay", () => {
  assert.equal(sysctlDotted('net/ipv4/ip_forward'), 'net.ipv4.ip_forward');
  assert.equal(sysctlDotted('net/ipv4/conf/eno2.100/rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  assert.equal(sysctlDotted('net.ipv4.conf.eno2/100.rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  assert.deepEqual(podSysctls([{ name: 'net/ipv4/tcp_syncookies', value: '1' }]), { 'net.ipv4.tcp_syncookies': '1' });
  assert.deepEqual(podSysctls(undefined), {});
});
