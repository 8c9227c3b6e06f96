// Attacks on the kubelet-managed /etc/hosts (src/kuberuntime/hosts-file.ts): every value written
// into the file (hostAliases, hostname, subdomain, pod IPs) carrying a newline, tab, '#' or NUL
// to add a line. A static pod is refused at validation naming the field (upstream
// ValidateHostAliases); a pod from a hostile apiserver arrives unvalidated and is refused when
// the file is written (CreateContainerConfigError), nothing written; other pods are untouched.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { ManifestError, VolumeError } from '../../src/errors.js';
import { makeHostsMount, type HostsFileInput } from '../../src/kuberuntime/hosts-file.js';
import { decodeStaticPodManifest } from '../../src/podconfig/index.js';
import { testTempDir } from '../support/temp-dir.js';

type Spec = NonNullable<Pod['spec']>;
const INJECT = '10.0.0.66\tevil.example.com';

/** [name, spec fields, pod IPs, field the error names]. */
const HOSTILE: Array<[string, Partial<Spec> | Record<string, unknown>, string[], RegExp]> = [
  [
    'alias ip with a newline',
    { hostAliases: [{ ip: `1.2.3.4\n${INJECT}`, hostnames: ['a'] }] },
    [],
    /hostAliases\[0\]\.ip/,
  ],
  ['alias ip not an IP', { hostAliases: [{ ip: '456.78.90.123', hostnames: ['a'] }] }, [], /hostAliases\[0\]\.ip/],
  ['alias ip missing', { hostAliases: [{ hostnames: ['a'] }] }, [], /hostAliases\[0\]\.ip/],
  [
    'alias hostname with a newline',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: ['ok', `a\n${INJECT}`] }] },
    [],
    /hostAliases\[0\]\.hostnames\[1\]/,
  ],
  [
    'alias hostname with a tab',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: ['a\tb'] }] },
    [],
    /hostAliases\[0\]\.hostnames\[0\]/,
  ],
  [
    'alias hostname with #',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: ['a#b'] }] },
    [],
    /hostAliases\[0\]\.hostnames\[0\]/,
  ],
  [
    'alias hostname with NUL',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: ['a\u0000b'] }] },
    [],
    /hostAliases\[0\]\.hostnames\[0\]/,
  ],
  [
    'alias hostname a number',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: [7] }] },
    [],
    /hostAliases\[0\]\.hostnames\[0\]/,
  ],
  [
    'alias hostnames not a list',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: 'a\nb' }] },
    [],
    /hostAliases\[0\]\.hostnames/,
  ],
  [
    'second alias hostile',
    { hostAliases: [{ ip: '1.2.3.4', hostnames: ['a'] }, { ip: '::1\n1.1.1.1' }] },
    [],
    /hostAliases\[1\]\.ip/,
  ],
  ['hostAliases not a list', { hostAliases: 'x' }, [], /spec\.hostAliases/],
  ['hostname with a newline', { hostname: `web\n${INJECT}` }, [], /spec\.hostname/],
  ['hostname with a tab', { hostname: 'web\tevil' }, [], /spec\.hostname/],
  ['subdomain with a newline', { subdomain: `sub\n${INJECT}` }, [], /spec\.subdomain/],
  ['subdomain with #', { subdomain: 'sub#x' }, [], /spec\.subdomain/],
];

const pod = (spec: Record<string, unknown>): Pod =>
  ({
    metadata: { name: 'web', namespace: 'default', uid: '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b' },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  }) as Pod;

describe('hosts file attack: a static pod manifest is refused naming the field', () => {
  for (const [name, spec, , field] of HOSTILE) {
    it(name, () => {
      const text = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...pod(spec) });
      assert.throws(
        () => decodeStaticPodManifest(text, { file: '/m/web.yaml', nodeName: 'node-1' }),
        (e: unknown) => e instanceof ManifestError && field.test(e.message),
      );
    });
  }

  it('admits valid aliases (IPv4, IPv6, subdomains)', () => {
    const aliases = [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar'] }, { ip: 'fd00::1' }];
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...pod({ hostAliases: aliases }) });
    decodeStaticPodManifest(text, { file: '/m/web.yaml', nodeName: 'node-1' });
  });
});

describe('hosts file attack: an unvalidated API pod never gets an injected line', () => {
  const base = testTempDir('kts-hosts-attack-');
  let n = 0;
  const input = (podIPs: string[], over: Partial<HostsFileInput> = {}): HostsFileInput => {
    const podDir = join(base, String(n++));
    mkdirSync(podDir);
    return { podDir, podIPs: podIPs.length ? podIPs : ['10.0.0.5'], hostname: 'web', hostDomain: '', ...over };
  };
  const refused = async (p: Pod, i: HostsFileInput, field: RegExp) => {
    await assert.rejects(makeHostsMount(p, [], i), (e: unknown) => e instanceof VolumeError && field.test(e.message));
    assert.equal(existsSync(join(i.podDir, 'etc-hosts')), false, 'nothing is written');
  };

  for (const [name, spec, ips, field] of HOSTILE) {
    it(name, async () => {
      const p = pod(spec);
      const s = spec as Record<string, unknown>;
      // What podHostnameAndDomain hands over for the pod (the hostname unchecked).
      const over = {
        hostname: (s.hostname as string) || 'web',
        hostDomain: s.subdomain ? `${s.subdomain}.default.svc.cluster.local` : '',
      };
      await refused(p, input(ips, over), field);
    });
  }

  const inputs: Array<[string, Partial<HostsFileInput>, RegExp]> = [
    ['pod IP with a newline', { podIPs: [`10.0.0.5\n${INJECT}`] }, /pod IP/],
    ['pod IP not an IP', { podIPs: ['10.0.0.5', 'localhost'] }, /pod IP/],
    ['pod name fallback with a newline', { hostname: `web\n${INJECT}` }, /hostname/],
    ['host domain with a newline', { hostDomain: `sub.default.svc.cluster.local\n${INJECT}` }, /host domain/],
  ];
  for (const [name, over, field] of inputs) {
    it(name, async () => refused(pod({}), input([], over), field));
  }

  it('a good pod beside the refused ones gets exactly its lines', async () => {
    const aliases = [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar'] }];
    const i = input(['10.0.0.5', 'fd00::5'], { hostDomain: 'sub.default.svc.cluster.local' });
    const m = await makeHostsMount(pod({ hostAliases: aliases, subdomain: 'sub' }), [], i);
    const text = readFileSync(m!.hostPath, 'utf8');
    assert.equal(text.includes('evil'), false);
    assert.deepEqual(text.split('\n').slice(-3), ['# Entries added by HostAliases.', '10.1.2.3\tfoo.local\tbar', '']);
  });

  it('ten thousand aliases: written, one line each, nothing else', async () => {
    const aliases = Array.from({ length: 10_000 }, (_, k) => ({
      ip: `10.9.${k >> 8}.${k & 255}`,
      hostnames: [`h${k}`],
    }));
    const m = await makeHostsMount(pod({ hostAliases: aliases }), [], input([]));
    const lines = readFileSync(m!.hostPath, 'utf8').split('\n');
    assert.equal(lines.filter((l) => l.startsWith('10.9.')).length, 10_000);
  });
});
