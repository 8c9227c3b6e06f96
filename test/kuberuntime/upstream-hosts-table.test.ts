// The kubelet-managed /etc/hosts, as upstream's tables in pkg/kubelet/kubelet_pods_test.go:
// TestNodeHostsFileContent and TestManagedHostsFileContent (every row), and the hosts part of
// TestMakeMounts (the managed mount is added last, read-write, unless the container mounts
// /etc/hosts itself or the pod has no IPs yet; a hostNetwork pod gets the node's file).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { makeHostsMount, managedHostsFileContent, nodeHostsFileContent } from '../../src/kuberuntime/hosts-file.js';
import { podHostnameAndDomain } from '../../src/kuberuntime/sandbox-config.js';
import { testTempDir } from '../support/temp-dir.js';

const LOCALHOST = `127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
fe00::0\tip6-localnet
fe00::0\tip6-mcastprefix
fe00::1\tip6-allnodes
fe00::2\tip6-allrouters
`;
const FILE1 = `# hosts file for testing.\n${LOCALHOST}123.45.67.89\tsome.domain\n`;
const FILE2 = `# another hosts file for testing.\n${LOCALHOST}12.34.56.78\tanother.domain\n`;
const ALIAS1 = [{ ip: '123.45.67.89', hostnames: ['foo', 'bar', 'baz'] }];
const ALIAS2 = [...ALIAS1, { ip: '456.78.90.123', hostnames: ['park', 'doo', 'boo'] }];
const ALIAS_LINES1 = '\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n';
const ALIAS_LINES2 = `${ALIAS_LINES1}456.78.90.123\tpark\tdoo\tboo\n`;
const HOST_NET = '# Kubernetes-managed hosts file (host network).\n';
const MANAGED = `# Kubernetes-managed hosts file.\n${LOCALHOST}`;

describe('upstream TestNodeHostsFileContent', () => {
  const dir = testTempDir('kts-hosts-');
  const rows: Array<[name: string, raw: string, aliases: typeof ALIAS2, want: string]> = [
    ['hosts_test_file1', FILE1, [], HOST_NET + FILE1],
    ['hosts_test_file2', FILE2, [], HOST_NET + FILE2],
    ['hosts_test_file1_with_host_aliases', FILE1, ALIAS1, HOST_NET + FILE1 + ALIAS_LINES1],
    ['hosts_test_file2_with_host_aliases', FILE2, ALIAS2, HOST_NET + FILE2 + ALIAS_LINES2],
  ];
  for (const [name, raw, aliases, want] of rows) {
    it(name, async () => {
      writeFileSync(join(dir, name), raw);
      assert.equal(await nodeHostsFileContent(join(dir, name), aliases), want);
    });
  }
});

describe('upstream TestManagedHostsFileContent', () => {
  const rows: Array<[ips: string[], host: string, domain: string, aliases: typeof ALIAS2, want: string]> = [
    [['123.45.67.89'], 'podFoo', '', [], `${MANAGED}123.45.67.89\tpodFoo\n`],
    [['203.0.113.1'], 'podFoo', 'domainFoo', [], `${MANAGED}203.0.113.1\tpodFoo.domainFoo\tpodFoo\n`],
    [
      ['203.0.113.1'],
      'podFoo',
      'domainFoo',
      ALIAS1,
      `${MANAGED}203.0.113.1\tpodFoo.domainFoo\tpodFoo\n${ALIAS_LINES1}`,
    ],
    [
      ['203.0.113.1'],
      'podFoo',
      'domainFoo',
      ALIAS2,
      `${MANAGED}203.0.113.1\tpodFoo.domainFoo\tpodFoo\n${ALIAS_LINES2}`,
    ],
    [
      ['203.0.113.1', 'fd00::6'],
      'podFoo',
      'domainFoo',
      [],
      `${MANAGED}203.0.113.1\tpodFoo.domainFoo\tpodFoo\nfd00::6\tpodFoo.domainFoo\tpodFoo\n`,
    ],
  ];
  for (const [ips, host, domain, aliases, want] of rows) {
    it(`${ips.join(',')} ${host} ${domain || '(no domain)'} aliases:${aliases.length}`, () =>
      assert.equal(managedHostsFileContent(ips, host, domain, aliases), want));
  }
});

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return { metadata: { name: 'podFoo', namespace: 'nsFoo', uid: 'u1' }, spec: { containers: [], ...spec } } as Pod;
}

describe('upstream TestMakeMounts, the hosts part', () => {
  const base = testTempDir('kts-hosts-mount-');
  const nodeHosts = join(base, 'node-hosts');
  writeFileSync(nodeHosts, FILE1);
  const input = (podIPs: string[], sub = '') => ({
    podDir: base,
    podIPs,
    ...podHostnameAndDomain(pod(sub ? { subdomain: sub } : {}), 'cluster.local'),
    nodeHostsFile: nodeHosts,
  });

  it('a pod with an IP: <pod dir>/etc-hosts at /etc/hosts, read-write, mode 0644', async () => {
    const m = await makeHostsMount(pod(), ['/data'], input(['10.0.0.5']));
    assert.deepEqual(m, { containerPath: '/etc/hosts', hostPath: join(base, 'etc-hosts'), readonly: false });
    assert.equal(readFileSync(join(base, 'etc-hosts'), 'utf8'), `${MANAGED}10.0.0.5\tpodFoo\n`);
    assert.equal(statSync(join(base, 'etc-hosts')).mode & 0o777, 0o644);
  });
  it('a subdomain: the FQDN <host>.<subdomain>.<ns>.svc.<domain> first', async () => {
    await makeHostsMount(pod({ subdomain: 'sub' }), [], input(['10.0.0.5'], 'sub'));
    assert.match(
      readFileSync(join(base, 'etc-hosts'), 'utf8'),
      /\n10\.0\.0\.5\tpodFoo\.sub\.nsFoo\.svc\.cluster\.local\tpodFoo\n$/,
    );
  });
  it('the container mounts its own /etc/hosts: no managed mount', async () => {
    assert.equal(await makeHostsMount(pod(), ['/etc/hosts'], input(['10.0.0.5'])), undefined);
  });
  it('no pod IP yet: no managed mount', async () => {
    assert.equal(await makeHostsMount(pod(), [], input([])), undefined);
  });
  it("hostNetwork: the node's hosts file and the aliases", async () => {
    const m = await makeHostsMount(pod({ hostNetwork: true, hostAliases: ALIAS1 }), [], input(['192.0.2.1']));
    assert.ok(m);
    assert.equal(readFileSync(m.hostPath, 'utf8'), HOST_NET + FILE1 + ALIAS_LINES1);
  });
  it('a pod directory that is not there: a VolumeError naming the file (CreateContainerConfigError)', async () => {
    await assert.rejects(
      makeHostsMount(pod(), [], { ...input(['10.0.0.5']), podDir: join(base, 'missing') }),
      (err: Error & { code?: string }) => err.code === 'KTS_ERR_VOLUME' && /etc-hosts/.test(err.message),
    );
  });
});
