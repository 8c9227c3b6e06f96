import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detachString, mountPointsUnder, parseMountInfo, readMountInfoSync } from '../../src/util/mountinfo.js';
import { parseCgroupMounts } from '../../src/cm/cgroupfs.js';
import { testTempDir } from '../support/temp-dir.js';

const TEXT = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '30 27 0:25 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate',
  '31 27 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct',
  '32 27 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory,clone_children',
  '40 27 0:30 / /mnt/with\\040space rw - tmpfs tmp\\040fs rw,size=1024k',
  'no separator here',
  '',
].join('\n');

test('parseMountInfo: fields, octal escapes, lines without " - " skipped', () => {
  const m = parseMountInfo(TEXT);
  assert.equal(m.length, 5);
  assert.deepEqual(m[4], {
    mountPoint: '/mnt/with space',
    fsType: 'tmpfs',
    source: 'tmp fs',
    superOptions: 'rw,size=1024k',
  });
});

test('parseCgroupMounts: v1 controllers without mount options, the cgroup2 mount', () => {
  const c = parseCgroupMounts(TEXT);
  assert.equal(c.unified, '/sys/fs/cgroup/unified');
  assert.deepEqual(
    [...c.v1],
    [
      ['/sys/fs/cgroup/cpu,cpuacct', ['cpu', 'cpuacct']],
      ['/sys/fs/cgroup/memory', ['memory']],
    ],
  );
});

test('readMountInfoSync: a missing file is no mounts; detachString keeps the value', () => {
  const dir = testTempDir('kts-mountinfo-');
  assert.deepEqual(readMountInfoSync(join(dir, 'absent')), []);
  writeFileSync(join(dir, 'mountinfo'), TEXT);
  assert.equal(readMountInfoSync(join(dir, 'mountinfo')).length, 5);
  const long = `${'x'.repeat(100)}/mount/point/inside/a/long/text`;
  assert.equal(detachString(long.slice(100)), '/mount/point/inside/a/long/text');
  assert.equal(detachString('é/ünïcode'), 'é/ünïcode');
});

// mountPointsUnder: what mountsUnder answered before (parse all, filter, dedupe, deepest first),
// without parsing a text that does not name the directory.
const POD = '/var/lib/kubelet/pods/uid 1/volumes';
const UNDER = [
  '50 27 0:40 / /var/lib/kubelet/pods/uid\\0401/volumes/kubernetes.io~empty-dir/a rw - tmpfs tmpfs rw',
  '51 50 0:41 / /var/lib/kubelet/pods/uid\\0401/volumes/kubernetes.io~empty-dir/a/deep rw - tmpfs tmpfs rw',
  '52 27 0:40 / /var/lib/kubelet/pods/uid\\0401/volumes/kubernetes.io~empty-dir/a rw - tmpfs tmpfs rw',
  '53 27 0:42 /var/lib/kubelet/pods/uid\\0401/volumes/x /elsewhere rw - ext4 /dev/sda1 rw',
  '54 27 0:43 / /var/lib/kubelet/pods/uid\\0401/volumes rw - tmpfs tmpfs rw',
  '55 27 0:44 / /var/lib/kubelet/pods/uid\\04012/volumes/b rw - tmpfs tmpfs rw',
].join('\n');

test('mountPointsUnder: strictly below, escaped names, each once, deepest first', () => {
  const text = `${TEXT}${UNDER}\n`;
  const all = (prefix: string) => {
    const points = parseMountInfo(text)
      .map((m) => m.mountPoint)
      .filter((p) => p.startsWith(prefix));
    return [...new Set(points)].sort((a, b) => b.length - a.length);
  };
  const cases: Array<[string, string[]]> = [
    [`${POD}/`, [`${POD}/kubernetes.io~empty-dir/a/deep`, `${POD}/kubernetes.io~empty-dir/a`]],
    ['/var/lib/kubelet/pods/absent/', []],
    ['/mnt/', ['/mnt/with space']],
    ['/sys/fs/cgroup/', ['/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/unified', '/sys/fs/cgroup/memory']],
  ];
  for (const [prefix, want] of cases) {
    assert.deepEqual(mountPointsUnder(text, prefix), want, prefix);
    assert.deepEqual(mountPointsUnder(text, prefix), all(prefix), `${prefix}: as the full parse`);
  }
  assert.deepEqual(mountPointsUnder('', `${POD}/`), []);
});
