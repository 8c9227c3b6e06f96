/**
 * Cgroup names under both drivers. The ToCgroupfs/ToSystemd/basename tables are upstream's
 * (pkg/kubelet/cm/cgroup_manager_linux_test.go: TestCgroupNameToCgroupfs, TestCgroupNameToSystemd,
 * TestCgroupNameToSystemdBasename); the slice expansion cases follow runc's ExpandSlice checks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cgroupNameToCgroupfs,
  cgroupNameToSystemd,
  cgroupNaming,
  containerIdOfLeaf,
  expandSlice,
  InvalidSliceError,
  parseSystemdToCgroupName,
  qosCgroupNames,
  systemdSliceName,
} from '../../src/cm/cgroup-name.js';

const ROOT: string[] = [];

describe('cgroup names (upstream cgroup_manager_linux_test.go)', () => {
  it('TestCgroupNameToCgroupfs', () => {
    for (const [input, expected] of [
      [ROOT, '/'],
      [['Burstable'], '/Burstable'],
    ] as const)
      assert.equal(cgroupNameToCgroupfs(input), expected);
  });

  it('TestCgroupNameToSystemd', () => {
    const table: Array<[string[], string]> = [
      [ROOT, '/'],
      [['Burstable'], '/Burstable.slice'],
      [['Burstable', 'pod-123'], '/Burstable.slice/Burstable-pod_123.slice'],
      [
        ['BestEffort', 'pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d'],
        '/BestEffort.slice/BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice',
      ],
      [['kubepods'], '/kubepods.slice'],
    ];
    for (const [input, expected] of table) assert.equal(cgroupNameToSystemd(input), expected, input.join('/'));
  });

  it('TestCgroupNameToSystemdBasename', () => {
    const table: Array<[string[], string]> = [
      [ROOT, '/'],
      [['system'], 'system.slice'],
      [['system', 'Burstable'], 'system-Burstable.slice'],
      [['Burstable', 'pod-123'], 'Burstable-pod_123.slice'],
      [['test', 'a', 'b'], 'test-a-b.slice'],
      [['test', 'a', 'b', 'Burstable'], 'test-a-b-Burstable.slice'],
      [['Burstable'], 'Burstable.slice'],
      [
        ['BestEffort', 'pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d'],
        'BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice',
      ],
    ];
    for (const [input, expected] of table) assert.equal(systemdSliceName(input), expected, input.join('/'));
  });

  it('ParseSystemdToCgroupName inverts ToSystemd (dashes in a component come back)', () => {
    for (const name of [['kubepods'], ['kubepods', 'burstable', 'pod6c1a4e95-6bb6-11e6'], ROOT]) {
      assert.deepEqual(parseSystemdToCgroupName(cgroupNameToSystemd(name)), name);
    }
    assert.deepEqual(parseSystemdToCgroupName('-.slice'), []);
  });
});

describe('expandSlice (runc ExpandSlice)', () => {
  it('expands nested slices and the root', () => {
    assert.equal(expandSlice('-.slice'), '/');
    assert.equal(expandSlice('a.slice'), '/a.slice');
    assert.equal(expandSlice('a-b-c.slice'), '/a.slice/a-b.slice/a-b-c.slice');
  });
  it('refuses what systemd refuses, naming the slice and why', () => {
    for (const bad of ['a.scope', 'a/b.slice', 'a--b.slice', '-a.slice', 'a-.slice', '.slice']) {
      assert.throws(
        () => expandSlice(bad),
        (e: unknown) => e instanceof InvalidSliceError && e.message.includes(`"${bad}"`),
        bad,
      );
    }
  });
});

describe('cgroupNaming', () => {
  const uid = '6c1a4e95-6bb6-11e6-bc26-28d2444e470d';
  it('names the QoS hierarchy and pods in each driver, and reads pod UIDs back', () => {
    const q = qosCgroupNames([]);
    const systemd = cgroupNaming('systemd');
    const cgroupfs = cgroupNaming('cgroupfs');
    assert.equal(
      systemd.format([...q.burstable, `pod${uid}`]),
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid.replace(/-/g, '_')}.slice`,
    );
    assert.equal(cgroupfs.format([...q.besteffort, `pod${uid}`]), `/kubepods/besteffort/pod${uid}`);
    assert.equal(systemd.podUidOfLeaf(`kubepods-burstable-pod${uid.replace(/-/g, '_')}.slice`), uid);
    assert.equal(systemd.podUidOfLeaf('kubepods-burstable.slice'), undefined);
    assert.equal(systemd.podUidOfLeaf(`cri-containerd-abc.scope`), undefined);
    assert.equal(cgroupfs.podUidOfLeaf(`pod${uid}`), uid);
    assert.equal(cgroupfs.podUidOfLeaf('pod'), undefined);
  });
  it('a cgroupRoot in the driver form nests kubepods below it', () => {
    const systemd = cgroupNaming('systemd');
    assert.equal(systemd.path(qosCgroupNames(systemd.parse('/')).kubepods), '/kubepods.slice');
    assert.equal(
      systemd.path(qosCgroupNames(systemd.parse('/kube.slice')).burstable),
      '/kube.slice/kube-kubepods.slice/kube-kubepods-burstable.slice',
    );
    const cgroupfs = cgroupNaming('cgroupfs');
    assert.equal(
      cgroupfs.path(qosCgroupNames(cgroupfs.parse('/test-root')).burstable),
      '/test-root/kubepods/burstable',
    );
  });
  it("container leaves: the id (cgroupfs) or the runtime's scope (systemd)", () => {
    assert.deepEqual(cgroupNaming('cgroupfs').containerLeaves('abc'), ['abc']);
    assert.ok(cgroupNaming('systemd').containerLeaves('abc').includes('cri-containerd-abc.scope'));
    assert.equal(containerIdOfLeaf('cri-containerd-abc.scope'), 'abc');
    assert.equal(containerIdOfLeaf('crio-abc.scope'), 'abc');
    assert.equal(containerIdOfLeaf('abc'), 'abc');
    assert.equal(containerIdOfLeaf('session-1.scope'), undefined);
  });
});
