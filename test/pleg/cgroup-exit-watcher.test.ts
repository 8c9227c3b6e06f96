/**
 * The exit trigger on the real kernel: a process in a real unified-hierarchy cgroup exits and
 * the watcher reports it, with each inotify implementation (native and the fs.watch twin).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, rmdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { implementations } from '../../src/cmd/hot-paths.js';
import { CgroupExitWatcher, candidateCgroupDirs, findUnifiedRoot } from '../../src/pleg/cgroup-exit-watcher.js';
import { cgroupNaming } from '../../src/cm/cgroup-name.js';

const unified = findUnifiedRoot();
const canRun = unified !== undefined && process.getuid?.() === 0;

test('candidate cgroup dirs cover containerd default and the kubepods QoS tree', () => {
  const c = candidateCgroupDirs('1234-ab', 'cid');
  assert.ok(c.includes('k8s.io/cid'));
  assert.ok(c.includes('/kubepods/burstable/pod1234-ab/cid'));
  assert.ok(c.includes('/kubepods/besteffort/pod1234_ab/cid'));
  assert.ok(c.includes('/kubepods/pod1234-ab/cid'));
});

test("candidate cgroup dirs under the systemd driver: the pod slice and the runtime's scope", () => {
  const c = candidateCgroupDirs('1234-ab', 'cid', '/', cgroupNaming('systemd'));
  assert.ok(
    c.includes('/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_ab.slice/cri-containerd-cid.scope'),
  );
  assert.ok(c.includes('/kubepods.slice/kubepods-pod1234_ab.slice/cri-containerd-cid.scope'));
  assert.ok(!c.some((d) => d.startsWith('k8s.io')), 'no cgroupfs parent');
});

for (const impl of implementations('inotify')) {
  describe(
    `cgroup exit watcher (${impl.name})`,
    { skip: canRun ? false : 'needs root and a cgroup v2 / unified tree' },
    () => {
      test('a process exiting in a watched cgroup is reported once', async () => {
        const root = join(unified!, `kts-test-${process.pid}-${impl.name}`);
        const cg = join(root, 'k8s.io', 'c1');
        mkdirSync(cg, { recursive: true });
        const child = spawn('sleep', ['30'], { stdio: 'ignore' });
        try {
          writeFileSync(join(cg, 'cgroup.procs'), String(child.pid));
          const exits: string[] = [];
          let resolveExit!: () => void;
          const exited = new Promise<void>((r) => (resolveExit = r));
          const w = new CgroupExitWatcher({
            root,
            createFsWatcher: impl.createFsWatcher,
            onExit: (pod, cid) => {
              exits.push(`${pod}/${cid}`);
              resolveExit();
            },
          });
          assert.equal(await w.track('pod-a', 'c1'), true);
          assert.equal(await w.track('pod-a', 'missing'), false, 'no cgroup, not tracked');
          assert.equal(exits.length, 0);
          const killedAt = Date.now();
          child.kill('SIGKILL');
          await Promise.race([
            exited,
            new Promise((_, rej) => setTimeout(() => rej(new Error('no exit reported within 5 s')), 5000)),
          ]);
          assert.deepEqual(exits, ['pod-a/c1']);
          assert.ok(Date.now() - killedAt < 5000);
          assert.equal(w.size, 0, 'untracked after its exit');
          w.close();
        } finally {
          child.kill('SIGKILL');
          await new Promise((r) => setTimeout(r, 50));
          for (const d of [cg, join(root, 'k8s.io'), root])
            if (existsSync(d))
              try {
                rmdirSync(d);
              } catch {
                /* busy: retried by the OS later */
              }
        }
      });

      test('after a find in one QoS class, a container in another place is still found', async () => {
        const root = join(unified!, `kts-test-order-${process.pid}-${impl.name}`);
        const dirs = [join(root, 'kubepods', 'besteffort', 'podpod-a', 'c1'), join(root, 'k8s.io', 'c2')];
        for (const d of dirs) mkdirSync(d, { recursive: true });
        const w = new CgroupExitWatcher({ root, createFsWatcher: impl.createFsWatcher, onExit: () => undefined });
        try {
          // Empty cgroups count as exited at once: each is found, reported and untracked.
          assert.equal(await w.track('pod-a', 'c1'), true, 'found under besteffort');
          assert.equal(await w.track('pod-b', 'c2'), true, 'found under k8s.io after a besteffort find');
          assert.equal(await w.track('pod-a', 'c1'), true, 'and under besteffort again');
        } finally {
          w.close();
          for (const d of [...dirs, join(root, 'kubepods', 'besteffort', 'podpod-a')]) rmdirSync(d);
          for (const d of [join(root, 'kubepods', 'besteffort'), join(root, 'kubepods'), join(root, 'k8s.io'), root])
            rmdirSync(d);
        }
      });
    },
  );
}
