// Pod sysctls at admission and in the sandbox config: our tables of upstream pkg/kubelet/sysctl
// TestNewAllowlist and TestAllowlist (allowlist_test.go), Test_getSafeSysctlAllowlist
// (safe_sysctls_test.go), component-helpers TestNamespacedBy (namespace_test.go) and
// TestConvertSysctlVariableToDotsSeparator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { admitSysctls, kernelVersion, nodeSysctlAllowlist, safeSysctlAllowlist } from '../../src/kubelet/sysctls.js';
import {
  namespacedBy,
  newSysctlAllowlist,
  podSysctls,
  sysctlDotted,
  sysctlForbidden,
  sysctlPatternProblem,
} from '../../src/util/sysctl.js';
import { ConfigError } from '../../src/errors.js';

const pod = (sysctls: { name: string; value: string }[], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [{ name: 'c', image: 'x' }], securityContext: { sysctls }, ...extra },
  }) as Pod;

const KERNEL: [number, number] = [6, 8];
const SAFE = safeSysctlAllowlist(KERNEL);

test('TestNamespacedBy', () => {
  const rows: [string, string][] = [
    ['kernel.shm_rmid_forced', 'ipc'],
    ['net.a.b.c', 'net'],
    ['fs.mqueue.a.b.c', 'ipc'],
    ['foo', ''],
    ['kernel.sem', 'ipc'],
    ['kernel.msgmax', 'ipc'],
    ['kernel.semx', ''],
  ];
  for (const [name, ns] of rows) assert.equal(namespacedBy(name), ns, name);
});

// TestNewAllowlist: the safe set plus these; err: NewAllowlist fails.
const newRows: [string[], boolean][] = [
  [['kernel.msg*', 'kernel.sem'], false],
  [['kernel/msg*', 'kernel/sem'], false],
  [[' kernel.msg*'], true],
  [['kernel.msg* '], true],
  [['net.-'], true],
  [['net.*.foo'], true],
  [['net.*/foo'], true],
  [['foo'], true],
  [['foo*'], true],
];
for (const [sysctls, err] of newRows) {
  test(`TestNewAllowlist: ${JSON.stringify(sysctls)} ${err ? 'is refused' : 'is accepted'}`, () => {
    const make = () => newSysctlAllowlist([...SAFE, ...sysctls]);
    if (err) assert.throws(make, ConfigError);
    else make();
  });
}

test("NewAllowlist's messages, word for word", () => {
  assert.equal(
    sysctlPatternProblem('net.-'),
    'sysctl "net.-" must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]',
  );
  assert.equal(sysctlPatternProblem('foo'), 'the sysctl "foo" are not known to be namespaced');
  assert.equal(sysctlPatternProblem('vm/swap*'), 'the sysctls "vm.swap*" are not known to be namespaced');
  assert.match(sysctlPatternProblem(`net.${'a'.repeat(250)}`)!, /must have at most 253 characters/);
});

// TestAllowlist: the safe set plus kernel.msg*, kernel.sem and net.b.*.
const list = newSysctlAllowlist([...SAFE, 'kernel.msg*', 'kernel.sem', 'net.b.*']);
type Row = [string, { hostNet?: boolean; hostIPC?: boolean }];
const valid: Row[] = [
  ['kernel.shm_rmid_forced', {}],
  ['kernel/shm_rmid_forced', {}],
  ['net.ipv4.ip_local_port_range', {}],
  ['kernel.msgmax', {}],
  ['kernel.sem', {}],
  ['kernel/sem', {}],
];
const invalid: Row[] = [
  ['kernel.shm_rmid_forced', { hostIPC: true }],
  ['net.ipv4.ip_local_port_range', { hostNet: true }],
  ['foo', {}],
  ['net.a.b.c', {}],
  ['net.ipv4.ip_local_port_range.a.b.c', {}],
  ['kernel.msgmax', { hostIPC: true }],
  ['kernel.sem', { hostIPC: true }],
  ['net.b.c', { hostNet: true }],
];
for (const [rows, admit] of [
  [valid, true],
  [invalid, false],
] as const) {
  for (const [name, host] of rows) {
    test(`TestAllowlist: ${name} ${JSON.stringify(host)} is ${admit ? 'allowlisted' : 'rejected'}`, () => {
      const why = sysctlForbidden(list, name, { net: host.hostNet === true, ipc: host.hostIPC === true });
      assert.equal(why === undefined, admit, why);
      const p = pod([{ name, value: name }], { hostNetwork: host.hostNet === true, hostIPC: host.hostIPC === true });
      assert.equal(admitSysctls(p, list).admit, admit);
    });
  }
}

test('TestAllowlist: a pod with no sysctls is admitted', () => {
  assert.deepEqual(admitSysctls(pod([]), list), { admit: true });
  assert.deepEqual(admitSysctls({ metadata: { name: 'p' }, spec: { containers: [] } } as Pod, list), { admit: true });
});

const cases: [string, { name: string; value: string }[], Partial<NonNullable<Pod['spec']>>, string][] = [
  ['an unsafe sysctl not allowed', [{ name: 'kernel.msgmax', value: '1' }], {}, '"kernel.msgmax" not allowlisted'],
  [
    'a net sysctl with hostNetwork',
    [{ name: 'net.ipv4.tcp_syncookies', value: '1' }],
    { hostNetwork: true },
    '"net.ipv4.tcp_syncookies" not allowed with host net enabled',
  ],
  [
    'a kernel.shm sysctl with hostIPC',
    [{ name: 'kernel.shm_rmid_forced', value: '1' }],
    { hostIPC: true },
    '"kernel.shm_rmid_forced" not allowed with host ipc enabled',
  ],
  [
    'an allowed unsafe fs.mqueue sysctl with hostIPC',
    [{ name: 'fs/mqueue/msg_max', value: '1' }],
    { hostIPC: true },
    '"fs.mqueue.msg_max" not allowed with host ipc enabled',
  ],
];
for (const [what, sysctls, extra, why] of cases) {
  test(`SysctlForbidden with upstream's message: ${what}`, () => {
    const allow = nodeSysctlAllowlist(['fs.mqueue.*'], KERNEL);
    assert.deepEqual(admitSysctls(pod(sysctls, extra), allow), {
      admit: false,
      reason: 'SysctlForbidden',
      message: `forbidden sysctl: ${why}`,
    });
  });
}

test('allowedUnsafeSysctls: an allowed name or prefix is admitted, in dotted or slashed form', () => {
  const allow = nodeSysctlAllowlist(['net.ipv4.ip_forward', 'kernel/msg*'], KERNEL);
  const p = pod([
    { name: 'net/ipv4/ip_forward', value: '1' },
    { name: 'kernel.msgmax', value: '65536' },
  ]);
  assert.deepEqual(admitSysctls(p, allow), { admit: true });
  assert.equal(admitSysctls(p).admit, false, 'not without the allowlist');
});

// Test_getSafeSysctlAllowlist: the kernel version gates the newer safe sysctls.
const BASE = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const safeRows: [string, [number, number] | undefined, string[]][] = [
  ['failed to get kernelVersion: only those with no kernel version limit', undefined, BASE],
  [
    '3.18.0: and net.ipv4.ip_local_reserved_ports',
    kernelVersion('3.18.0-957.27.2.el7.x86_64'),
    [...BASE, 'net.ipv4.ip_local_reserved_ports'],
  ],
  [
    '5.15.0: every one',
    kernelVersion('5.15.0-75-generic'),
    [
      ...BASE,
      'net.ipv4.ip_local_reserved_ports',
      'net.ipv4.tcp_keepalive_time',
      'net.ipv4.tcp_fin_timeout',
      'net.ipv4.tcp_keepalive_intvl',
      'net.ipv4.tcp_keepalive_probes',
      'net.ipv4.tcp_rmem',
      'net.ipv4.tcp_wmem',
    ],
  ],
];
for (const [what, kernel, want] of safeRows) {
  test(`Test_getSafeSysctlAllowlist: ${what}`, () => assert.deepEqual(safeSysctlAllowlist(kernel), want));
}

test('a safe sysctl the running kernel does not namespace yet is not allowlisted', () => {
  const p = pod([{ name: 'net.ipv4.tcp_rmem', value: '4096 87380 6291456' }]);
  assert.equal(admitSysctls(p, nodeSysctlAllowlist([], [4, 14])).admit, false);
  assert.equal(admitSysctls(p, nodeSysctlAllowlist([], [4, 15])).admit, true);
  assert.equal(admitSysctls(p, nodeSysctlAllowlist([], [5, 0])).admit, true);
});

test("ConvertSysctlVariableToDotsSeparator: '/' names swap separators; dotted names stay", () => {
  assert.equal(sysctlDotted('net/ipv4/ip_forward'), 'net.ipv4.ip_forward');
  assert.equal(sysctlDotted('net/ipv4/conf/eno2.100/rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  assert.equal(sysctlDotted('net.ipv4.conf.eno2/100.rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  assert.deepEqual(podSysctls([{ name: 'net/ipv4/tcp_syncookies', value: '1' }]), { 'net.ipv4.tcp_syncookies': '1' });
  assert.deepEqual(podSysctls(undefined), {});
});
