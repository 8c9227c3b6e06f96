// The FsWatcher contract (src/fswatch/types.ts), run against every implementation on this host.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { appendFileSync, mkdirSync, renameSync, rmSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { implementations } from '../../src/cmd/hot-paths.js';
import type { CreateFsWatcher, FsEvent, FsWatcher } from '../../src/fswatch/types.js';
import { testTempDir } from '../support/temp-dir.js';

const WAIT_MS = 5000;
const QUIET_MS = 250;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Recorder {
  watcher: FsWatcher;
  events: FsEvent[];
  batches: number;
  errors: Error[];
  /** Resolves once `pred` holds for the events so far; rejects after `ms`. */
  waitFor(pred: (events: FsEvent[]) => boolean, what: string, ms?: number): Promise<void>;
  has(watched: string, name: string, type: FsEvent['type']): boolean;
}

function record(create: CreateFsWatcher): Recorder {
  let wake: (() => void) | undefined;
  const r: Recorder = {
    events: [],
    batches: 0,
    errors: [],
    watcher: create(
      (batch) => {
        assert.ok(batch.length > 0, 'empty batch');
        r.batches++;
        r.events.push(...batch);
        wake?.();
      },
      (err) => r.errors.push(err),
    ),
    async waitFor(pred, what, ms = WAIT_MS) {
      const deadline = Date.now() + ms;
      while (!pred(r.events)) {
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`timed out waiting for ${what}; events: ${JSON.stringify(r.events)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(left, 50));
        });
      }
    },
    has: (watched, name, type) => r.events.some((e) => e.watched === watched && e.name === name && e.type === type),
  };
  return r;
}

const impls = implementations('inotify');

it('lists the TypeScript twin last and names each implementation once', () => {
  const names = impls.map((i) => i.name);
  assert.equal(names.at(-1), 'ts');
  assert.equal(new Set(names).size, names.length);
});

for (const impl of impls) {
  describe(`FsWatcher contract: ${impl.name}`, { timeout: 60_000 }, () => {
    let dir: string;
    let r: Recorder;

    beforeEach(() => {
      dir = testTempDir(`kts-fsw-${impl.name}-`);
      r = record(impl.createFsWatcher);
    });
    afterEach(() => {
      r.watcher.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reports a created entry', async () => {
      r.watcher.add(dir);
      writeFileSync(join(dir, 'a'), 'x');
      await r.waitFor(() => r.has(dir, 'a', 'create'), 'create a');
    });

    it('reports a modified entry', async () => {
      writeFileSync(join(dir, 'm'), 'x');
      r.watcher.add(dir);
      appendFileSync(join(dir, 'm'), 'y');
      await r.waitFor(() => r.has(dir, 'm', 'modify'), 'modify m');
      assert.ok(!r.has(dir, 'm', 'create'));
    });

    it('reports a deleted entry', async () => {
      writeFileSync(join(dir, 'd'), 'x');
      r.watcher.add(dir);
      unlinkSync(join(dir, 'd'));
      await r.waitFor(() => r.has(dir, 'd', 'delete'), 'delete d');
    });

    it('reports both sides of a move as rename', async () => {
      writeFileSync(join(dir, 'old'), 'x');
      r.watcher.add(dir);
      renameSync(join(dir, 'old'), join(dir, 'new'));
      await r.waitFor(() => r.has(dir, 'old', 'rename') && r.has(dir, 'new', 'rename'), 'rename old -> new');
      assert.ok(!r.has(dir, 'old', 'delete') && !r.has(dir, 'new', 'create'), JSON.stringify(r.events));
    });

    it('reports a created subdirectory and a deleted one', async () => {
      r.watcher.add(dir);
      mkdirSync(join(dir, 'sub'));
      await r.waitFor(() => r.has(dir, 'sub', 'create'), 'create sub');
      rmdirSync(join(dir, 'sub'));
      await r.waitFor(() => r.has(dir, 'sub', 'delete'), 'delete sub');
    });

    it('reports a watched file modified, with name ""', async () => {
      const file = join(dir, 'cgroup.events');
      writeFileSync(file, 'populated 0\n');
      r.watcher.add(file);
      writeFileSync(file, 'populated 1\n');
      await r.waitFor(() => r.has(file, '', 'modify'), 'modify of the watched file');
      assert.ok(
        r.events.every((e) => e.watched === file && e.name === ''),
        JSON.stringify(r.events),
      );
    });

    it('reports a watched file deleted, and can watch it again once recreated', async () => {
      const file = join(dir, 'f');
      writeFileSync(file, 'x');
      r.watcher.add(file);
      unlinkSync(file);
      await r.waitFor(() => r.has(file, '', 'delete'), 'delete of the watched file');
      await sleep(50);
      writeFileSync(file, 'again');
      r.watcher.add(file);
      const before = r.events.length;
      appendFileSync(file, 'more');
      await r.waitFor(
        (evs) => evs.slice(before).some((e) => e.watched === file && e.type === 'modify'),
        'modify after re-add',
      );
    });

    it('reports the watched directory itself deleted', async () => {
      const sub = join(dir, 'watched');
      mkdirSync(sub);
      r.watcher.add(sub);
      rmdirSync(sub);
      await r.waitFor(() => r.has(sub, '', 'delete'), 'delete of the watched directory');
    });

    it('delivers asynchronously, in batches', async () => {
      r.watcher.add(dir);
      for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${i}`), 'x');
      assert.equal(r.events.length, 0, 'nothing is delivered synchronously');
      await r.waitFor((evs) => evs.filter((e) => e.type === 'create').length === 50, '50 creates');
      assert.ok(r.batches < 50, `50 creates in ${r.batches} batches`);
    });

    it('treats add() of a watched path as a no-op', async () => {
      r.watcher.add(dir);
      r.watcher.add(dir);
      writeFileSync(join(dir, 'once'), '');
      await r.waitFor(() => r.has(dir, 'once', 'create'), 'create once');
      await sleep(QUIET_MS);
      assert.equal(r.events.filter((e) => e.name === 'once' && e.type === 'create').length, 1);
    });

    it('stops reporting a path after remove()', async () => {
      const a = join(dir, 'a');
      const b = join(dir, 'b');
      mkdirSync(a);
      mkdirSync(b);
      r.watcher.add(a);
      r.watcher.add(b);
      writeFileSync(join(a, 'before'), '');
      await r.waitFor(() => r.has(a, 'before', 'create'), 'create in a');
      r.watcher.remove(a);
      r.watcher.remove(a);
      r.watcher.remove(join(dir, 'never-added'));
      writeFileSync(join(a, 'after'), '');
      writeFileSync(join(b, 'after'), '');
      await r.waitFor(() => r.has(b, 'after', 'create'), 'create in b');
      await sleep(QUIET_MS);
      assert.ok(!r.events.some((e) => e.watched === a && e.name === 'after'), JSON.stringify(r.events));
    });

    it('drops events already queued for a path removed before delivery', async () => {
      r.watcher.add(dir);
      writeFileSync(join(dir, 'x'), '');
      r.watcher.remove(dir);
      await sleep(QUIET_MS);
      assert.deepEqual(r.events, []);
    });

    it('stops everything on close(), which is idempotent', async () => {
      r.watcher.add(dir);
      writeFileSync(join(dir, 'queued'), '');
      r.watcher.close();
      r.watcher.close();
      writeFileSync(join(dir, 'after'), '');
      await sleep(QUIET_MS);
      assert.deepEqual(r.events, []);
      assert.throws(() => r.watcher.add(dir), { code: 'EBADF' });
      r.watcher.remove(dir);
    });

    it('throws a clear error when adding a missing path', () => {
      const missing = join(dir, 'nope');
      assert.throws(
        () => r.watcher.add(missing),
        (err: NodeJS.ErrnoException) => {
          assert.equal(err.code, 'ENOENT');
          assert.equal(err.syscall, 'watch');
          assert.equal(err.path, missing);
          assert.match(err.message, /^ENOENT: no such file or directory, watch '.*nope'$/);
          return true;
        },
      );
      // The watcher still works.
      r.watcher.add(dir);
    });

    it('rejects a path that is not a non-empty string', () => {
      assert.throws(() => r.watcher.add(''), TypeError);
      assert.throws(() => r.watcher.add('a\0b'), TypeError);
      assert.throws(() => r.watcher.add(42 as unknown as string), TypeError);
    });

    it('watches 2000 files in one watcher, cheaply added and removed', async () => {
      const n = 2000;
      const files: string[] = [];
      for (let i = 0; i < n; i++) {
        const sub = join(dir, `pod${i}`);
        mkdirSync(sub);
        const file = join(sub, 'cgroup.events');
        writeFileSync(file, 'populated 0\n');
        files.push(file);
      }
      let t = performance.now();
      for (const f of files) r.watcher.add(f);
      const addMs = performance.now() - t;
      for (const f of files) appendFileSync(f, 'frozen 0\n');
      await r.waitFor(
        (evs) => new Set(evs.filter((e) => e.type === 'modify').map((e) => e.watched)).size === n,
        `a modify for each of ${n} files`,
        20_000,
      );
      assert.ok(r.events.every((e) => e.name === ''));
      t = performance.now();
      for (const f of files.slice(0, n / 2)) r.watcher.remove(f);
      const removeMs = performance.now() - t;
      const before = r.events.length;
      for (const f of files) appendFileSync(f, 'x\n');
      await r.waitFor(
        (evs) => new Set(evs.slice(before).map((e) => e.watched)).size === n / 2,
        'modifies of the files still watched',
        20_000,
      );
      await sleep(QUIET_MS);
      const removed = new Set(files.slice(0, n / 2));
      assert.ok(!r.events.slice(before).some((e) => removed.has(e.watched)), 'no event for removed files');
      assert.ok(addMs < 5000 && removeMs < 5000, `add ${addMs.toFixed(0)} ms, remove ${removeMs.toFixed(0)} ms`);
    });

    it('releases its resources on close(): 300 watchers one after another', () => {
      // Far more than the default fs.inotify.max_user_instances (128).
      for (let i = 0; i < 300; i++) {
        const w = impl.createFsWatcher(() => {});
        w.add(dir);
        w.close();
      }
    });

    it('survives the end of a worker thread that left watchers open with events pending', async () => {
      const url = pathToFileURL(join(import.meta.dirname, '../../src/cmd/hot-paths.js')).href;
      const code = `
        const { parentPort, workerData } = require('node:worker_threads');
        const { writeFileSync } = require('node:fs');
        import(workerData.url).then(({ implementations }) => {
          const impl = implementations('inotify').find((i) => i.name === workerData.name);
          for (let i = 0; i < 5; i++) {
            const w = impl.createFsWatcher(() => {});
            w.add(workerData.dir);
          }
          for (let i = 0; i < 100; i++) writeFileSync(workerData.dir + '/w' + i, '');
          parentPort.postMessage('ready');
          if (workerData.stay) setInterval(() => {}, 1000);
        });`;
      for (const stay of [false, true]) {
        const worker = new Worker(code, { eval: true, workerData: { url, name: impl.name, dir, stay } });
        const exited = new Promise<number>((resolve, reject) => {
          worker.once('exit', resolve);
          worker.once('error', reject);
        });
        await new Promise<void>((resolve, reject) => {
          worker.once('message', () => resolve());
          setTimeout(() => reject(new Error('worker did not start')), WAIT_MS);
        });
        if (stay) await worker.terminate();
        const timeout = sleep(WAIT_MS).then(() => 'timeout' as const);
        assert.notEqual(await Promise.race([exited, timeout]), 'timeout', `worker (stay=${stay}) did not end`);
      }
    });

    it('does not keep the process alive when left open', () => {
      const url = pathToFileURL(join(import.meta.dirname, '../../src/cmd/hot-paths.js')).href;
      const script = `
        import { implementations } from ${JSON.stringify(url)};
        const impl = implementations('inotify').find((i) => i.name === ${JSON.stringify(impl.name)});
        const w = impl.createFsWatcher(() => {});
        w.add(${JSON.stringify(dir)});
        console.log('watching');`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 10_000,
      });
      assert.equal(child.error, undefined, 'child exited by itself');
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout.trim(), 'watching');
    });
  });
}
