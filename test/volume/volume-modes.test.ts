/**
 * Modes and owners of the files of secret, configMap, downwardAPI and projected volumes:
 * defaultMode, items[].mode, fsGroup (upstream SetVolumeOwnership), the projected token's 0600
 * and fsUser, the 0..0777 bound, payload paths; the medium and tmpfs options of each volume type.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { EnvError } from '../../src/fieldpath/index.js';
import {
  configMapPayload,
  downwardAPIPayload,
  projectedPayload,
  secretPayload,
  type ApiDataContext,
  type PayloadContext,
} from '../../src/volume/api-volumes.js';
import { kernelSupportsNoswap, tmpfsOptions } from '../../src/volume/mount.js';
import { DEFAULT_VOLUME_PLUGINS } from '../../src/volume/plugins/index.js';
import type { ApiDataPlugin } from '../../src/volume/plugins/api-data.js';
import { projectedPlugin } from '../../src/volume/plugins/projected.js';
import { ATOMIC_VOLUME_TMPFS_MAX_BYTES, atomicVolumeTmpfsSize } from '../../src/volume/tmpfs.js';
import type { PodObjectSource, VolumeHost } from '../../src/volume/types.js';
import {
  fileMode,
  fsGroupMode,
  fsUserFrom,
  ownedPayload,
  payloadPathProblem,
  volumeDirOwnership,
  volumeOwnership,
} from '../../src/volume/volume-payload.js';
import { FakeMounter } from '../fakes/fake-mounter.js';
import { container, makePod } from '../kuberuntime/helpers.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const alloc = { cpu: 1000, memory: 8 * GiB, ephemeralStorage: 0 };
const objects: PodObjectSource = {
  configMap: (_ns, name) => (name === 'cfg' ? { data: { a: '1', b: '2' } } : null),
  secret: (_ns, name) =>
    name === 'sec'
      ? { data: { user: Buffer.from('u').toString('base64'), key: Buffer.from('k').toString('base64') } }
      : null,
  serviceAccountToken: () => 'tok',
};
const ctx: ApiDataContext = { nodeName: 'n', hostIP: '192.0.2.1', podIP: '10.0.0.1', podIPs: ['10.0.0.1'], objects };
const modes = (m: Map<string, { mode: number }>) => Object.fromEntries([...m].map(([k, v]) => [k, v.mode.toString(8)]));

function withSecurity(pod: Pod, podSc: Record<string, unknown>, containerUsers: Array<number | undefined> = []): Pod {
  pod.spec!.securityContext = podSc;
  containerUsers.forEach((u, i) => {
    if (u !== undefined && pod.spec!.containers[i]) pod.spec!.containers[i]!.securityContext = { runAsUser: u };
  });
  return pod;
}

describe('file modes: defaultMode and items[].mode (upstream defaults and validation)', () => {
  const pc: PayloadContext = { ...ctx, pod: makePod(), allocatable: alloc };

  it('every file is 0644 unless defaultMode says otherwise; an item mode wins over both', () => {
    assert.deepEqual(modes(secretPayload(pc, { secretName: 'sec' })), { user: '644', key: '644' });
    assert.deepEqual(modes(secretPayload(pc, { secretName: 'sec', defaultMode: 0o400 })), { user: '400', key: '400' });
    assert.deepEqual(
      modes(
        secretPayload(pc, {
          secretName: 'sec',
          defaultMode: 0o400,
          items: [
            { key: 'user', path: 'u', mode: 0o444 },
            { key: 'key', path: 'k' },
          ],
        }),
      ),
      { u: '444', k: '400' },
    );
    assert.deepEqual(
      modes(configMapPayload(pc, { name: 'cfg', items: [{ key: 'a', path: 'x/a', mode: 0 }] })),
      { 'x/a': '0' },
      'mode 0 is a mode, not unset',
    );
    const dapi = downwardAPIPayload(pc, {
      defaultMode: 0o440,
      items: [
        { path: 'n', fieldRef: { fieldPath: 'metadata.name' } },
        { path: 'l', fieldRef: { fieldPath: 'metadata.labels' }, mode: 0o400 },
      ],
    });
    assert.deepEqual(modes(dapi), { n: '440', l: '400' });
  });

  it('projected: the volume defaultMode for every source, item modes per source', () => {
    const p = projectedPayload(pc, {
      defaultMode: 0o440,
      sources: [
        { secret: { name: 'sec', items: [{ key: 'key', path: 'tls.key', mode: 0o400 }] } },
        { configMap: { name: 'cfg' } },
        { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        { serviceAccountToken: { path: 'token' } },
      ],
    });
    assert.deepEqual(modes(p), { 'tls.key': '400', a: '440', b: '440', ns: '440', token: '440' });
  });

  it('modes outside 0..0777 are errors that name the field (pods from the API server arrive unvalidated)', () => {
    assert.equal(fileMode(undefined, 0o644, 'defaultMode'), 0o644);
    assert.equal(fileMode(0o777, 0o644, 'defaultMode'), 0o777);
    for (const bad of [-1, 0o1000, 0o4755, 1.5, '0644', true]) {
      assert.throws(
        () => fileMode(bad, 0o644, 'defaultMode'),
        (e: unknown) =>
          e instanceof EnvError &&
          /^defaultMode: .* must be a number between 0 and 0777 \(octal\), both inclusive$/.test(e.message),
        String(bad),
      );
    }
    assert.throws(
      () => secretPayload(pc, { secretName: 'sec', defaultMode: 0o1000 }),
      /defaultMode: 01000 \(512\) must be a number between 0 and 0777/,
    );
    assert.throws(
      () =>
        configMapPayload(pc, {
          name: 'cfg',
          items: [
            { key: 'a', path: 'a' },
            { key: 'b', path: 'b', mode: 4096 },
          ],
        }),
      /items\[1\]\.mode: 010000 \(4096\)/,
    );
    assert.throws(
      () =>
        projectedPayload(pc, {
          sources: [
            { configMap: { name: 'cfg' } },
            { secret: { name: 'sec', items: [{ key: 'key', path: 'k', mode: -1 }] } },
          ],
        }),
      /sources\[1\]\.secret\.items\[0\]\.mode: -1/,
    );
    assert.throws(
      () => downwardAPIPayload(pc, { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' }, mode: 0o2000 }] }),
      /items\[0\]\.mode: 02000/,
    );
  });
});

describe('fsGroup (upstream SetVolumeOwnership → changeFilePermission)', () => {
  it('read-only volumes: files group-owned and g+r, directories g+rx and setgid; nothing without fsGroup', () => {
    const payload = new Map([
      ['a', { data: '1', mode: 0o400 }],
      ['b', { data: '2', mode: 0o600 }],
      ['c', { data: '3', mode: 0o644 }],
      ['d', { data: '4', mode: 0 }],
    ]);
    const owned = ownedPayload(payload, { fsGroup: 2000 });
    assert.deepEqual(modes(owned), { a: '440', b: '640', c: '644', d: '440' });
    assert.ok([...owned.values()].every((f) => f.gid === 2000 && f.uid === undefined));
    assert.equal(ownedPayload(payload, {}).get('a'), payload.get('a'), 'no fsGroup: as given');
    assert.deepEqual(volumeDirOwnership({ fsGroup: 2000 }), { mode: 0o2755, gid: 2000 });
    assert.deepEqual(volumeDirOwnership({}), { mode: 0o755 });
  });

  it('read-write (emptyDir): g+rw, directories g+rwx and setgid', () => {
    assert.equal(fsGroupMode(0o777, true, false), 0o2777);
    assert.equal(fsGroupMode(0o1777, true, false), 0o3777, 'a tmpfs root keeps its sticky bit');
    assert.equal(fsGroupMode(0o600, false, false), 0o660);
  });

  it('fsGroup out of range is an error; fsUser is the one runAsUser of every container', () => {
    assert.throws(
      () => volumeOwnership(withSecurity(makePod(), { fsGroup: -5 })),
      /securityContext\.fsGroup: -5 must be between 0 and 2147483647/,
    );
    assert.throws(() => volumeOwnership(withSecurity(makePod(), { fsGroup: 2 ** 31 })), EnvError);
    assert.deepEqual(volumeOwnership(withSecurity(makePod(), { fsGroup: 0 })), { fsGroup: 0 });
    assert.equal(
      fsUserFrom(withSecurity(makePod(), { runAsUser: 1000 })),
      1000,
      'the pod-level runAsUser covers every container',
    );
    assert.equal(fsUserFrom(withSecurity(makePod(), {}, [1000, 1000])), 1000);
    assert.equal(fsUserFrom(withSecurity(makePod(), {}, [1000, 1001])), undefined, 'two users: none');
    assert.equal(fsUserFrom(withSecurity(makePod(), {}, [1000])), undefined, 'a container without a user: none');
    const init = withSecurity(makePod({ initContainers: [container('init')] }), {}, [1000, 1000]);
    assert.equal(fsUserFrom(init), undefined, 'init containers count');
  });

  it('the projected token: defaultMode without fsGroup/fsUser; 0600 owned by fsUser, then 0640 with fsGroup', () => {
    const src = {
      sources: [
        { serviceAccountToken: { path: 'token' } },
        { secret: { name: 'sec', items: [{ key: 'key', path: 'key' }] } },
      ],
    };
    const host: VolumeHost = {
      rootDir: '',
      mounter: new FakeMounter(),
      allocatable: alloc,
      objects,
      nodeName: 'n',
      hostIP: '',
    };
    const volume = (pod: Pod) => projectedPlugin.contents(pod, { name: 'p', projected: src }, host);
    const plain = volume(makePod()).files;
    assert.deepEqual(modes(plain), { token: '644', key: '644' });
    const user = volume(withSecurity(makePod(), { runAsUser: 1000 })).files;
    assert.deepEqual(modes(user), { token: '600', key: '644' });
    assert.equal(user.get('token')!.uid, 1000);
    assert.equal(user.get('key')!.uid, undefined, 'only the token is owned by fsUser (upstream FileProjection.FsUser)');
    const group = volume(withSecurity(makePod(), { fsGroup: 3000 }));
    assert.deepEqual(modes(group.files), { token: '640', key: '644' });
    assert.equal(group.files.get('token')!.gid, 3000);
    assert.deepEqual(group.dir, { mode: 0o2755, gid: 3000 });
  });
});

describe('payload paths (upstream AtomicWriter validatePath)', () => {
  it('relative, no .. component, not starting with .., bounded', () => {
    for (const ok of ['a', 'a/b', '.hidden', 'x..y', 'a/..b']) assert.equal(payloadPathProblem(ok), undefined, ok);
    assert.match(payloadPathProblem('')!, /empty/);
    assert.match(payloadPathProblem('/etc/passwd')!, /relative/);
    assert.match(payloadPathProblem('../x')!, /'\.\.'/);
    assert.match(payloadPathProblem('a/../../x')!, /'\.\.'/);
    assert.match(payloadPathProblem('..data')!, /start with '\.\.'/);
    assert.match(payloadPathProblem('..2024_01_01/x')!, /start with '\.\.'/);
    assert.match(payloadPathProblem('a//b')!, /empty or '\.'/);
    assert.match(payloadPathProblem('./a')!, /empty or '\.'/);
    assert.match(payloadPathProblem('x'.repeat(256))!, /255/);
    assert.match(payloadPathProblem('a/'.repeat(2100) + 'b')!, /4096/);
  });
});

describe('the medium under each volume type (upstream wrapped emptyDir)', () => {
  const pod = makePod();
  it('secret, projected and downwardAPI on tmpfs; configMap on disk', () => {
    const pluginFor = (v: object) => DEFAULT_VOLUME_PLUGINS.find((p) => p.canSupport({ name: 'v', ...v }));
    const medium = (v: object) => {
      const a = pluginFor(v) as ApiDataPlugin;
      return [a.name, a.medium];
    };
    assert.deepEqual(medium({ secret: { secretName: 'sec' } }), ['kubernetes.io~secret', 'Memory']);
    assert.deepEqual(medium({ projected: { sources: [] } }), ['kubernetes.io~projected', 'Memory']);
    assert.deepEqual(medium({ downwardAPI: { items: [] } }), ['kubernetes.io~downward-api', 'Memory']);
    assert.deepEqual(medium({ configMap: { name: 'cfg' } }), ['kubernetes.io~configmap', '']);
    assert.equal(pluginFor({ emptyDir: {} })?.requiresRemount, false, 'emptyDir is no API data volume: set up once');
  });

  it('tmpfs size: the pod memory limit or allocatable, at most 64 MiB; options with mode and noswap', () => {
    const limited = makePod({ containers: [container('a', { resources: { limits: { memory: '16Mi' } } })] });
    assert.equal(atomicVolumeTmpfsSize(limited, 8 * GiB), 16 * MiB);
    assert.equal(atomicVolumeTmpfsSize(pod, 8 * GiB), ATOMIC_VOLUME_TMPFS_MAX_BYTES);
    assert.equal(atomicVolumeTmpfsSize(pod, 0), ATOMIC_VOLUME_TMPFS_MAX_BYTES, 'unknown allocatable: still bounded');
    assert.equal(ATOMIC_VOLUME_TMPFS_MAX_BYTES, 64 * MiB);
    assert.deepEqual(tmpfsOptions({ sizeBytes: 16 * MiB, mode: 0o755 }, true), [
      'size=16777216',
      'mode=0755',
      'noswap',
    ]);
    assert.deepEqual(tmpfsOptions({ sizeBytes: 0 }, false), []);
    assert.equal(kernelSupportsNoswap('6.4.0'), true);
    assert.equal(kernelSupportsNoswap('6.18.44-fc'), true);
    assert.equal(kernelSupportsNoswap('6.1.0-18-amd64'), false);
    assert.equal(kernelSupportsNoswap('5.15.0'), false);
    assert.equal(kernelSupportsNoswap('7.0'), true);
  });
});
