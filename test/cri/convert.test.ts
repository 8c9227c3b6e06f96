import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  containerFromWire,
  containerState,
  containerStatusFromWire,
  imageFromWire,
  namespaceMode,
  podSandboxStatusFromWire,
  sandboxState,
  toBigInt,
  toWire,
  wrappedBigInt,
} from '../../src/cri/convert.js';
import { grpcTarget } from '../../src/cri/channel.js';
import { ConfigError } from '../../src/errors.js';

test('int64 strings become exact bigints (beyond 2^53)', () => {
  assert.equal(toBigInt('1795322123288808676'), 1795322123288808676n);
  assert.equal(toBigInt('-5'), -5n);
  assert.equal(toBigInt('0'), 0n);
  assert.equal(toBigInt(undefined), 0n);
  assert.equal(toBigInt(null), 0n);
  assert.equal(toBigInt(42), 42n);
  assert.equal(toBigInt(18446744073709551615n), 18446744073709551615n);
  // A Long-shaped object (longs: Long): 2^32 + 1.
  assert.equal(toBigInt({ low: 1, high: 1, unsigned: false }), 4294967297n);
  assert.equal(toBigInt({ low: -1, high: -1, unsigned: false }), -1n);
  assert.equal(toBigInt({ low: -1, high: -1, unsigned: true }), 18446744073709551615n);
});

test('wrapped (U)Int64Value: unset is undefined, set is bigint', () => {
  assert.equal(wrappedBigInt(null), undefined);
  assert.equal(wrappedBigInt(undefined), undefined);
  assert.equal(wrappedBigInt({ value: '0' }), 0n);
  assert.equal(wrappedBigInt({ value: '123' }), 123n);
});

test('toWire turns bigints into decimal strings, deeply, and drops undefined', () => {
  const w = toWire({ a: 1n, b: [2n, { c: 3n }], d: 'x', e: undefined, f: Buffer.from('hi') });
  assert.deepEqual(w, { a: '1', b: ['2', { c: '3' }], d: 'x', f: Buffer.from('hi') });
  assert.ok(!('e' in w));
});

test('enum names pass through; numbers (newer runtimes) map by value; unknowns fall back safely', () => {
  assert.equal(namespaceMode('NODE'), 'NODE');
  assert.equal(namespaceMode(2), 'NODE');
  assert.equal(namespaceMode(undefined), 'POD');
  assert.equal(sandboxState('SANDBOX_READY'), 'SANDBOX_READY');
  assert.equal(sandboxState(7), 'SANDBOX_NOTREADY');
  assert.equal(containerState('CONTAINER_EXITED'), 'CONTAINER_EXITED');
  assert.equal(containerState(1), 'CONTAINER_RUNNING');
  assert.equal(containerState('CONTAINER_WHATEVER'), 'CONTAINER_UNKNOWN');
});

test('PodSandboxStatus: network mode comes from linux.namespaces.options.network', () => {
  const s = podSandboxStatusFromWire({
    id: 'sb',
    metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 1 },
    state: 'SANDBOX_READY',
    createdAt: '1700000000000000001',
    network: { ip: '10.0.0.2', additionalIps: [{ ip: 'fd00::2' }] },
    linux: { namespaces: { options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD', targetId: '' } } },
    labels: { a: 'b' },
    annotations: {},
    runtimeHandler: '',
  });
  assert.equal(s.networkNamespaceMode, 'NODE');
  assert.equal(s.createdAt, 1700000000000000001n);
  assert.deepEqual(s.network, { ip: '10.0.0.2', additionalIps: ['fd00::2'] });
  assert.deepEqual(s.metadata, { name: 'p', uid: 'u', namespace: 'ns', attempt: 1 });
  assert.equal(podSandboxStatusFromWire({ linux: null }).networkNamespaceMode, 'POD');
});

test('Container and ContainerStatus flatten ImageSpec and convert timestamps', () => {
  const c = containerFromWire({
    id: 'c1',
    podSandboxId: 'sb',
    metadata: { name: 'app', attempt: 3 },
    image: { image: 'busybox', annotations: {} },
    imageRef: 'sha256:abc',
    state: 'CONTAINER_RUNNING',
    createdAt: '12',
    labels: {},
    annotations: { x: 'y' },
    imageId: '',
  });
  assert.equal(c.image, 'busybox');
  assert.equal(c.createdAt, 12n);
  assert.equal(c.metadata.attempt, 3);
  assert.ok(!('imageId' in c));
  const st = containerStatusFromWire({
    id: 'c1',
    metadata: { name: 'app', attempt: 0 },
    state: 'CONTAINER_EXITED',
    createdAt: '1',
    startedAt: '2',
    finishedAt: '3',
    exitCode: 137,
    image: { image: 'busybox' },
    imageRef: 'sha256:abc',
    reason: 'OOMKilled',
    message: '',
    labels: {},
    annotations: {},
    logPath: '/l/app/0.log',
    resources: {
      linux: {
        cpuPeriod: '100000',
        cpuQuota: '50000',
        cpuShares: '512',
        memoryLimitInBytes: '67108864',
        oomScoreAdj: '1000',
      },
    },
  });
  assert.deepEqual([st.createdAt, st.startedAt, st.finishedAt], [1n, 2n, 3n]);
  assert.equal(st.exitCode, 137);
  assert.equal(st.reason, 'OOMKilled');
  assert.deepEqual(st.resources, {
    cpuPeriod: 100000,
    cpuQuota: 50000,
    cpuShares: 512,
    memoryLimitInBytes: 67108864,
    oomScoreAdj: 1000,
  });
});

test('Image: uint64 size, optional uid/username', () => {
  const img = imageFromWire({
    id: 'sha256:x',
    repoTags: ['a:b'],
    repoDigests: [],
    size: '18446744073709551615',
    uid: { value: '65534' },
    username: '',
    pinned: true,
  });
  assert.equal(img.size, 18446744073709551615n);
  assert.equal(img.uid, 65534n);
  assert.equal(img.pinned, true);
  assert.ok(!('username' in img));
  assert.equal(imageFromWire({ id: 'x', size: '1', uid: null, username: 'nobody' }).username, 'nobody');
});

test('grpcTarget accepts kubelet endpoint forms and rejects other schemes', () => {
  assert.equal(grpcTarget('unix:///run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
  assert.equal(grpcTarget('/run/containerd/containerd.sock'), 'unix:///run/containerd/containerd.sock');
  assert.equal(grpcTarget('unix:rel/cri.sock'), 'unix:rel/cri.sock');
  assert.equal(grpcTarget('unix://rel/cri.sock'), 'unix:rel/cri.sock');
  assert.equal(grpcTarget('rel/cri.sock'), 'unix:rel/cri.sock');
  assert.throws(() => grpcTarget('tcp://127.0.0.1:1234'), ConfigError);
  assert.throws(() => grpcTarget('unix://'), ConfigError);
  assert.throws(() => grpcTarget(''), ConfigError);
});
