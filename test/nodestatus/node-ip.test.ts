/**
 * The node's IPs, case by case as upstream's tables:
 * - TestParseNodeIPArgument (component-helpers/node/util/ips_test.go): every row against the
 *   three configurations upstream runs it with (no cloud provider, "external", "gce");
 * - TestNodeAddress and TestNodeAddress_NoCloudProvider (pkg/kubelet/nodestatus/setters_test.go):
 *   the rows without a cloud provider (cloud providers are refused by our configuration);
 * - validateNodeIP (pkg/kubelet/kubelet_node_status.go).
 * Rows marked `ours` differ on purpose (docs/differences.md): an entry that is not an IP is
 * refused by the flag parser, and a loopback node IP is accepted.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  detectHostIP,
  hostIPsOf,
  parseIPSloppy,
  parseNodeIPArgument,
  resolveNodeIPs,
  validateNodeIP,
} from '../../src/node/node-ip.js';
import { nodeAddresses } from '../../src/nodestatus/node-object.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';

type ParseRow = { desc: string; in: string; out?: string[]; invalids?: string[]; err?: string; ssErr?: string };

// upstream TestParseNodeIPArgument, row for row.
const PARSE_ROWS: ParseRow[] = [
  { desc: 'empty --node-ip', in: '' },
  { desc: 'just whitespace (ignored)', in: ' ', invalids: [''] },
  { desc: 'garbage (ignored)', in: 'blah', invalids: ['blah'] },
  { desc: 'single IPv4', in: '1.2.3.4', out: ['1.2.3.4'] },
  { desc: 'single IPv4 with whitespace', in: ' 1.2.3.4   ', out: ['1.2.3.4'] },
  { desc: 'single IPv4 non-canonical', in: '01.2.3.004', out: ['1.2.3.4'] },
  { desc: 'single IPv4 invalid (ignored)', in: '1.2.3', invalids: ['1.2.3'] },
  { desc: 'single IPv4 CIDR (ignored)', in: '1.2.3.0/24', invalids: ['1.2.3.0/24'] },
  { desc: 'single IPv4 unspecified', in: '0.0.0.0', out: ['0.0.0.0'] },
  {
    desc: 'single IPv4 plus ignored garbage',
    in: '1.2.3.4,not-an-IPv6-address',
    out: ['1.2.3.4'],
    invalids: ['not-an-IPv6-address'],
  },
  { desc: 'single IPv6', in: 'abcd::ef01', out: ['abcd::ef01'] },
  { desc: 'single IPv6 non-canonical', in: 'abcd:0abc:00ab:0000:0000::1', out: ['abcd:abc:ab::1'] },
  {
    desc: 'simple dual-stack',
    in: '1.2.3.4,abcd::ef01',
    out: ['1.2.3.4', 'abcd::ef01'],
    ssErr: 'not supported in this configuration',
  },
  {
    desc: 'dual-stack with whitespace',
    in: 'abcd::ef01 , 1.2.3.4',
    out: ['abcd::ef01', '1.2.3.4'],
    ssErr: 'not supported in this configuration',
  },
  { desc: 'double IPv4', in: '1.2.3.4,5.6.7.8', err: 'either a single IP or a dual-stack pair of IPs' },
  { desc: 'double IPv6', in: 'abcd::1,abcd::2', err: 'either a single IP or a dual-stack pair of IPs' },
  {
    desc: 'dual-stack with unspecified',
    in: '1.2.3.4,::',
    err: "cannot include '0.0.0.0' or '::'",
    ssErr: 'not supported in this configuration',
  },
  {
    desc: 'dual-stack with unspecified (IPv4)',
    in: '0.0.0.0,abcd::1',
    err: "cannot include '0.0.0.0' or '::'",
    ssErr: 'not supported in this configuration',
  },
  {
    desc: 'dual-stack plus ignored garbage',
    in: 'abcd::ef01 , 1.2.3.4, something else',
    out: ['abcd::ef01', '1.2.3.4'],
    invalids: ['something else'],
    ssErr: 'not supported in this configuration',
  },
  { desc: 'triple stack!', in: '1.2.3.4,abcd::1,5.6.7.8', err: 'either a single IP or a dual-stack pair of IPs' },
];

const CONFIGURATIONS = [
  { cloudProvider: '', dualStackSupported: true },
  { cloudProvider: 'external', dualStackSupported: true },
  { cloudProvider: 'gce', dualStackSupported: false },
];

describe('upstream TestParseNodeIPArgument', () => {
  for (const row of PARSE_ROWS) {
    for (const conf of CONFIGURATIONS) {
      it(`${row.desc}, cloudProvider="${conf.cloudProvider}"`, () => {
        const got = parseNodeIPArgument(row.in, conf.cloudProvider);
        let out = row.out ?? [];
        let err = row.err;
        if (!conf.dualStackSupported) {
          if (out.length === 2) out = [];
          if (row.ssErr) err = row.ssErr;
        }
        assert.deepEqual(got.ips, err ? [] : out);
        assert.deepEqual(got.invalid, row.invalids ?? []);
        if (err) assert.match(got.error ?? '', new RegExp(err.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
        else assert.equal(got.error, undefined);
      });
    }
  }
});

describe('--node-ip on the command line (ours: an entry that is not an IP is refused)', () => {
  const load = (v: string) => loadConfig(['--node-ip', v, '--hostname-override=n1'], {});
  const flags = (v: string) => {
    const r = load(v);
    assert.equal(r.kind, 'run');
    return r.kind === 'run' ? r.config.flags : undefined;
  };
  it('a dual-stack pair is split, in the order given', () => {
    assert.deepEqual(flags('192.0.2.10, 2001:db8::10')?.nodeIPs, ['192.0.2.10', '2001:db8::10']);
    assert.deepEqual(flags('2001:DB8:0::10,192.0.2.10')?.nodeIPs, ['2001:db8::10', '192.0.2.10']);
  });
  for (const [v, why] of [
    ['blah', /"blah" is not an IP address/],
    ['192.0.2.10,not-an-ip', /"not-an-ip" is not an IP address/],
    ['192.0.2.10,192.0.2.11', /either a single IP or a dual-stack pair/],
    ['192.0.2.10,::', /cannot include '0.0.0.0' or '::'/],
    ['192.0.2.10,2001:db8::1,192.0.2.11', /either a single IP or a dual-stack pair/],
  ] as const) {
    it(`"${v}" is refused`, () =>
      assert.throws(
        () => load(v),
        (e: unknown) => e instanceof ConfigError && why.test(e.message),
      ));
  }
});

describe('upstream validateNodeIP', () => {
  const host = ['127.0.0.1', '::1', '192.0.2.2', 'fd00::2', 'fe80::1'];
  const rows: [string, RegExp | undefined][] = [
    ['192.0.2.2', undefined],
    ['fd00::2', undefined],
    ['127.0.0.1', undefined], // ours: upstream "nodeIP can't be loopback address"
    ['::1', undefined], // ours
    ['224.0.0.1', /multicast/],
    ['ff02::1', /multicast/],
    ['169.254.1.1', /link-local unicast/],
    ['fe80::1', /link-local unicast/],
    ['0.0.0.0', /all zeros/],
    ['::', /all zeros/],
    ['192.0.2.99', /not found in the host's network interfaces/],
    ['127.0.0.5', /not found in the host's network interfaces/],
  ];
  for (const [ip, why] of rows) {
    it(`${ip}: ${why ?? 'valid'}`, () => {
      const got = validateNodeIP(ip, host);
      if (why) assert.match(got ?? '', why);
      else assert.equal(got, undefined);
    });
  }
});

describe('upstream TestNodeAddress / TestNodeAddress_NoCloudProvider (no cloud provider)', () => {
  const HOSTNAME = 'hostname';
  const host = ['127.0.0.1', '::1', '10.1.1.1', '10.0.0.2', 'fd01::1234', '2001:db2::2', 'fe80::9'];
  const addresses = (nodeIPs: string[], hostAddrs = host, hostnameOverride?: string) =>
    nodeAddresses(resolveNodeIPs({ nodeIPs, hostAddrs, hostnameOverride }), HOSTNAME);
  const internal = (...ips: string[]) => [
    ...ips.map((address) => ({ type: 'InternalIP', address })),
    { type: 'Hostname', address: HOSTNAME },
  ];
  it('Single --node-ip', () => assert.deepEqual(addresses(['10.1.1.1']), internal('10.1.1.1')));
  it('Dual --node-ips', () =>
    assert.deepEqual(addresses(['10.1.1.1', 'fd01::1234']), internal('10.1.1.1', 'fd01::1234')));
  it('Dual --node-ips, IPv6 first', () =>
    assert.deepEqual(addresses(['fd01::1234', '10.1.1.1']), internal('fd01::1234', '10.1.1.1')));
  it('No cloud provider does not get nodeIP annotation (only addresses are set)', () =>
    assert.deepEqual(addresses(['10.1.1.1']), internal('10.1.1.1')));
  it('no cloud provider and nodeIP IPv4 unspecified', () =>
    assert.deepEqual(addresses(['0.0.0.0'], ['127.0.0.1', 'fd01::1234', '10.0.0.2']), internal('10.0.0.2')));
  it('no cloud provider and nodeIP IPv6 unspecified', () =>
    assert.deepEqual(addresses(['::'], ['127.0.0.1', '10.0.0.2', 'fe80::9', '2001:db2::2']), internal('2001:db2::2')));
  it('no cloud provider and no nodeIP resolve IPv4', () =>
    assert.deepEqual(addresses([], ['127.0.0.1', 'fd01::1234', '10.0.0.2']), internal('10.0.0.2')));
  it('no cloud provider and no nodeIP resolve IPv6', () =>
    assert.deepEqual(addresses([], ['127.0.0.1', '::1', '2001:db2::2']), internal('2001:db2::2')));
  it('the hostname override is an IP: it is the node IP', () =>
    assert.deepEqual(addresses([], host, '10.9.9.9'), internal('10.9.9.9')));
  it('Invalid single --node-ip (using loopback): ours, accepted', () =>
    assert.deepEqual(addresses(['127.0.0.1']), internal('127.0.0.1')));
  it('Dual --node-ips but with invalid secondary IP (using multicast IP)', () =>
    assert.throws(
      () => addresses(['10.1.1.1', '224.0.0.0']),
      (e: unknown) =>
        e instanceof ConfigError && /secondaryNodeIP: nodeIP can't be a multicast address/.test(e.message),
    ));
  it('a --node-ip that is not on the host is refused, naming it', () =>
    assert.throws(
      () => addresses(['10.7.7.7']),
      (e: unknown) =>
        e instanceof ConfigError && /failed to validate nodeIP: node IP: "10.7.7.7" not found/.test(e.message),
    ));
  it('a host with no usable address: 127.0.0.1 (ours)', () =>
    assert.deepEqual(addresses([], ['127.0.0.1', '::1', 'fe80::9']), internal('127.0.0.1')));
});

describe('upstream GetNodeHostIPs: the pod hostIPs', () => {
  it('primary, then the first of the other family', () => {
    assert.deepEqual(hostIPsOf(['10.1.1.1', 'fd01::1234']), ['10.1.1.1', 'fd01::1234']);
    assert.deepEqual(hostIPsOf(['fd01::1234']), ['fd01::1234']);
    assert.deepEqual(hostIPsOf([]), []);
  });
  it('detectHostIP prefers the asked family, falls back to the other', () => {
    assert.equal(detectHostIP(true, ['10.0.0.2']), '10.0.0.2');
    assert.equal(detectHostIP(false, ['fd01::1', '10.0.0.2']), '10.0.0.2');
  });
  it('parseIPSloppy writes IPv6 canonically and rejects non-IPs', () => {
    assert.equal(parseIPSloppy('FD01:0:0::0001'), 'fd01::1');
    assert.equal(parseIPSloppy('256.1.1.1'), undefined);
    assert.equal(parseIPSloppy('1.2.3.4/24'), undefined);
  });
});
