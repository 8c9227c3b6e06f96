import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, ContainerStatus } from '../../src/cri/types.js';
import { createLogRotation } from '../../src/logs/rotation.js';
import type { LogRotationRuntime } from '../../src/logs/types.js';
import { testTempDir } from '../support/temp-dir.js';

/** A runtime whose running containers and log paths the test sets, counting ContainerStatus calls. */
function fakeRuntime(dir: string) {
  const running = new Map<string, string>();
  const calls = { status: 0, reopen: [] as string[] };
  const runtime: LogRotationRuntime = {
    listContainers: async () => [...running.keys()].map((id) => ({ id, state: 'CONTAINER_RUNNING' }) as Container),
    containerStatus: async (id: string) => {
      calls.status++;
      const logPath = running.get(id);
      return {
        id,
        logPath: logPath ?? '',
        state: logPath ? 'CONTAINER_RUNNING' : 'CONTAINER_EXITED',
      } as ContainerStatus;
    },
    reopenContainerLog: async (id: string) => {
      calls.reopen.push(id);
      writeFileSync(running.get(id)!, '');
    },
  };
  const add = (id: string) => {
    const path = join(dir, `${id}.log`);
    writeFileSync(path, '');
    running.set(id, path);
    return path;
  };
  return { runtime, calls, add, remove: (id: string) => running.delete(id) };
}

test('log rotation asks the runtime for a container log path once, not every pass', async () => {
  const dir = testTempDir('kts-rotation-');
  const rt = fakeRuntime(dir);
  const path = rt.add('c1');
  rt.add('c2');
  let t = Date.UTC(2024, 4, 1, 10, 0, 0);
  const rot = createLogRotation({
    runtime: rt.runtime,
    maxSizeBytes: 10,
    maxFiles: 2,
    intervalMs: 1000,
    now: () => new Date(t),
  });
  await rot.rotateOnce();
  await rot.rotateOnce();
  assert.equal(rt.calls.status, 2, 'one ContainerStatus per container over two passes');
  writeFileSync(path, 'x'.repeat(20));
  await rot.rotateOnce();
  assert.deepEqual(rt.calls.reopen, ['c1'], 'the cached path still rotates');
  assert.ok(existsSync(`${path}.20240501-100000`));
  t += 1000;
  writeFileSync(path, 'y'.repeat(20));
  await rot.rotateOnce();
  // maxFiles 2: the current file and the newest rotated one.
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('c1.log.')),
    ['c1.log.20240501-100001'],
  );
  assert.equal(rt.calls.status, 2);
});

test('log rotation forgets a container that stopped running and asks again for a new one', async () => {
  const dir = testTempDir('kts-rotation-');
  const rt = fakeRuntime(dir);
  rt.add('c1');
  const rot = createLogRotation({ runtime: rt.runtime, maxSizeBytes: 10, maxFiles: 2, intervalMs: 1000 });
  await rot.rotateOnce();
  rt.remove('c1');
  await rot.rotateOnce();
  assert.equal(rt.calls.status, 1, 'no call for a container no longer listed');
  rt.add('c1'); // same ID listed again: its path is asked again (the cache was dropped)
  await rot.rotateOnce();
  assert.equal(rt.calls.status, 2);
});

test('log rotation asks again for a container that had no log path', async () => {
  const dir = testTempDir('kts-rotation-');
  const rt = fakeRuntime(dir);
  const runtime: LogRotationRuntime = {
    ...rt.runtime,
    listContainers: async () => [{ id: 'nolog', state: 'CONTAINER_RUNNING' } as Container],
  };
  const rot = createLogRotation({ runtime, maxSizeBytes: 10, maxFiles: 2, intervalMs: 1000 });
  await rot.rotateOnce();
  await rot.rotateOnce();
  assert.equal(rt.calls.status, 2);
});
