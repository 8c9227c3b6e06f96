/**
 * The device manager checkpoint against files upstream kubelets wrote (published in public docs
 * and issues; the checksums are theirs): read, verify, write back byte for byte. Upstream:
 * pkg/kubelet/cm/devicemanager/checkpoint (TestCheckpoint in manager_test.go round-trips it).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  checkpointChecksum,
  decodeCheckpoint,
  encodeCheckpoint,
  readCheckpointFile,
  writeCheckpointFile,
  type CheckpointData,
} from '../../src/devicemanager/checkpoint.js';
import { decodeContainerResponse, encodeContainerResponse } from '../../src/devicemanager/proto.js';
import { DeviceCheckpointError } from '../../src/errors.js';
import { testTempDir } from '../support/temp-dir.js';

/** Real kubelet_internal_checkpoint files: no entry (pre-NUMA era), NUMA -1, NUMA 0, NUMA 1. */
const GOLDEN: string[] = [
  '{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280}',
  '{"Data":{"PodDeviceEntries":[{"PodUID":"bf52b2cd-b611-4e79-86b1-280b283185c3","ContainerName":"check","ResourceName":"nvidia.com/gpu","DeviceIDs":{"-1":["tegra"]},"AllocResp":"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh"}],"RegisteredDevices":{"nvidia.com/gpu":["tegra"]}},"Checksum":3660592824}',
  '{"Data":{"PodDeviceEntries":[{"PodUID":"513cb897-0262-4868-826f-aa943ee45a38","ContainerName":"app","ResourceName":"nvidia.com/gpu","DeviceIDs":{"0":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c"]},"AllocResp":"CkIKFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSKEdQVS03N2E3MDJkYi1lMzdmLTNhNzQtZDQ2ZC1jNTcxM2Y2NjA1OGMaJAoOL2Rldi9udmlkaWFjdGwSDi9kZXYvbnZpZGlhY3RsGgJydxomCg8vZGV2L252aWRpYS11dm0SDy9kZXYvbnZpZGlhLXV2bRoCcncaMgoVL2Rldi9udmlkaWEtdXZtLXRvb2xzEhUvZGV2L252aWRpYS11dm0tdG9vbHMaAnJ3Gi4KEy9kZXYvbnZpZGlhLW1vZGVzZXQSEy9kZXYvbnZpZGlhLW1vZGVzZXQaAnJ3GiAKDC9kZXYvbnZpZGlhMBIML2Rldi9udmlkaWEwGgJydw=="}],"RegisteredDevices":{"nvidia.com/gpu":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c","GPU-9b341c59-f96b-ba85-c137-78c3652fea65","GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]}},"Checksum":133412836}',
  '{"Data":{"PodDeviceEntries":[{"PodUID":"f21fe02b-e6e2-4d04-9a4a-9e57367fa324","ContainerName":"app","ResourceName":"nvidia.com/gpu","DeviceIDs":{"1":["GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]},"AllocResp":"CkIKFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSKEdQVS1jMWU5ZjI0OS1iMzdiLTgxYzItYThkOS1iYTVjYTAyOTQ4NDEaJAoOL2Rldi9udmlkaWFjdGwSDi9kZXYvbnZpZGlhY3RsGgJydxomCg8vZGV2L252aWRpYS11dm0SDy9kZXYvbnZpZGlhLXV2bRoCcncaMgoVL2Rldi9udmlkaWEtdXZtLXRvb2xzEhUvZGV2L252aWRpYS11dm0tdG9vbHMaAnJ3Gi4KEy9kZXYvbnZpZGlhLW1vZGVzZXQSEy9kZXYvbnZpZGlhLW1vZGVzZXQaAnJ3GiAKDC9kZXYvbnZpZGlhMhIML2Rldi9udmlkaWEyGgJydw=="}],"RegisteredDevices":{"nvidia.com/gpu":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c","GPU-9b341c59-f96b-ba85-c137-78c3652fea65","GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]}},"Checksum":2941906560}',
];
const GOLDEN_SUMS = [3952659280, 3660592824, 133412836, 2941906560];

describe('checkpoint golden files (upstream-written)', () => {
  GOLDEN.forEach((text, i) => {
    it(`vector ${i}: verifies, and encodes back to the same bytes`, () => {
      const data = decodeCheckpoint(text);
      assert.equal(checkpointChecksum(data), GOLDEN_SUMS[i]);
      assert.equal(encodeCheckpoint(data), text);
    });
  });

  it('the NUMA -1 entry decodes: devices, response envs', () => {
    const data = decodeCheckpoint(GOLDEN[1]!);
    const e = data.podDeviceEntries![0]!;
    assert.deepEqual([...e.deviceIds!], [[-1, ['tegra']]]);
    assert.deepEqual(decodeContainerResponse(e.allocResp!).envs, { NVIDIA_VISIBLE_DEVICES: 'tegra' });
  });

  it('a NUMA node key is kept (vector with node 1)', () => {
    const e = decodeCheckpoint(GOLDEN[3]!).podDeviceEntries![0]!;
    assert.deepEqual([...e.deviceIds!.keys()], [1]);
    assert.equal(decodeContainerResponse(e.allocResp!).devices.length, 5);
  });
});

describe('checkpoint shapes', () => {
  const base = (over: Partial<CheckpointData>): CheckpointData => ({
    podDeviceEntries: null,
    registeredDevices: new Map([['example.com/dev', ['b', 'a']]]),
    ...over,
  });
  const entry = { podUid: 'u', containerName: 'c', resourceName: 'example.com/dev' };
  const cases: Array<{ name: string; data: CheckpointData; json: string }> = [
    {
      name: 'no entries is null; ids keep their order',
      data: base({}),
      json: '{"PodDeviceEntries":null,"RegisteredDevices":{"example.com/dev":["b","a"]}}',
    },
    { name: 'empty entries is []', data: base({ podDeviceEntries: [] }), json: '{"PodDeviceEntries":[],' },
    {
      name: 'an empty healthy set is [], a nil one null',
      data: base({
        registeredDevices: new Map([
          ['x.io/b', []],
          ['x.io/a', null],
        ]),
      }),
      json: '"RegisteredDevices":{"x.io/a":null,"x.io/b":[]}',
    },
    {
      name: 'a nil AllocResp is null; NUMA keys sort as strings',
      data: base({
        podDeviceEntries: [
          {
            ...entry,
            deviceIds: new Map([
              [10, ['x']],
              [2, ['y']],
              [-1, null],
            ]),
            allocResp: null,
          },
        ],
      }),
      json: '"DeviceIDs":{"-1":null,"10":["x"],"2":["y"]},"AllocResp":null}',
    },
    {
      name: 'strings are escaped as Go does',
      data: base({ podDeviceEntries: [{ ...entry, podUid: 'a<b>&', deviceIds: null, allocResp: Buffer.from([1]) }] }),
      json: '"PodUID":"a\\u003cb\\u003e\\u0026"',
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const text = encodeCheckpoint(c.data);
      assert.ok(text.includes(c.json), text);
      assert.equal(encodeCheckpoint(decodeCheckpoint(text)), text, 'round trip');
    });

  it('nil and empty hash differently (both verify)', () => {
    assert.notEqual(
      checkpointChecksum(base({ podDeviceEntries: null })),
      checkpointChecksum(base({ podDeviceEntries: [] })),
    );
  });

  it('missing fields read as upstream pre-fills them: entries [], map[]', () => {
    const sum = checkpointChecksum({ podDeviceEntries: [], registeredDevices: new Map() });
    const data = decodeCheckpoint(`{"Data":{},"Checksum":${sum}}`);
    assert.deepEqual(data, { podDeviceEntries: [], registeredDevices: new Map() });
  });
});

describe('checkpoint refusals', () => {
  const bad: Array<[string, string, RegExp]> = [
    ['a wrong checksum', GOLDEN[1]!.replace('3660592824', '3660592825'), /checkpoint is corrupted/],
    ['a changed device ID', GOLDEN[1]!.replace('["tegra"]}}', '["tegrb"]}}'), /checkpoint is corrupted/],
    ['not JSON', '{"Data":', /not JSON/],
    ['pre-1.20 DeviceIDs array', GOLDEN[1]!.replace('{"-1":["tegra"]}', '["tegra"]'), /DeviceIDs is not an object/],
    ['bad base64', GOLDEN[1]!.replace('"Ch8K', '"%h8K'), /AllocResp is not base64/],
  ];
  for (const [name, text, re] of bad)
    it(name, () =>
      assert.throws(
        () => decodeCheckpoint(text),
        (err: Error) => err instanceof DeviceCheckpointError && re.test(err.message),
      ),
    );
});

describe('checkpoint files', () => {
  it('write (0600, atomic) then read back; a missing file is undefined', () => {
    const dir = testTempDir('dm-cp-');
    assert.equal(readCheckpointFile(dir), undefined);
    const allocResp = encodeContainerResponse({
      envs: { A: '1' },
      devices: [],
      mounts: [],
      annotations: {},
      cdiDevices: [],
    });
    const data: CheckpointData = {
      podDeviceEntries: [
        { podUid: 'u', containerName: 'c', resourceName: 'x.io/d', deviceIds: new Map([[-1, ['d0']]]), allocResp },
      ],
      registeredDevices: new Map([['x.io/d', ['d0', 'd1']]]),
    };
    writeCheckpointFile(dir, data);
    const file = join(dir, 'kubelet_internal_checkpoint');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readCheckpointFile(dir), data);
    assert.equal(readFileSync(file, 'utf8'), encodeCheckpoint(data));
  });

  it('an upstream file on disk is read as it is', () => {
    const dir = testTempDir('dm-cp-');
    writeFileSync(join(dir, 'kubelet_internal_checkpoint'), GOLDEN[2]!);
    const data = readCheckpointFile(dir)!;
    assert.equal(data.podDeviceEntries!.length, 1);
    assert.ok(existsSync(join(dir, 'kubelet_internal_checkpoint')));
  });
});
