/**
 * The stats layout finds pod and container cgroups in either driver's naming (plain directories
 * standing in for a cgroup v1 memory hierarchy).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupNaming } from '../../src/cm/cgroup-name.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { testTempDir } from '../support/temp-dir.js';

test('systemd driver: pod slices by UID, containers in their runtime scope, kubepods.slice', () => {
  const root = testTempDir('kts-layout-');
  try {
    const pod = '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_ab.slice';
    mkdirSync(join(root, pod, 'cri-containerd-c1.scope'), { recursive: true });
    mkdirSync(join(root, '/kubepods.slice/kubepods-pod99.slice'), { recursive: true });
    mkdirSync(join(root, '/kubepods.slice/kubepods-besteffort.slice'), { recursive: true });
    const layout = createCgroupLayout({ v1: new Map([[root, ['memory']]]) }, false, cgroupNaming('systemd'));
    assert.deepEqual([...layout.podCgroups('/')].sort(), [
      ['1234-ab', pod],
      ['99', '/kubepods.slice/kubepods-pod99.slice'],
    ]);
    assert.equal(layout.containerCgroup(pod, 'c1'), `${pod}/cri-containerd-c1.scope`);
    assert.equal(layout.kubepods('/'), '/kubepods.slice');
    const cgroupfs = createCgroupLayout({ v1: new Map([[root, ['memory']]]) });
    assert.equal(cgroupfs.containerCgroup('/kubepods/pod1', 'c1'), '/kubepods/pod1/c1');
    assert.equal(cgroupfs.kubepods('/'), '/kubepods');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
