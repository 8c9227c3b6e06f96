// Pod DNS, as upstream's tables in pkg/kubelet/network/dns/dns_test.go: TestParseResolvConf,
// TestGetPodDNSType, testGetPodDNS (resolvConf "" and a real file) and TestGetPodDNSCustom (a
// resolvConf file of our own, every dnsPolicy with a dnsConfig). Rows marked `ours` are our
// deliberate differences (docs/differences.md).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import type { DNSConfig } from '../../src/cri/types.js';
import { buildPodDNS, parseResolvConf, podDNS, type DnsSettings } from '../../src/kuberuntime/dns.js';
import { testTempDir } from '../support/temp-dir.js';

type ParseRow = [data: string, servers: string[], searches: string[], options: string[], isErr?: true];

/** upstream TestParseResolvConf, every row. */
const PARSE: ParseRow[] = [
  ['', [], [], []],
  [' ', [], [], []],
  ['\n', [], [], []],
  ['\t\n\t', [], [], []],
  ['#comment\n', [], [], []],
  [' #comment\n', [], [], []],
  ['#comment\n#comment', [], [], []],
  ['#comment\nnameserver', [], [], [], true],
  ['#comment\nnameserver\nsearch', [], [], [], true],
  ['#comment\nnameserver 1.2.3.4\nsearch', ['1.2.3.4'], [], []],
  ['nameserver 1.2.3.4', ['1.2.3.4'], [], []],
  [' nameserver 1.2.3.4', ['1.2.3.4'], [], []],
  ['\tnameserver 1.2.3.4', ['1.2.3.4'], [], []],
  ['nameserver\t1.2.3.4', ['1.2.3.4'], [], []],
  ['nameserver \t 1.2.3.4', ['1.2.3.4'], [], []],
  ['nameserver 1.2.3.4\nnameserver 5.6.7.8', ['1.2.3.4', '5.6.7.8'], [], []],
  ['nameserver 1.2.3.4 #comment', ['1.2.3.4'], [], []],
  ['search ', [], [], []],
  ['search foo', [], ['foo'], []],
  ['search foo bar', [], ['foo', 'bar'], []],
  ['search foo. bar', [], ['foo', 'bar'], []],
  ['search foo bar bat\n', [], ['foo', 'bar', 'bat'], []],
  ['search foo\nsearch bar', [], ['bar'], []],
  ['nameserver 1.2.3.4\nsearch foo bar', ['1.2.3.4'], ['foo', 'bar'], []],
  ['nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar', ['1.2.3.4', '5.6.7.8'], ['bar'], []],
  ['#comment\nnameserver 1.2.3.4\n#comment\nsearch foo\ncomment', ['1.2.3.4'], ['foo'], []],
  ['options ', [], [], []],
  ['options ndots:5 attempts:2', [], [], ['ndots:5', 'attempts:2']],
  ['options ndots:1\noptions ndots:5 attempts:3', [], [], ['ndots:5', 'attempts:3']],
  [
    'nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar\noptions ndots:5 attempts:4',
    ['1.2.3.4', '5.6.7.8'],
    ['bar'],
    ['ndots:5', 'attempts:4'],
  ],
  // systemd-resolved's stub file: read as is (upstream does nothing special in the kubelet).
  ['nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .', ['127.0.0.53'], [], ['edns0', 'trust-ad']],
];

describe('upstream TestParseResolvConf', () => {
  for (const [data, servers, searches, options, isErr] of PARSE) {
    it(JSON.stringify(data), () => {
      if (isErr) assert.throws(() => parseResolvConf(data), /nameserver list is empty/);
      else assert.deepEqual(parseResolvConf(data), { servers, searches, options });
    });
  }
});

function pod(spec: Partial<NonNullable<Pod['spec']>>, namespace = 'testNS'): Pod {
  return { metadata: { name: 'test_pod', namespace, uid: 'u' }, spec: { containers: [], ...spec } } as Pod;
}

const CLUSTER_NS = '203.0.113.1';
const HOST: DNSConfig = { servers: ['8.8.8.8'], searches: ['host.domain'], options: [] };
const withCluster: DnsSettings = { clusterDNS: [CLUSTER_NS], clusterDomain: 'TEST', resolvConf: '/etc/resolv.conf' };
const noCluster: DnsSettings = { ...withCluster, clusterDNS: [] };

/** upstream TestGetPodDNSType, through the config each type gives (host: the host's file; cluster: CLUSTER_NS). */
describe('upstream TestGetPodDNSType', () => {
  const rows: Array<[desc: string, hasClusterDNS: boolean, spec: Partial<NonNullable<Pod['spec']>>, type: string]> = [
    ['valid DNSClusterFirst without hostnetwork', true, { dnsPolicy: 'ClusterFirst' }, 'cluster'],
    [
      'valid DNSClusterFirstWithHostNet with hostnetwork',
      true,
      { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true },
      'cluster',
    ],
    ['valid DNSClusterFirstWithHostNet without hostnetwork', true, { dnsPolicy: 'ClusterFirstWithHostNet' }, 'cluster'],
    ['valid DNSDefault without hostnetwork', false, { dnsPolicy: 'Default' }, 'host'],
    ['valid DNSDefault with hostnetwork', false, { dnsPolicy: 'Default', hostNetwork: true }, 'host'],
    [
      'DNSClusterFirst with hostnetwork, fallback to DNSDefault',
      true,
      { dnsPolicy: 'ClusterFirst', hostNetwork: true },
      'host',
    ],
    ['valid DNSNone', false, { dnsPolicy: 'None' }, 'none'],
    // ours: upstream's getPodDNSType errors on an invalid policy; API validation refuses one, and
    // we treat a manifest's as ClusterFirst (logged).
    ['ours: invalid DNS policy is ClusterFirst', true, { dnsPolicy: 'invalidPolicy' as 'None' }, 'cluster'],
  ];
  for (const [desc, hasClusterDNS, spec, type] of rows) {
    it(desc, () => {
      const got = buildPodDNS(pod(spec), hasClusterDNS ? withCluster : noCluster, HOST);
      const seen = got.servers[0] === CLUSTER_NS ? 'cluster' : got.servers[0] === '8.8.8.8' ? 'host' : 'none';
      assert.equal(seen, type);
    });
  }
});

/**
 * upstream testGetPodDNS: four pods (newTestPods: hostNetwork), resolvConf "" then a file. ours:
 * upstream's pods have no namespace (search ".svc.<domain>"); ours always have one (the sources
 * default it), so the first search is "default.svc.<domain>".
 */
describe('upstream testGetPodDNS', () => {
  const settings = (resolvConf: string): DnsSettings => ({
    clusterDNS: [CLUSTER_NS],
    clusterDomain: 'kubernetes.io',
    resolvConf,
  });
  const pods = [
    pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }, 'default'),
    pod({ hostNetwork: true, dnsPolicy: 'ClusterFirst' }, 'default'),
    pod({ hostNetwork: false, dnsPolicy: 'ClusterFirst' }, 'default'),
    pod({ hostNetwork: true, dnsPolicy: 'Default' }, 'default'),
  ];
  it('resolvConf "": cluster pods get the cluster server and <ns>.svc.<domain>; host pods 127.0.0.1 and "."', () => {
    const got = pods.map((p) => buildPodDNS(p, settings(''), { servers: [], searches: [], options: [] }));
    for (const i of [0, 2]) {
      assert.deepEqual(got[i]!.servers, [CLUSTER_NS]);
      assert.equal(got[i]!.searches[0], 'default.svc.kubernetes.io');
    }
    for (const i of [1, 3])
      assert.deepEqual({ ...got[i]!, options: [] }, { servers: ['127.0.0.1'], searches: ['.'], options: [] });
  });
  it('a resolvConf file: cluster searches are prepended to the host searches', () => {
    const host: DNSConfig = { servers: ['192.0.2.53'], searches: ['a.example', 'b.example'], options: [] };
    const got = pods.map((p) => buildPodDNS(p, settings('/etc/resolv.conf'), host));
    for (const i of [0, 2]) {
      assert.deepEqual(got[i]!.servers, [CLUSTER_NS]);
      assert.equal(got[i]!.searches.length, host.searches.length + 3);
      assert.equal(got[i]!.searches[0], 'default.svc.kubernetes.io');
    }
    assert.deepEqual(got[3]!.servers, ['192.0.2.53']);
  });
});

/** upstream TestGetPodDNSCustom: a resolvConf of "nameserver 8.8.8.8\nsearch host.domain\n". */
describe('upstream TestGetPodDNSCustom', () => {
  const dir = testTempDir('kts-dns-');
  const file = join(dir, 'resolv.conf');
  writeFileSync(file, 'nameserver 8.8.8.8\nsearch host.domain\n');
  const settings: DnsSettings = { clusterDNS: ['10.0.0.10'], clusterDomain: 'kubernetes.io', resolvConf: file };
  const dnsConfig = {
    nameservers: ['10.0.0.11'],
    searches: ['my.domain'],
    options: [{ name: 'ndots', value: '3' }, { name: 'debug' }],
  };
  const cluster = ['testNS.svc.kubernetes.io', 'svc.kubernetes.io', 'kubernetes.io', 'host.domain', 'my.domain'];
  const rows: Array<[desc: string, spec: Partial<NonNullable<Pod['spec']>>, want: DNSConfig]> = [
    [
      'DNSNone without DNSConfig should have empty DNS settings',
      { dnsPolicy: 'None' },
      { servers: [], searches: [], options: [] },
    ],
    [
      'DNSNone with DNSConfig should have a merged DNS settings',
      {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['203.0.113.1'],
          searches: ['my.domain', 'second.domain'],
          options: [{ name: 'ndots', value: '3' }, { name: 'debug' }],
        },
      },
      { servers: ['203.0.113.1'], searches: ['my.domain', 'second.domain'], options: ['ndots:3', 'debug'] },
    ],
    [
      'DNSClusterFirst with DNSConfig should have a merged DNS settings',
      { dnsPolicy: 'ClusterFirst', dnsConfig },
      { servers: ['10.0.0.10', '10.0.0.11'], searches: cluster, options: ['ndots:3', 'debug'] },
    ],
    [
      'DNSClusterFirstWithHostNet with DNSConfig should have a merged DNS settings',
      { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet', dnsConfig },
      { servers: ['10.0.0.10', '10.0.0.11'], searches: cluster, options: ['ndots:3', 'debug'] },
    ],
    [
      'DNSDefault with DNSConfig should have a merged DNS settings',
      { dnsPolicy: 'Default', dnsConfig },
      { servers: ['8.8.8.8', '10.0.0.11'], searches: ['host.domain', 'my.domain'], options: ['ndots:3', 'debug'] },
    ],
  ];
  for (const [desc, spec, want] of rows) {
    it(desc, async () => {
      const got = await podDNS(pod(spec), settings);
      assert.deepEqual({ ...got, options: [...got.options].sort() }, { ...want, options: [...want.options].sort() });
    });
  }
});

// upstream getHostDNSConfig: a resolvConf that cannot be opened or parsed fails GetPodDNS (and so
// the pod's sandbox config) instead of giving the pod no DNS.
describe('resolvConf errors fail the sandbox config, as upstream getHostDNSConfig', () => {
  const dir = testTempDir('kts-dns-err-');
  it('a missing file', async () => {
    await assert.rejects(
      podDNS(pod({ dnsPolicy: 'Default' }), { ...noCluster, resolvConf: join(dir, 'missing') }),
      (err: Error & { code?: string }) =>
        err.code === 'KTS_ERR_SANDBOX' && /cannot read resolvConf .*missing/.test(err.message),
    );
  });
  it('a nameserver line without an address', async () => {
    const bad = join(dir, 'bad');
    writeFileSync(bad, 'nameserver\n');
    await assert.rejects(
      podDNS(pod({ dnsPolicy: 'Default' }), { ...noCluster, resolvConf: bad }),
      /Encountered error while parsing resolv conf file .*bad: nameserver list is empty/,
    );
  });
  it('resolvConf "" reads nothing', async () => {
    const got = await podDNS(pod({ dnsPolicy: 'Default' }), { ...noCluster, resolvConf: '' });
    assert.deepEqual(got, { servers: ['127.0.0.1'], searches: ['.'], options: [] });
  });
});
