/**
 * The container hash against upstream's own vectors (kubernetes pkg/kubelet/container), plus our
 * cases for the corners of Go's encoding/json that the vectors do not reach. The expected values
 * of our cases were computed by a separate reference that follows Go's appendString byte by byte
 * over the UTF-8 string; the upstream vectors pin the spew `%#v` + FNV-32a step.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container } from '../../src/api/types.js';
import {
  containerHashMatches,
  deepHashJson,
  goJsonString,
  hashContainer,
  legacyHashContainer,
} from '../../src/kuberuntime/hash.js';

/** upstream container_hash_test.go sampleContainer (command, args, ports, env, resources). */
const sampleContainer: Container = {
  name: 'test_container',
  image: 'foo/image:v1',
  command: ['/bin/testcmd'],
  args: ['/bin/sh', '-c', 'echo abc'],
  ports: [{ containerPort: 8001 }],
  env: [
    { name: 'ENV_FOO', value: 'bar' },
    { name: 'ENV_BAR', valueFrom: { secretKeyRef: { name: 'foo', key: 'bar', optional: true } } },
  ],
  resources: { limits: { foo: '1G' }, requests: { foo: '500M' } },
};

describe('upstream vectors', () => {
  it('TestConsistentHashContainer (container_hash_test.go): sampleV131HashValue 0x8e45cbd0', () => {
    assert.equal(hashContainer(sampleContainer), '8e45cbd0');
  });

  it('TestHashContainer (helpers_test.go): test_container, foo/image:v1, args and a port → 0x8e45cbd0', () => {
    const c: Container = {
      name: 'test_container',
      image: 'foo/image:v1',
      args: ['/bin/sh', '-c', 'echo abc'],
      ports: [{ containerPort: 8001 }],
    };
    assert.equal(hashContainer(c), '8e45cbd0');
  });

  // Before v1.31 upstream hashed json.Marshal of the whole container through the same
  // DeepHashObject: those vectors check the spew + FNV step on ~300 bytes of JSON.
  const older = [
    {
      name: 'TestConsistentHashContainer before v1.31: sampleV115HashValue 0x311670a',
      json:
        '{"name":"test_container","image":"foo/image:v1","command":["/bin/testcmd"],' +
        '"args":["/bin/sh","-c","echo abc"],"ports":[{"containerPort":8001}],' +
        '"env":[{"name":"ENV_FOO","value":"bar"},{"name":"ENV_BAR","valueFrom":' +
        '{"secretKeyRef":{"name":"foo","key":"bar","optional":true}}}],' +
        '"resources":{"limits":{"foo":"1G"},"requests":{"foo":"500M"}}}',
      want: 0x311670a,
    },
    {
      name: 'TestHashContainer before v1.31: 0x3c42280f',
      json:
        '{"name":"test_container","image":"foo/image:v1","args":["/bin/sh","-c","echo abc"],' +
        '"ports":[{"containerPort":8001}],"resources":{}}',
      want: 0x3c42280f,
    },
  ];
  for (const v of older) it(v.name, () => assert.equal(deepHashJson(Buffer.from(v.json)), v.want));
});

describe('our cases: Go encoding/json corners and the annotation form', () => {
  // [what it shows, container name, image, expected annotation]
  const cases: [string, string, string, string][] = [
    ['empty image ("image":"" is still written)', 'a', '', '33f2e30'],
    ['our test image', 'app', 'localhost/kubelet-ts/busybox:latest', '50fab14c'],
    ['a 264-character image; no leading zeros', 'main', `registry.example.com/${'x'.repeat(240)}:v1`, 'aa2f6e9'],
    ['six digits: FormatUint pads nothing', 'c', 'busybox:298', '1663d5'],
    ['non-ASCII is written as raw UTF-8', 'café', 'registry.example/ünïcode/日本語:タグ', 'dd228675'],
    ['outside the BMP (a surrogate pair, 4 UTF-8 bytes)', 'emoji', '😀/img:1', '36d277a5'],
    ['HTML-escaped: & < > as \\u0026 \\u003c \\u003e', 'web', 'example.com/a&b<c>d', 'ffae2eaa'],
    ['U+2028 and U+2029 escaped', 'web', 'line\u2028sep\u2029par', 'afbed07b'],
    ['control chars, DEL, quotes, backslashes (Go 1.22+ \\b \\f)', 'web', 'tab\there\x01\x7f\b\f\n\r"q"\\', '77e6335d'],
    ['a lone surrogate is U+FFFD, as Go decoded it', 'web', 'lone\ud800surrogate', '5913055a'],
  ];
  for (const [what, name, image, want] of cases) it(what, () => assert.equal(hashContainer({ name, image }), want));

  it('no image at all hashes as the empty one', () => {
    assert.equal(hashContainer({ name: 'a' } as Container), '33f2e30');
  });

  it("Go's string escapes", () => {
    assert.equal(goJsonString('a&<>\u2028"\\\t\x1f\x7fé'), '"a\\u0026\\u003c\\u003e\\u2028\\"\\\\\\t\\u001f\x7fé"');
  });

  it('only name and image count (upstream pickFieldsToHash)', () => {
    const base: Container = { name: 'a', image: 'busybox:1.36' };
    const same = {
      ...base,
      command: ['sleep', '1'],
      env: [{ name: 'X', value: '1' }],
      resources: { limits: { cpu: '2' } },
    };
    assert.equal(hashContainer(same), hashContainer(base));
    assert.notEqual(hashContainer({ ...base, image: 'busybox:1.37' }), hashContainer(base));
    assert.notEqual(hashContainer({ ...base, name: 'b' }), hashContainer(base));
  });
});

describe('containerHashMatches', () => {
  const spec: Container = {
    name: 'app',
    image: 'localhost/kubelet-ts/busybox:latest',
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', 'sleep 3600'],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    resources: {},
  };
  // What kubelet-ts wrote for `spec` before it followed upstream (its 16-digit SHA-256 prefix).
  const legacy = 'd2057f3c6a27e740';
  const cases: { name: string; annotated: string; c?: Container; want: boolean }[] = [
    { name: "upstream's FormatUint form", annotated: '50fab14c', want: true },
    { name: 'upper case parses to the same number', annotated: '50FAB14C', want: true },
    { name: 'leading zeros parse to the same number', annotated: '0000000050fab14c', want: true },
    { name: 'another hash', annotated: '50fab14d', want: false },
    { name: 'absent or malformed (read as "")', annotated: '', want: false },
    { name: 'not hex', annotated: 'stale', want: false },
    { name: "kubelet-ts's pre-upstream hash of the same spec: adopted", annotated: legacy, want: true },
    {
      name: "kubelet-ts's pre-upstream hash, spec changed since (any field, as that version decided)",
      annotated: legacy,
      c: { ...spec, command: ['sh', '-c', 'sleep 1'] },
      want: false,
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(containerHashMatches(tc.c ?? spec, tc.annotated), tc.want));

  it('the legacy hash is the one the previous versions wrote (pinned values)', () => {
    assert.equal(legacyHashContainer(spec), legacy);
    assert.equal(legacyHashContainer({ name: 'a', image: 'busybox' }), '5b4b0e9928cd2a4f');
    // Key order and empty values did not matter to it.
    assert.equal(legacyHashContainer({ image: 'busybox', name: 'a', env: [] }), '5b4b0e9928cd2a4f');
  });
});
