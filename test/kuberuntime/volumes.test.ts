/** Downward API values and volume files, the atomic writer, memory emptyDir sizing, volume cleanup. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container } from '../../src/api/types.js';
import { containerResourceValue, downwardAPIPayload, resourceFieldRefValue } from '../../src/kuberuntime/downward-api.js';
import { EnvError, makeEnvironmentVariables } from '../../src/kuberuntime/env.js';
import { downwardContext } from '../../src/kuberuntime/container-config.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { emptyDirMemorySize, removePodVolumes, writeAtomic } from '../../src/kuberuntime/volumes.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, makePod } from './helpers.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const alloc = { cpu: 4000, memory: 8 * GiB };
const limited = (limits: Record<string, string>, requests?: Record<string, string>): Container =>
  container('main', { resources: { limits, ...(requests ? { requests } : {}) } });

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kuberuntime-volumes-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('resourceFieldRef (upstream ExtractContainerResourceValue, limits defaulted to allocatable)', () => {
  const c = limited({ cpu: '250m', memory: '100Mi' });
  const cases: Array<[string, string | undefined, Container, string]> = [
    ['limits.cpu', undefined, c, '1'],
    ['limits.cpu', '1m', c, '250'],
    ['limits.cpu', '100m', c, '3'],
    ['limits.memory', undefined, c, String(100 * MiB)],
    ['limits.memory', '1Mi', c, '100'],
    ['limits.memory', '1Gi', c, '1'],
    ['requests.cpu', '1m', c, '250'],
    ['requests.memory', '1Mi', limited({ memory: '100Mi' }, { memory: '10Mi' }), '10'],
    ['limits.cpu', undefined, container('none'), '4'],
    ['limits.memory', '1Gi', container('none'), '8'],
    ['requests.cpu', '1m', container('none'), '0'],
  ];
  for (const [resource, divisor, ctr, want] of cases) {
    it(`${ctr.name} ${resource} / ${divisor ?? '1'} = ${want}`, () => {
      assert.equal(containerResourceValue({ resource, ...(divisor ? { divisor } : {}) }, ctr, alloc), want);
    });
  }
  it('unknown resources and containers are EnvErrors', () => {
    assert.throws(() => containerResourceValue({ resource: 'limits.gpu' }, c, alloc), EnvError);
    assert.throws(() => resourceFieldRefValue(makePod(), undefined, { resource: 'limits.cpu', containerName: 'nope' }, alloc), /not found/);
  });
  it('env valueFrom.resourceFieldRef, own container or a named one', () => {
    const pod = makePod({ containers: [limited({ cpu: '2', memory: '1Gi' }), container('side')] });
    const side = pod.spec!.containers[1]!;
    side.env = [
      { name: 'OWN', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      { name: 'MAIN', valueFrom: { resourceFieldRef: { containerName: 'main', resource: 'limits.cpu' } } },
    ];
    const ctx = downwardContext(pod, { nodeName: 'n', hostIP: '', podIP: '', podIPs: [] }, alloc);
    assert.deepEqual(makeEnvironmentVariables(pod, side, ctx), [{ key: 'OWN', value: '8192' }, { key: 'MAIN', value: '2' }]);
  });
});

describe('downwardAPI volume payload', () => {
  const pod = makePod({ containers: [limited({ cpu: '500m' })] });
  pod.metadata!.labels = { b: '2', a: '1' };
  const ctx = { nodeName: 'n', hostIP: '', podIP: '', podIPs: [] };
  it('fieldRefs and resourceFieldRefs with modes', () => {
    const p = downwardAPIPayload(pod, {
      defaultMode: 0o600,
      items: [
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
        { path: 'a', fieldRef: { fieldPath: "metadata.labels['a']" } },
        { path: 'x/cpu', resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' }, mode: 0o644 },
      ],
    }, ctx, alloc);
    assert.deepEqual([...p], [
      ['labels', { data: 'a="1"\nb="2"', mode: 0o600 }],
      ['a', { data: '1', mode: 0o600 }],
      ['x/cpu', { data: '500', mode: 0o644 }],
    ]);
  });
  it('rejects paths leaving the volume and fields volumes cannot have', () => {
    assert.throws(() => downwardAPIPayload(pod, { items: [{ path: '../x', fieldRef: { fieldPath: 'metadata.name' } }] }, ctx, alloc), EnvError);
    assert.throws(() => downwardAPIPayload(pod, { items: [{ path: '/abs', fieldRef: { fieldPath: 'metadata.name' } }] }, ctx, alloc), EnvError);
    assert.throws(() => downwardAPIPayload(pod, { items: [{ path: 'ip', fieldRef: { fieldPath: 'status.podIP' } }] }, ctx, alloc), /not supported in volumes/);
  });
});

describe('writeAtomic (upstream AtomicWriter layout)', () => {
  it('writes through ..data, swaps on change, leaves an unchanged payload alone', async () => {
    const d = join(dir, 'atomic');
    await writeAtomic(d, new Map([['name', { data: 'web', mode: 0o644 }], ['sub/cpu', { data: '1', mode: 0o600 }]]));
    const first = await readlink(join(d, '..data'));
    assert.equal(await readFile(join(d, 'name'), 'utf8'), 'web');
    assert.equal(await readFile(join(d, 'sub', 'cpu'), 'utf8'), '1');
    assert.ok((await lstat(join(d, 'name'))).isSymbolicLink());
    assert.equal((await stat(join(d, 'sub', 'cpu'))).mode & 0o777, 0o600);
    await writeAtomic(d, new Map([['name', { data: 'web', mode: 0o644 }], ['sub/cpu', { data: '1', mode: 0o600 }]]));
    assert.equal(await readlink(join(d, '..data')), first, 'unchanged: not rewritten');
    await writeAtomic(d, new Map([['name', { data: 'api', mode: 0o644 }]]));
    assert.notEqual(await readlink(join(d, '..data')), first);
    assert.equal(await readFile(join(d, 'name'), 'utf8'), 'api');
    assert.equal(existsSync(join(d, 'sub')), false, 'a top-level entry no longer in the payload goes');
    assert.deepEqual((await readdir(d)).filter((e) => e.startsWith('..')).length, 2, '..data and one versioned directory');
  });
});

describe('memory-backed emptyDir size (upstream calculateEmptyDirMemorySize)', () => {
  const pod = (limits?: Record<string, string>) => makePod({ containers: [container('a', limits ? { resources: { limits } } : {})] });
  it('node allocatable, lowered to the pod memory limit, then to sizeLimit', () => {
    assert.equal(emptyDirMemorySize(pod(), undefined, 8 * GiB), 8 * GiB);
    assert.equal(emptyDirMemorySize(pod({ memory: '1Gi' }), undefined, 8 * GiB), GiB);
    assert.equal(emptyDirMemorySize(pod({ memory: '1Gi' }), '64Mi', 8 * GiB), 64 * MiB);
    assert.equal(emptyDirMemorySize(pod({ memory: '1Gi' }), '2Gi', 8 * GiB), GiB, 'a sizeLimit above what the pod may use does not raise it');
    assert.equal(emptyDirMemorySize(pod(), '0', 8 * GiB), 8 * GiB, 'zero is no limit');
  });
});

describe('downwardAPI volumes through syncPod, and cleanup', () => {
  it('files exist, the mount is read-only, removePodVolumes deletes them', async () => {
    const fake = new FakeRuntimeService();
    fake.addImage('busybox:1.36');
    const root = join(dir, 'root');
    const rt = createRuntimeManager({ runtime: fake, images: fake, podLogsDir: join(dir, 'logs'), rootDir: root, nodeName: 'n', resolvConf: '', cgroupsPerQOS: false });
    const pod = makePod({ containers: [container('a', { volumeMounts: [{ name: 'info', mountPath: '/info' }, { name: 'scratch', mountPath: '/scratch' }] })] });
    pod.spec!.volumes = [{ name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } }, { name: 'scratch', emptyDir: {} }];
    const r = await rt.syncPod(pod, await rt.getPodStatus('uid-1234', 'web', 'default'));
    assert.deepEqual([...r.waiting], []);
    const mounts = fake.containersNamed('a')[0]!.config.mounts;
    const info = mounts.find((m) => m.containerPath === '/info')!;
    assert.equal(info.readonly, true);
    assert.equal(await readFile(join(info.hostPath, 'name'), 'utf8'), 'web');
    await removePodVolumes(root, 'uid-1234');
    assert.equal(existsSync(join(root, 'pods', 'uid-1234')), false);
  });
});
