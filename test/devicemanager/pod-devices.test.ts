/**
 * The pod devices table and the run options it builds. Upstream: pod_devices_test.go
 * (TestGetContainerDevices, TestDeviceRunContainerOptions): envs and annotations by key, devices
 * and mounts by container path, the first wins; CDI names once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PodDevices } from '../../src/devicemanager/pod-devices.js';
import { encodeContainerResponse } from '../../src/devicemanager/proto.js';
import type { ContainerAllocateResponse } from '../../src/devicemanager/types.js';

const resp = (r: Partial<ContainerAllocateResponse>): Buffer => encodeContainerResponse(r);

function table(): PodDevices {
  const pd = new PodDevices();
  const at = (resource: string) => ({ podUid: 'p', container: 'c', resource });
  pd.insert(
    at('b.io/dev'),
    new Map([[-1, ['b1']]]),
    resp({
      envs: { SHARED: 'from-b', B: '1' },
      devices: [{ containerPath: '/dev/x', hostPath: '/dev/hb', permissions: 'rw' }],
      mounts: [{ containerPath: '/m', hostPath: '/hb', readOnly: false }],
      annotations: { note: 'b' },
      cdiDevices: [{ name: 'v.io/c=1' }, { name: 'v.io/c=2' }],
    }),
  );
  pd.insert(
    at('a.io/dev'),
    new Map([
      [0, ['a1']],
      [1, ['a1', 'a2']],
    ]),
    resp({
      envs: { SHARED: 'from-a', A: '1' },
      devices: [{ containerPath: '/dev/x', hostPath: '/dev/ha', permissions: 'r' }],
      mounts: [{ containerPath: '/m', hostPath: '/ha', readOnly: true }],
      annotations: { note: 'a' },
      cdiDevices: [{ name: 'v.io/c=1' }],
    }),
  );
  return pd;
}

describe('PodDevices', () => {
  it('deviceRunContainerOptions: resources in name order, the first value of a key wins, CDI deduplicated', () => {
    const opts = table().deviceRunContainerOptions('p', 'c')!;
    assert.deepEqual(opts.envs, [
      { name: 'A', value: '1' },
      { name: 'SHARED', value: 'from-a' },
      { name: 'B', value: '1' },
    ]);
    assert.deepEqual(opts.devices, [{ pathOnHost: '/dev/ha', pathInContainer: '/dev/x', permissions: 'r' }]);
    assert.deepEqual(opts.mounts, [
      { name: '/m', containerPath: '/m', hostPath: '/ha', readOnly: true, selinuxRelabel: false },
    ]);
    assert.deepEqual(opts.annotations, [{ name: 'note', value: 'a' }]);
    assert.deepEqual(opts.cdiDevices, [{ name: 'v.io/c=1' }, { name: 'v.io/c=2' }]);
  });

  it('no entry: undefined', () => {
    assert.equal(table().deviceRunContainerOptions('p', 'other'), undefined);
    assert.equal(table().deviceRunContainerOptions('q', 'c'), undefined);
  });

  it('TestGetContainerDevices: NUMA nodes per device, none for -1', () => {
    assert.deepEqual(table().getContainerDevices('p', 'c'), {
      'a.io/dev': { a1: { numaNodes: [0, 1] }, a2: { numaNodes: [1] } },
      'b.io/dev': { b1: { numaNodes: [] } },
    });
  });

  it('devices(), containerDevices(), delete()', () => {
    const pd = table();
    assert.deepEqual([...pd.containerDevices('p', 'c', 'a.io/dev')!].sort(), ['a1', 'a2']);
    assert.equal(pd.containerDevices('p', 'c', 'z.io/dev'), undefined);
    assert.deepEqual(
      [...pd.devices()].map(([r, s]) => [r, [...s].sort()]),
      [
        ['b.io/dev', ['b1']],
        ['a.io/dev', ['a1', 'a2']],
      ],
    );
    pd.delete(['p']);
    assert.equal(pd.hasPod('p'), false);
  });

  it('checkpoint entries round trip, sorted, keeping the response bytes', () => {
    const pd = table();
    const entries = pd.toCheckpointData();
    assert.deepEqual(
      entries.map((e) => e.resourceName),
      ['a.io/dev', 'b.io/dev'],
    );
    const back = new PodDevices();
    back.fromCheckpointData([...entries, { ...entries[0]!, containerName: 'bad', allocResp: Buffer.from([0xff]) }]);
    assert.deepEqual(back.toCheckpointData(), entries, 'an undecodable response is skipped');
  });
});
