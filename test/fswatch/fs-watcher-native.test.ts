// The TypeScript side of the native inotify boundary, on a fake addon class: record decoding,
// ids, the kernel dropping a watch, overflow and reader errors. Needs no addon.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { nativeFsWatcherFactory, type NativeInotifyWatcher } from '../../src/fswatch/fs-watcher-native.js';
import { KubeletError } from '../../src/errors.js';
import type { FsEvent } from '../../src/fswatch/types.js';

/** One record as native/src/inotify.h lays it out. */
function rec(type: number, id: number, name = ''): Buffer {
  const body = Buffer.from(name, 'utf8');
  const head = Buffer.alloc(9);
  head[0] = type;
  head.writeUInt32LE(id, 1);
  head.writeUInt32LE(body.length, 5);
  return Buffer.concat([head, body]);
}

function fake() {
  const calls: string[] = [];
  const state: { emit?: (records: Buffer) => void; errno: number } = { errno: 0 };
  class Fake implements NativeInotifyWatcher {
    constructor(onBatch: (records: Buffer) => void) {
      state.emit = onBatch;
    }
    add(path: string, id: number): number {
      calls.push(`add ${path} ${id}`);
      return state.errno;
    }
    remove(id: number): void {
      calls.push(`remove ${id}`);
    }
    close(): void {
      calls.push('close');
    }
  }
  const batches: FsEvent[][] = [];
  const errors: Error[] = [];
  const w = nativeFsWatcherFactory(Fake)(
    (b) => batches.push(b),
    (e) => errors.push(e),
  );
  return { w, calls, state, batches, errors, emit: (...r: Buffer[]) => state.emit!(Buffer.concat(r)) };
}

it('decodes records into events of the watched path', () => {
  const f = fake();
  f.w.add('/d');
  f.w.add('/f');
  assert.deepEqual(f.calls, ['add /d 1', 'add /f 2']);
  f.emit(rec(1, 1, 'a'), rec(2, 2), rec(3, 1, 'ünï'), rec(4, 1, 'x'), rec(2, 99, 'unknown id'));
  assert.deepEqual(f.batches, [
    [
      { watched: '/d', name: 'a', type: 'create' },
      { watched: '/f', name: '', type: 'modify' },
      { watched: '/d', name: 'ünï', type: 'delete' },
      { watched: '/d', name: 'x', type: 'rename' },
    ],
  ]);
});

it('reports overflow with watched and name empty', () => {
  const f = fake();
  f.emit(rec(5, 0));
  assert.deepEqual(f.batches, [[{ watched: '', name: '', type: 'overflow' }]]);
});

it('forgets a path whose watch the kernel dropped, so add() watches it anew', () => {
  const f = fake();
  f.w.add('/f');
  f.w.add('/f');
  assert.deepEqual(f.calls, ['add /f 1']);
  f.emit(rec(3, 1), rec(6, 1));
  assert.deepEqual(f.batches, [[{ watched: '/f', name: '', type: 'delete' }]]);
  f.w.add('/f');
  assert.deepEqual(f.calls, ['add /f 1', 'add /f 2']);
  f.emit(rec(2, 1), rec(2, 2));
  assert.deepEqual(f.batches[1], [{ watched: '/f', name: '', type: 'modify' }]);
});

it('passes a reader error to onError as KTS_ERR_NATIVE', () => {
  const f = fake();
  f.emit(rec(7, 0, 'inotify read: Bad file descriptor'));
  assert.equal(f.batches.length, 0);
  assert.equal(f.errors.length, 1);
  assert.ok(f.errors[0] instanceof KubeletError);
  assert.equal((f.errors[0] as KubeletError).code, 'KTS_ERR_NATIVE');
  assert.match(f.errors[0]!.message, /Bad file descriptor/);
});

it('turns an errno from add() into a Node-style error and keeps no state', () => {
  const f = fake();
  f.state.errno = 28;
  assert.throws(() => f.w.add('/x'), { code: 'ENOSPC', syscall: 'watch', path: '/x', message: /max_user_watches/ });
  f.state.errno = 0;
  f.w.add('/x');
  assert.deepEqual(f.calls, ['add /x 1', 'add /x 2']);
});

it('removes by id, drops late records, and closes once', () => {
  const f = fake();
  f.w.add('/a');
  f.w.remove('/a');
  f.emit(rec(1, 1, 'late'));
  assert.equal(f.batches.length, 0);
  f.w.close();
  f.w.close();
  f.emit(rec(5, 0));
  assert.equal(f.batches.length, 0);
  assert.deepEqual(f.calls, ['add /a 1', 'remove 1', 'close']);
});
