// Contract and differential tests of the kmsg OOM parser and watcher (native/src/kmsg.cc and the
// twin src/oom/kmsg-*.ts): the kernel's real record formats, random records both must parse the
// same, and a live /dev/kmsg watcher that sees an injected oom-kill record (root only).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { implementations } from '../../src/cmd/hot-paths.js';
import type { OomKillRecord } from '../../src/oom/types.js';

const impls = implementations('kmsg');

const MEMCG = '/kubepods/burstable/pod0a1b2c3d-0000-4000-8000-000000000001/4dc7e16c0af09bf1fe7b95c4b46bc449758d0c8330aa6c4fd5bd851f26011726';
const REAL = [
  '4,2900,8471200000,-;tail invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999',
  ' SUBSYSTEM=memory',
  `6,2930,8471200100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=4dc7e16c,mems_allowed=0,oom_memcg=${MEMCG},task_memcg=${MEMCG},task=tail,pid=12804,uid=0`,
  '3,2931,8471200150,-;Memory cgroup out of memory: Killed process 12804 (tail) total-vm:22104kB, anon-rss:19968kB, file-rss:4kB, shmem-rss:0kB, UID:0 pgtables:84kB oom_score_adj:999',
  '3,2932,8471300000,-;Out of memory: Killed process 777 (my prog) total-vm:1kB',
  '6,2933,8471300001,-;kts1: port 1(veth0) entered disabled state',
  '',
].join('\n');

for (const impl of impls) {
  describe(`kmsg parser (${impl.name})`, () => {
    it('parses the kernel oom-kill record and skips its "Killed process" confirmation', () => {
      const kills = impl.parseKmsg(Buffer.from(REAL));
      assert.deepEqual(kills, [
        { seq: 2930, tsUs: 8471200100, pid: 12804, comm: 'tail', constraint: 'CONSTRAINT_MEMCG', oomMemcg: MEMCG, taskMemcg: MEMCG },
        { seq: 2932, tsUs: 8471300000, pid: 777, comm: 'my prog', constraint: '', oomMemcg: '', taskMemcg: '' },
      ]);
    });
    it('ignores malformed records without throwing', () => {
      for (const bad of ['', ';', '6,1;oom-kill:pid=1', 'x,1,2;oom-kill:pid=1', '6,1,2;oom-kill:pid=abc', '6,1,2;Killed process (x)', '6,1,2;oom-kill:pid=99999999999']) {
        assert.deepEqual(impl.parseKmsg(Buffer.from(bad)), [], bad);
      }
    });
  });
}

function randomRecords(rng: () => number): string {
  const pick = <T>(a: T[]) => a[Math.floor(rng() * a.length)]!;
  const heads = ['6,1,2,-;', '4,18446744073709551615,3;', '6,x,2;', '7,5,9,c,extra;', '', ';', '6,1,2'];
  const bodies = [
    `oom-kill:constraint=CONSTRAINT_NONE,task_memcg=${MEMCG},task=a,pid=${Math.floor(rng() * 5)},uid=0`,
    `oom-kill:pid=${pick(['1', '2', '', '2147483648', '-1'])},task=${pick(['x', 'y,z', ''])},task_memcg=/a/b,task_memcg=/c`,
    `Memory cgroup out of memory: Killed process ${Math.floor(rng() * 5)} (${pick(['sh', 'a b', 'x)', ''])}) total-vm:1kB`,
    `Killed process ${pick(['3', 'z', ''])}${pick(['', ' ', ' (', ' (q'])}`,
    'random text', '',
  ];
  let s = '';
  const n = Math.floor(rng() * 10);
  for (let i = 0; i < n; i++) s += pick(heads) + pick(bodies) + pick(['\n', '\n SUBSYSTEM=memory\n', '\n DEVICE=+x\n', '']);
  return s;
}

it('both implementations parse random record streams identically', () => {
  let seed = 777;
  const rng = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  for (let i = 0; i < 3000; i++) {
    const text = randomRecords(rng);
    const results = impls.map((impl) => impl.parseKmsg(Buffer.from(text)));
    for (const r of results.slice(1)) assert.deepEqual(r, results[0], JSON.stringify(text));
  }
});

const kmsgWritable = (() => {
  try {
    accessSync('/dev/kmsg', constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

it('the /dev/kmsg watchers start at the end and report an injected oom-kill record', { skip: !kmsgWritable && '/dev/kmsg is not readable and writable here' }, async () => {
  const tag = `kts-kmsg-test-${process.pid}-${Date.now()}`;
  const seen = impls.map(() => [] as OomKillRecord[]);
  const watchers = impls.map((impl, i) => impl.createKmsgWatcher('/dev/kmsg', (kills) => seen[i]!.push(...kills.filter((k) => k.taskMemcg.includes(tag)))));
  try {
    // A userspace record in the kernel's oom-kill format (facility user; the parser does not care).
    writeFileSync('/dev/kmsg', `oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/${tag},task_memcg=/${tag}/c,task=fake,pid=4242,uid=0\n`);
    const deadline = Date.now() + 3000;
    while (seen.some((s) => s.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    impls.forEach((impl, i) => {
      assert.equal(seen[i]!.length, 1, `${impl.name} saw the record once`);
      assert.equal(seen[i]![0]!.pid, 4242);
      assert.equal(seen[i]![0]!.comm, 'fake');
    });
  } finally {
    for (const w of watchers) w.close();
  }
});

it('a watcher on a missing path throws a Node-style error', () => {
  for (const impl of impls) assert.throws(() => impl.createKmsgWatcher('/nonexistent/kmsg', () => undefined), (e: NodeJS.ErrnoException) => e.code === 'ENOENT');
});
