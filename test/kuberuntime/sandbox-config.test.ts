import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPodDNS, parseResolvConf } from '../../src/kuberuntime/dns.js';
import { generatePodSandboxConfig, nodenameForKernel, podHostname } from '../../src/kuberuntime/sandbox-config.js';
import { container, makePod } from './helpers.js';

const host = parseResolvConf(`# generated
nameserver 192.168.1.1
nameserver 8.8.8.8 ; second
search example.com corp.example.com.
options ndots:2 timeout:1
options edns0
`);
const noCluster = { clusterDNS: [], clusterDomain: '', resolvConf: '/etc/resolv.conf' };

describe('DNS', () => {
  it('parses resolv.conf', () => {
    assert.deepEqual(host, {
      servers: ['192.168.1.1', '8.8.8.8'],
      searches: ['example.com', 'corp.example.com'],
      options: ['ndots:2', 'timeout:1', 'edns0'],
    });
  });

  it('ClusterFirst without cluster DNS falls back to the host config', () => {
    assert.deepEqual(buildPodDNS(makePod(), noCluster, host), host);
  });

  it('ClusterFirst with cluster DNS: cluster server, cluster searches first, ndots:5', () => {
    const got = buildPodDNS(
      makePod(),
      { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf' },
      host,
    );
    assert.deepEqual(got, {
      servers: ['10.96.0.10'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'example.com', 'corp.example.com'],
      options: ['ndots:5'],
    });
  });

  it('ClusterFirst on the host network uses the host config', () => {
    const got = buildPodDNS(
      makePod({ hostNetwork: true }),
      { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: 'x' },
      host,
    );
    assert.deepEqual(got, host);
  });

  it('None uses only spec.dnsConfig; options merge by name', () => {
    const pod = makePod();
    pod.spec!.dnsPolicy = 'None';
    pod.spec!.dnsConfig = {
      nameservers: ['1.1.1.1'],
      searches: ['a.b'],
      options: [{ name: 'ndots', value: '1' }, { name: 'rotate' }],
    };
    assert.deepEqual(buildPodDNS(pod, noCluster, host), {
      servers: ['1.1.1.1'],
      searches: ['a.b'],
      options: ['ndots:1', 'rotate'],
    });
    pod.spec!.dnsPolicy = 'Default';
    assert.deepEqual(buildPodDNS(pod, noCluster, host).options, ['ndots:1', 'timeout:1', 'edns0', 'rotate']);
  });

  it('no resolv.conf configured: localhost and search "."', () => {
    assert.deepEqual(
      buildPodDNS(makePod(), { ...noCluster, resolvConf: '' }, { servers: [], searches: [], options: [] }),
      { servers: ['127.0.0.1'], searches: ['.'], options: [] },
    );
  });
});

describe('generatePodSandboxConfig', () => {
  const dns = { servers: ['1.1.1.1'], searches: [], options: [] };

  it('pod network: POD namespaces, hostname = pod name, ports, labels, log dir', () => {
    const pod = makePod({
      containers: [
        container('a', {
          ports: [
            { containerPort: 80, hostPort: 8080 },
            { containerPort: 53, protocol: 'UDP' },
          ],
        }),
      ],
    });
    const cfg = generatePodSandboxConfig({ pod, attempt: 2, podLogsDir: '/var/log/pods', clusterDomain: '', dns });
    assert.deepEqual(cfg.metadata, { name: 'web', namespace: 'default', uid: 'uid-1234', attempt: 2 });
    assert.equal(cfg.hostname, 'web');
    assert.equal(cfg.logDirectory, '/var/log/pods/default_web_uid-1234');
    assert.deepEqual(cfg.linux.securityContext.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
    assert.deepEqual(cfg.portMappings, [
      { protocol: 'TCP', containerPort: 80, hostPort: 8080, hostIp: '' },
      { protocol: 'UDP', containerPort: 53, hostPort: 0, hostIp: '' },
    ]);
    assert.equal(cfg.labels['io.kubernetes.pod.uid'], 'uid-1234');
    assert.equal(cfg.labels.app, 'web');
    assert.deepEqual(cfg.annotations, { note: 'x' });
    assert.equal(cfg.linux.cgroupParent, '');
    assert.equal(cfg.dnsConfig, dns);
  });

  it('host network: NODE network namespace and no hostname', () => {
    const cfg = generatePodSandboxConfig({
      pod: makePod({ hostNetwork: true }),
      attempt: 0,
      podLogsDir: '/l',
      clusterDomain: '',
      dns,
    });
    assert.equal(cfg.linux.securityContext.namespaceOptions.network, 'NODE');
    assert.equal(cfg.hostname, '');
  });

  it('hostname: spec.hostname wins, long names are truncated to 63 without a trailing dash', () => {
    const pod = makePod();
    pod.spec!.hostname = 'custom';
    assert.equal(podHostname(pod, ''), 'custom');
    const long = makePod({ name: `${'a'.repeat(62)}-bbbb` });
    assert.equal(podHostname(long, ''), 'a'.repeat(62));
  });
});

// upstream GeneratePodHostNameAndDomain's DNS-label checks (kubelet_pods.go) and GetNodenameForKernel's
// 64-character limit: a pod the apiserver did not validate never reaches the runtime's hostname.
describe('hostname a pod cannot set', () => {
  const withSpec = (extra: Record<string, unknown>) => {
    const pod = makePod();
    Object.assign(pod.spec!, extra);
    return pod;
  };
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['hostname with a newline', { hostname: 'a\nb' }, /pod Hostname "a\\nb" is not a valid DNS label/],
    ['hostname in capitals', { hostname: 'Web' }, /pod Hostname "Web" is not a valid DNS label/],
    ['hostname of 64 characters', { hostname: 'a'.repeat(64) }, /pod Hostname "a{64}" is not a valid DNS label/],
    ['subdomain with a dot', { subdomain: 'a.b' }, /pod Subdomain "a.b" is not a valid DNS label/],
    [
      'FQDN over 64 characters',
      { hostname: 'h'.repeat(30), subdomain: 's'.repeat(30), setHostnameAsFQDN: true },
      /FQDN h{30}\.s{30}\.default\.svc\.cluster\.local is too long \(64 characters is the max, 87 characters requested\)/,
    ],
  ];
  for (const [name, extra, message] of cases)
    it(name, () => assert.throws(() => podHostname(withSpec(extra), 'cluster.local'), { message }));

  it('a valid FQDN of 64 characters is kept', () => {
    const pod = withSpec({ hostname: 'h'.repeat(21), subdomain: 's'.repeat(16), setHostnameAsFQDN: true });
    assert.equal(podHostname(pod, 'cluster.local').length, 64);
  });
});

// upstream pkg/kubelet/util/util_test.go TestGetNodenameForKernel, case for case.
describe('nodenameForKernel (upstream TestGetNodenameForKernel)', () => {
  const long = { hostname: '1234567.1234567', hostDomain: '1234567.1234567.1234567.1234567.1234567.1234567.1234567' };
  const cases: Array<[string, string, string, boolean, string | RegExp]> = [
    ['no hostDomain, setHostnameAsFQDN false', 'test.pod.hostname', '', false, 'test.pod.hostname'],
    ['no hostDomain, setHostnameAsFQDN true', 'test.pod.hostname', '', true, 'test.pod.hostname'],
    [
      'valid hostDomain, setHostnameAsFQDN false',
      'test.pod.hostname',
      'svc.subdomain.local',
      false,
      'test.pod.hostname',
    ],
    [
      'valid hostDomain, setHostnameAsFQDN true',
      'test.pod.hostname',
      'svc.subdomain.local',
      true,
      'test.pod.hostname.svc.subdomain.local',
    ],
    ['FQDN is too long, setHostnameAsFQDN false', long.hostname, long.hostDomain, false, long.hostname],
    ['FQDN is too long, setHostnameAsFQDN true', long.hostname, long.hostDomain, true, /is too long \(64 characters/],
  ];
  for (const [name, hostname, hostDomain, fqdn, want] of cases)
    it(name, () => {
      if (typeof want === 'string') assert.equal(nodenameForKernel(hostname, hostDomain, fqdn), want);
      else assert.throws(() => nodenameForKernel(hostname, hostDomain, fqdn), { message: want });
    });
});

describe('sysctls', () => {
  it('the admitted pod sysctls go to the sandbox with dotted names', () => {
    const pod = makePod({ containers: [container('a')] });
    pod.spec!.securityContext = { sysctls: [{ name: 'net/ipv4/ip_local_port_range', value: '1024 65535' }] };
    const dns = { servers: ['1.1.1.1'], searches: [], options: [] };
    const cfg = generatePodSandboxConfig({ pod, attempt: 0, podLogsDir: '/var/log/pods', clusterDomain: '', dns });
    assert.deepEqual(cfg.linux.sysctls, { 'net.ipv4.ip_local_port_range': '1024 65535' });
  });
});
