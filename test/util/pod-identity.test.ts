/**
 * Defence in depth where paths are built from pod identity: one guard (pathComponent) refuses
 * anything that is not exactly one path component, used by the pod directory, the log
 * directories, the pod cgroup and the volume directories.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodNames } from '../../src/api/pod.js';
import { UnsafePathError } from '../../src/errors.js';
import { isPathComponent, pathComponent } from '../../src/util/path-component.js';
import {
  containerLogFileName,
  containerLogPath,
  containerLogsDirectory,
  podCgroupLeaf,
  podDir,
  podLogsDirectory,
  podLogsDirName,
  podUIDOfLogsDirName,
  restartCountOfLogFileName,
} from '../../src/util/pod-identity.js';
import { emptyDirPath } from '../../src/volume/plugins/empty-dir.js';

const UUID = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const UNSAFE = ['', '.', '..', '../../etc', 'a/b', '/abs', 'a\\b', 'a\u0000b', 'a\nb', 'tab\there', '\u007f'];

describe('pathComponent', () => {
  for (const v of ['a', 'web-1', UUID, '...', '..a', 'a..', 'ns_name_uid', 'ünïcode']) {
    it(`accepts ${JSON.stringify(v)}`, () => assert.equal(pathComponent(v, 'x'), v));
  }
  for (const v of UNSAFE) {
    it(`refuses ${JSON.stringify(v)} with UnsafePathError naming what it is`, () => {
      assert.equal(isPathComponent(v), false);
      assert.throws(
        () => pathComponent(v, 'pod UID'),
        (err: unknown) =>
          err instanceof UnsafePathError && err.code === 'KTS_ERR_UNSAFE_PATH' && /pod UID/.test(err.message),
      );
    });
  }
  it('refuses what is not a string', () => {
    assert.throws(() => pathComponent(undefined, 'pod UID'), UnsafePathError);
    assert.throws(() => pathComponent(42, 'pod UID'), UnsafePathError);
  });
});

describe('pod paths', () => {
  const pod = (names: Partial<PodNames>): PodNames => ({ name: 'web', namespace: 'ns', uid: UUID, ...names });

  it('builds upstream layouts from a valid identity', () => {
    assert.equal(podDir('/var/lib/kubelet', UUID), `/var/lib/kubelet/pods/${UUID}`);
    assert.equal(podLogsDirectory('/var/log/pods', pod({})), `/var/log/pods/ns_web_${UUID}`);
    assert.equal(containerLogsDirectory('/var/log/pods', pod({}), 'c'), `/var/log/pods/ns_web_${UUID}/c`);
    assert.equal(containerLogPath('c', 3), 'c/3.log');
    assert.equal(podCgroupLeaf(UUID), `pod${UUID}`);
    assert.equal(emptyDirPath('/r', UUID, 'data'), `/r/pods/${UUID}/volumes/kubernetes.io~empty-dir/data`);
  });

  for (const bad of UNSAFE) {
    it(`every builder refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => podDir('/r', bad), UnsafePathError);
      assert.throws(() => podCgroupLeaf(bad), UnsafePathError);
      assert.throws(() => podLogsDirectory('/l', pod({ uid: bad })), UnsafePathError);
      assert.throws(() => podLogsDirectory('/l', pod({ name: bad })), UnsafePathError);
      assert.throws(() => podLogsDirectory('/l', pod({ namespace: bad })), UnsafePathError);
      assert.throws(() => containerLogsDirectory('/l', pod({}), bad), UnsafePathError);
      assert.throws(() => containerLogPath(bad, 0), UnsafePathError);
      assert.throws(() => emptyDirPath('/r', UUID, bad), UnsafePathError);
    });
  }

  it('log names read back: the UID of a pod log directory, the restart count of a log file', () => {
    assert.equal(podUIDOfLogsDirName(podLogsDirName(pod({}))), UUID);
    assert.equal(podUIDOfLogsDirName('not-a-pod-dir'), undefined);
    assert.equal(restartCountOfLogFileName(containerLogFileName(12)), 12);
    for (const other of ['0.log.20260101-000000', 'x.log', '.log', '1.txt'])
      assert.equal(restartCountOfLogFileName(other), undefined, other);
  });
});
