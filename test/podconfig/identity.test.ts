/**
 * Pod identity (UID, name, namespace, container and volume names) is validated before anything
 * builds a path from it, for every source: static files, the manifest URL, the apiserver.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { ManifestError } from '../../src/errors.js';
import { decodeStaticPodManifest, decodeUrlManifest } from '../../src/podconfig/index.js';
import { PodStorage } from '../../src/podconfig/pod-config.js';
import { validatePodIdentity } from '../../src/podconfig/validation.js';
import { isPodUID } from '../../src/util/pod-identity.js';
import { captureLogger, mkPod, testUID } from './helpers.js';

const UUID = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const MD5 = 'd41d8cd98f00b204e9800998ecf8427e';

/** Hostile values for each identity field; every one would move a path or break a log line. */
const TRAVERSALS = ['../../../../etc/cron.d', '..', '.', 'a/b', 'a\u0000b', '/etc', 'a\nb', ''];

describe('pod UID forms', () => {
  const valid = [UUID, UUID.toUpperCase(), MD5, '00000000-0000-0000-0000-000000000000'];
  const invalid = [
    ...TRAVERSALS,
    'uid-a',
    `${UUID}/..`,
    `${MD5}0`,
    MD5.slice(1),
    `${UUID} `,
    'g41d8cd98f00b204e9800998ecf8427e',
    '6f1c2b7e3a4d-4e5f-8a9b-0c1d2e3f4a5b1',
  ];
  for (const uid of valid) it(`accepts ${JSON.stringify(uid)}`, () => assert.equal(isPodUID(uid), true));
  for (const uid of invalid) it(`refuses ${JSON.stringify(uid)}`, () => assert.equal(isPodUID(uid), false));
});

describe('validatePodIdentity (every source)', () => {
  const pod = (meta: Record<string, unknown>, spec: Record<string, unknown> = {}): Pod =>
    ({
      metadata: { name: 'web', namespace: 'default', uid: UUID, ...meta },
      spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
    }) as Pod;
  const cases: Array<[string, Pod, string | undefined]> = [
    ['a UUID', pod({}), undefined],
    ['a static pod hash', pod({ uid: MD5 }), undefined],
    [
      'a dotted name of 253 characters',
      pod({ name: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }),
      undefined,
    ],
    ['a name of 254 characters', pod({ name: 'a'.repeat(254) }), 'metadata.name'],
    ['a namespace of 64 characters', pod({ namespace: 'a'.repeat(64) }), 'metadata.namespace'],
    ['a dotted namespace', pod({ namespace: 'a.b' }), 'metadata.namespace'],
    ['no UID', pod({ uid: undefined }), 'metadata.uid'],
    ['no namespace', pod({ namespace: undefined }), 'metadata.namespace'],
    ['a UID that is a number', pod({ uid: 42 }), 'metadata.uid'],
    ['an upper-case name', pod({ name: 'Web' }), 'metadata.name'],
    ['an underscore in the name (the log directory separator)', pod({ name: 'a_b' }), 'metadata.name'],
    ['a container named ..', pod({}, { containers: [{ name: '..', image: 'i' }] }), 'spec.containers[0].name'],
    [
      'an init container with a slash',
      pod({}, { initContainers: [{ name: 'a/b', image: 'i' }] }),
      'spec.initContainers[0].name',
    ],
    [
      'an ephemeral container with a traversal',
      pod({}, { ephemeralContainers: [{ name: '../../x', image: 'i' }] }),
      'spec.ephemeralContainers[0].name',
    ],
    ['a volume named ../../etc', pod({}, { volumes: [{ name: '../../etc', emptyDir: {} }] }), 'spec.volumes[0].name'],
    ['no metadata', { spec: {} } as Pod, 'metadata'],
    ['not an object', null as unknown as Pod, 'metadata'],
  ];
  for (const v of TRAVERSALS) {
    cases.push([`UID ${JSON.stringify(v)}`, pod({ uid: v }), 'metadata.uid']);
    cases.push([`name ${JSON.stringify(v)}`, pod({ name: v }), 'metadata.name']);
    cases.push([`namespace ${JSON.stringify(v)}`, pod({ namespace: v }), 'metadata.namespace']);
    cases.push([
      `container name ${JSON.stringify(v)}`,
      pod({}, { containers: [{ name: v, image: 'i' }] }),
      'spec.containers[0].name',
    ]);
  }
  for (const [what, p, field] of cases) {
    it(`${field ? 'refuses' : 'accepts'} ${what}${field ? ` (${field})` : ''}`, () => {
      const problems = validatePodIdentity(p);
      if (field === undefined) assert.deepEqual(problems, []);
      else assert.equal(problems[0]?.field, field, JSON.stringify(problems));
    });
  }
});

const manifest = (meta: string, containers = '  - name: c\n    image: busybox\n') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n${meta}spec:\n  containers:\n${containers}`;

describe('static pod files', () => {
  const decode = (text: string) => decodeStaticPodManifest(text, { file: '/m/web.yaml', nodeName: 'node-1' });
  const refused: Array<[string, string, RegExp]> = [
    [
      'a traversal UID',
      manifest('  uid: ../../../../etc/cron.d\n'),
      /metadata\.uid: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/cron\.d" is not a valid pod UID/,
    ],
    [
      'a traversal namespace',
      manifest('  namespace: ../../etc\n'),
      /metadata\.namespace: .* is not a valid DNS-1123 label/,
    ],
    [
      'a traversal name',
      manifest('').replace('name: web', 'name: ../../etc'),
      /metadata\.name: .* is not a valid DNS-1123 subdomain/,
    ],
    ['a traversal container name', manifest('', '  - name: ../x\n    image: busybox\n'), /spec\.containers\[0\]\.name/],
  ];
  for (const [what, text, re] of refused) {
    it(`refuses ${what}, naming the field`, () => {
      assert.throws(
        () => decode(text),
        (err: unknown) => err instanceof ManifestError && re.test(err.message),
      );
    });
  }
  it('keeps a valid UID the manifest sets; generates a 32-hex one otherwise', () => {
    assert.equal(decode(manifest(`  uid: ${UUID}\n`)).metadata!.uid, UUID);
    assert.match(decode(manifest('')).metadata!.uid!, /^[0-9a-f]{32}$/);
  });
});

describe('manifest URL', () => {
  it('a PodList with one traversal UID is refused as a whole, naming the item (the source keeps its last good pods)', () => {
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: [
        { metadata: { name: 'good' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        { metadata: { name: 'bad', uid: '../../../../etc/cron.d' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      ],
    });
    assert.throws(
      () => decodeUrlManifest(list, { url: 'http://10.0.0.1/pods', nodeName: 'n1' }),
      /items\[1\]\.metadata\.uid: .* is not a valid pod UID/,
    );
  });
});

describe('apiserver source (PodStorage)', () => {
  const hostile = (name: string, meta: Record<string, unknown>): Pod => {
    const p = mkPod(name, `uid-${name}`);
    return { ...p, metadata: { ...p.metadata, ...meta } };
  };

  it('drops each pod with a bad identity, logs it once naming the field, and keeps the others', () => {
    const { logger, lines } = captureLogger();
    const s = new PodStorage({ logger });
    const good = mkPod('good', 'uid-good');
    const pods = [
      hostile('bad-uid', { uid: '../../../../etc/cron.d' }),
      good,
      hostile('bad-ns', { namespace: '../..' }),
      hostile('x', { name: '../../../tmp/x' }),
      { ...mkPod('bad-ctr', 'uid-bad-ctr'), spec: { containers: [{ name: '../../c', image: 'i' }] } },
      null as unknown as Pod,
    ];
    const out = s.merge('api', { op: 'SET', pods });
    assert.deepEqual(
      out.map((u) => [u.op, u.pods.map((p) => p.metadata!.name)]),
      [['ADD', ['good']]],
    );
    const refusals = () => lines.filter((l) => /pod refused/.test(l.msg));
    assert.deepEqual(
      refusals().map((l) => l.field),
      ['metadata.uid', 'metadata.namespace', 'metadata.name', 'spec.containers[0].name', 'metadata'],
    );
    assert.ok(refusals().every((l) => l.code === 'KTS_ERR_POD_IDENTITY' && l.source === 'api'));
    assert.match(
      String(refusals()[0]!.err),
      /metadata\.uid: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/cron\.d" is not a valid pod UID/,
    );

    // The apiserver re-sends its whole list on every change: no new update, no new log line.
    assert.deepEqual(s.merge('api', { op: 'SET', pods }), []);
    assert.equal(refusals().length, 5);
    // An incremental ADD of a bad pod is refused the same way; the good pod stays.
    assert.deepEqual(s.merge('api', { op: 'ADD', pods: [hostile('late', { uid: 'x/../../y' })] }), []);
    assert.deepEqual(
      s.podsOf('api').map((p) => p.metadata!.uid),
      [testUID('uid-good')],
    );
    // A validated object is not validated again, but a new object is: the same name with a bad
    // identity in a later SET is refused, and the pod it replaces is removed.
    const worse = { ...good, metadata: { ...good.metadata, uid: '../../x' } };
    s.merge('api', { op: 'SET', pods: [worse] });
    assert.equal(refusals().length, 7);
    assert.deepEqual(s.podsOf('api'), []);
  });
});
