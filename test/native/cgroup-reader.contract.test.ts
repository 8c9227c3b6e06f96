// Contract and differential tests of the cgroup batch reader (native/src/cgroup_stats.cc and its
// twin src/stats/cgroup-reader-ts.ts): recorded v2 and v1 trees with counters beyond 2^53, the
// real v1 files of this host, persistent fds across rewrites and removals, and random file
// contents that both implementations must parse to the same table. Runs under ASan too.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { implementations } from '../../src/cmd/hot-paths.js';
import { detectCgroupMounts } from '../../src/cm/index.js';
import { createCgroupLayout } from '../../src/stats/cgroup-layout.js';
import { F, FIELD_COUNT, K, MISSING, NEED, field, type CgroupFileSpec } from '../../src/stats/cgroup-fields.js';
import { makeCgroupTree, treeNumbers } from '../../bench/fixtures/cgroup-tree.js';
import { testTempDir } from '../support/temp-dir.js';
import * as real from './cgroup-real-files.js';

const impls = implementations('cgroupStats');
let dir: string;
before(() => { dir = testTempDir('kts-cgroup-'); });
after(() => rmSync(dir, { recursive: true, force: true }));

function readTree(create: () => ReturnType<typeof impls[0]['createCgroupReader']>, mode: 'v1' | 'v2') {
  const root = mkdtempSync(join(dir, mode));
  const tree = makeCgroupTree(root, { mode, pods: 2, containersPerPod: 2 });
  const layout = createCgroupLayout(tree.mounts, true);
  const names = ['/', ...tree.pods.flatMap((p) => [`/kubepods/besteffort/pod${p.uid}`, ...p.containers.map((c) => `/kubepods/besteffort/pod${p.uid}/${c.id}`)])];
  const r = create();
  r.setFiles(names.flatMap((n, g) => layout.files(n, g)));
  const out = new BigUint64Array(names.length * FIELD_COUNT);
  const files = r.read(out);
  r.close();
  return { out, files, names };
}

for (const impl of impls) {
  describe(`cgroup reader (${impl.name})`, () => {
    for (const mode of ['v2', 'v1'] as const) {
      it(`reads a recorded ${mode} tree exactly (uint64 beyond 2^53)`, () => {
        const { out, files } = readTree(impl.createCgroupReader, mode);
        assert.ok(files > 0);
        for (const g of [1, 2, 3]) {
          const n = treeNumbers(g);
          assert.equal(field(out, g, F.cpuUsageNs), n.usageUsec * 1000n);
          assert.equal(field(out, g, F.cpuUserNs), n.userUsec * 1000n);
          assert.equal(field(out, g, F.memUsage), n.memCurrent);
          assert.equal(field(out, g, F.memInactiveFile), n.inactiveFile);
          assert.equal(field(out, g, F.memRss), n.anon);
          assert.equal(field(out, g, F.memPgfault), n.pgfault, 'pgfault > 2^53 must be exact');
          assert.equal(field(out, g, F.memCache), n.file);
          assert.equal(field(out, g, F.oomKill), n.oomKill);
          assert.equal(field(out, g, F.pids), n.pids);
          assert.equal(field(out, g, F.memLimit), n.limit === 'max' ? undefined : BigInt(n.limit), 'max / unlimited is missing');
          assert.equal(field(out, g, F.ioRead), n.rbytes + (mode === 'v2' ? 1n : 0n));
          assert.equal(field(out, g, F.ioWrite), n.wbytes + (mode === 'v2' ? 2n : 0n));
          if (mode === 'v2') {
            assert.equal(field(out, g, F.psiMemSome), BigInt(100 + g));
            assert.equal(field(out, g, F.psiMemFull), BigInt(50 + g));
          }
        }
      });
    }

    for (const mode of ['v2', 'v1'] as const) {
      it(`${mode}: a mask reads only the files it wants (usage every pass, limits / io / psi on request)`, () => {
        const root = mkdtempSync(join(dir, `mask-${mode}`));
        const tree = makeCgroupTree(root, { mode, pods: 2, containersPerPod: 2 });
        const layout = createCgroupLayout(tree.mounts, true);
        const names = ['/', ...tree.pods.flatMap((p) => [`/kubepods/besteffort/pod${p.uid}`, ...p.containers.map((c) => `/kubepods/besteffort/pod${p.uid}/${c.id}`)])];
        const specs = names.flatMap((n, g) => layout.files(n, g));
        const r = impl.createCgroupReader();
        r.setFiles(specs);
        const all = new BigUint64Array(names.length * FIELD_COUNT);
        const part = new BigUint64Array(names.length * FIELD_COUNT);
        const allFiles = r.read(all);
        const usageFiles = r.read(part, NEED.usage);
        assert.ok(usageFiles < allFiles, `${usageFiles} < ${allFiles}`);
        assert.equal(usageFiles, specs.filter((s) => s.need === NEED.usage).length);
        const periodic = specs.filter((s) => s.group === 0 && s.need === NEED.usage).map((s) => s.path.split('/').pop());
        // What the Summary API, eviction and the OOM watcher need every pass; the rest on request.
        const expected = mode === 'v1'
          ? ['cpuacct.usage', 'memory.usage_in_bytes', 'memory.stat', 'memory.oom_control', 'pids.current']
          : ['cpu.stat', 'memory.current', 'memory.stat', 'memory.events', 'pids.current'];
        assert.deepEqual(periodic.sort(), expected.sort());
        const g = 3; // odd group: limited
        assert.equal(field(part, g, F.memLimit), undefined, 'limits not read');
        assert.equal(field(part, g, F.ioRead), undefined, 'io not read');
        assert.equal(field(part, g, F.psiMemSome), undefined, 'psi not read');
        for (const f of [F.cpuUsageNs, F.memUsage, F.memInactiveFile, F.memRss, F.oomKill, F.pids]) assert.equal(part[g * FIELD_COUNT + f], all[g * FIELD_COUNT + f]);
        r.read(part, NEED.usage | NEED.limits | NEED.cadvisor | NEED.psi | NEED.throttling);
        assert.deepEqual(part, all, 'every bit set reads what no mask reads');
        r.close();
      });
    }

    for (const mode of ['v2', 'v1'] as const) {
      it(`${mode}: readAsync fills the same table as read, mask included, and leaves the loop free`, async () => {
        const root = mkdtempSync(join(dir, `async-${mode}`));
        const tree = makeCgroupTree(root, { mode, pods: 3, containersPerPod: 2 });
        const layout = createCgroupLayout(tree.mounts, true);
        const names = ['/', ...tree.pods.flatMap((p) => [`/kubepods/besteffort/pod${p.uid}`, ...p.containers.map((c) => `/kubepods/besteffort/pod${p.uid}/${c.id}`)])];
        const r = impl.createCgroupReader();
        r.setFiles(names.flatMap((n, g) => layout.files(n, g)));
        for (const mask of [undefined, NEED.usage, NEED.usage | NEED.limits]) {
          const sync = new BigUint64Array(names.length * FIELD_COUNT);
          const async = new BigUint64Array(names.length * FIELD_COUNT);
          const files = r.read(sync, mask);
          assert.equal(await r.readAsync(async, mask), files, `files read, mask ${mask}`);
          assert.deepEqual([...async], [...sync], `table, mask ${mask}`);
        }
        r.close();
      });
    }

    it('readAsync owns the reader until it settles: setFiles, read and readAsync throw; close waits', async () => {
      const d = mkdtempSync(join(dir, 'busy'));
      const specs: CgroupFileSpec[] = Array.from({ length: 50 }, (_, i) => {
        writeFileSync(join(d, `f${i}`), `${i + 1}\n`);
        return { path: join(d, `f${i}`), kind: K.single, group: i, slot: F.memUsage };
      });
      const r = impl.createCgroupReader();
      r.setFiles(specs);
      const out = new BigUint64Array(specs.length * FIELD_COUNT);
      const pending = r.readAsync(out);
      const busy = /CgroupReader\.(setFiles|read|readAsync): a readAsync\(\) is in progress; await it first/;
      assert.throws(() => r.setFiles(specs), busy);
      assert.throws(() => r.read(new BigUint64Array(FIELD_COUNT)), busy);
      assert.throws(() => r.readAsync(new BigUint64Array(FIELD_COUNT)), busy);
      assert.equal(await pending, specs.length);
      assert.equal(field(out, 49, F.memUsage), 50n);
      // After it settles the reader is free again; a close during a read waits for it, then holds.
      assert.equal(r.read(out), specs.length);
      const closing = r.readAsync(out);
      r.close();
      assert.ok((await closing) <= specs.length);
      assert.equal(r.read(out), 0, 'closed: no files any more');
      assert.equal(await r.readAsync(out), 0);
      r.close();
    });

    it('keeps fds across passes: rewritten files are re-read, removed ones missing, recreated ones back', () => {
      const d = mkdtempSync(join(dir, 'fd'));
      const p = join(d, 'memory.current');
      writeFileSync(p, '100\n');
      const r = impl.createCgroupReader();
      const spec: CgroupFileSpec = { path: p, kind: K.single, group: 0, slot: F.memUsage };
      r.setFiles([spec]);
      const out = new BigUint64Array(FIELD_COUNT);
      r.read(out);
      assert.equal(out[F.memUsage], 100n);
      writeFileSync(p, '18446744073709551614\n');
      r.read(out);
      assert.equal(out[F.memUsage], 18446744073709551614n);
      rmSync(p);
      r.read(out); // the open fd still reads the unlinked inode; what matters: no crash
      r.setFiles([{ ...spec, path: join(d, 'absent') }]);
      r.read(out);
      assert.equal(out[F.memUsage], MISSING);
      writeFileSync(join(d, 'absent'), '7\n');
      r.read(out);
      assert.equal(out[F.memUsage], 7n);
      r.close();
    });
  });
}

it('reads the real cgroup v1 files of this host (root cgroup), and both implementations agree on a copy', { skip: !existsSync('/sys/fs/cgroup/memory/memory.stat') && 'no cgroup v1 memory controller here' }, () => {
  const layout = createCgroupLayout(detectCgroupMounts(), false);
  assert.equal(layout.mode, 'v1');
  const specs = layout.files('/', 0).filter((s) => existsSync(s.path));
  const copies = specs.map((s, i) => {
    const p = join(dir, `real-${i}`);
    writeFileSync(p, readFileSync(s.path));
    return { ...s, path: p };
  });
  const rows = impls.map((impl) => {
    const live = impl.createCgroupReader();
    live.setFiles(specs);
    const out = new BigUint64Array(FIELD_COUNT);
    live.read(out);
    live.close();
    assert.notEqual(out[F.cpuUsageNs], MISSING, `${impl.name}: cpuacct.usage`);
    assert.notEqual(out[F.memUsage], MISSING, `${impl.name}: memory.usage_in_bytes`);
    assert.notEqual(out[F.memInactiveFile], MISSING, `${impl.name}: memory.stat total_inactive_file`);
    const r = impl.createCgroupReader();
    r.setFiles(copies);
    const copy = new BigUint64Array(FIELD_COUNT);
    r.read(copy);
    r.close();
    return [...copy];
  });
  for (const row of rows.slice(1)) assert.deepEqual(row, rows[0]);
});

it('both implementations parse full-length real cgroupfs files (42-line v1 memory.stat, v2 memory.stat) to the same row', () => {
  const d = mkdtempSync(join(dir, 'real-text'));
  const files: Array<[string, number, string]> = [
    ['v1-memory.stat', K.memStatV1, real.V1_MEMORY_STAT],
    ['v2-memory.stat', K.memStatV2, real.V2_MEMORY_STAT],
    ['v1-cpu.stat', K.cpuStatV1, real.V1_CPU_STAT],
    ['v2-cpu.stat', K.cpuStatV2, real.V2_CPU_STAT],
    ['v2-memory.events', K.memEventsV2, real.V2_MEMORY_EVENTS],
    ['v1-memory.oom_control', K.oomControlV1, real.V1_OOM_CONTROL],
  ];
  const specs: CgroupFileSpec[] = files.map(([name, kind, text], group) => {
    writeFileSync(join(d, name), text);
    return { path: join(d, name), kind: kind as CgroupFileSpec['kind'], group, slot: 0 };
  });
  const tables = impls.map((impl) => {
    const r = impl.createCgroupReader();
    r.setFiles(specs);
    const out = new BigUint64Array(specs.length * FIELD_COUNT);
    assert.equal(r.read(out), specs.length, impl.name);
    r.close();
    return out;
  });
  for (const t of tables.slice(1)) assert.deepEqual([...t], [...tables[0]!]);
  const out = tables[0]!;
  for (const [g, expected] of [[0, real.V1_EXPECTED], [1, real.V2_EXPECTED]] as const) {
    for (const [k, v] of Object.entries(expected)) assert.equal(field(out, g, F[k as keyof typeof F]), v, `${files[g]![0]} ${k}`);
  }
  assert.equal(field(out, 1, F.memUsage), undefined, 'memory.stat has no usage');
  assert.deepEqual([field(out, 2, F.cpuPeriods), field(out, 2, F.cpuThrottled), field(out, 2, F.cpuThrottledNs)], [1207n, 31n, 4005123456n]);
  assert.deepEqual([field(out, 3, F.cpuUsageNs), field(out, 3, F.cpuUserNs), field(out, 3, F.cpuThrottledNs)], [91827364000n, 61827364000n, 4005123000n]);
  assert.deepEqual([field(out, 4, F.memFailcnt), field(out, 4, F.oom), field(out, 4, F.oomKill)], [17n, 3n, 2n]);
  assert.equal(field(out, 5, F.oomKill), 2n);
});

/** Random file texts mixing valid lines, junk, huge numbers and odd spacing. */
function randomText(rng: () => number, kind: number): string {
  const keys = ['usage_usec', 'user_usec', 'system_usec', 'nr_periods', 'nr_throttled', 'throttled_usec', 'throttled_time', 'anon', 'file', 'inactive_file', 'pgfault', 'pgmajfault',
    'total_rss', 'total_cache', 'total_inactive_file', 'total_pgfault', 'total_pgmajfault', 'oom', 'oom_kill', 'max', 'some', 'full', '8:0', 'Read', 'Write', 'Total'];
  const nums = ['0', '1', '18446744073709551615', '18446744073709551616', '99999999999999999999999', '-1', 'max', '12a', '', '9007199254740993', '18446744073709552'];
  const pick = <T>(a: T[]) => a[Math.floor(rng() * a.length)]!;
  const lines: string[] = [];
  const n = Math.floor(rng() * 8);
  for (let i = 0; i < n; i++) {
    const r = rng();
    if (r < 0.4) lines.push(`${pick(keys)} ${pick(nums)}`);
    else if (r < 0.55) lines.push(`8:${Math.floor(rng() * 32)} rbytes=${pick(nums)} wbytes=${pick(nums)} rios=1`);
    else if (r < 0.7) lines.push(`${pick(['some', 'full'])} avg10=0.00 avg60=1.00 total=${pick(nums)}`);
    else if (r < 0.8) lines.push(`8:0 ${pick(['Read', 'Write', 'Sync'])} ${pick(nums)}`);
    else if (r < 0.9) lines.push(pick(nums));
    else lines.push(`  ${pick(keys)}   ${pick(nums)}  x y z a b c d e f`);
  }
  return lines.join(pick(['\n', '\n', '\n\n', ' \n'])) + (kind % 2 ? '\n' : '');
}

it('both implementations parse random file contents of every kind to the same table', () => {
  let seed = 12345;
  const rng = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
  const d = mkdtempSync(join(dir, 'rand'));
  mkdirSync(d, { recursive: true });
  const specs: CgroupFileSpec[] = [];
  for (let i = 0; i < 400; i++) {
    const kind = (i % 11) as CgroupFileSpec['kind'];
    const p = join(d, `f${i}`);
    writeFileSync(p, randomText(rng, kind));
    specs.push({ path: p, kind, group: i, slot: Math.floor(rng() * (FIELD_COUNT + 2)) });
  }
  const tables = impls.map((impl) => {
    const r = impl.createCgroupReader();
    r.setFiles(specs);
    const out = new BigUint64Array(specs.length * FIELD_COUNT);
    r.read(out);
    r.close();
    return out;
  });
  for (const t of tables.slice(1)) {
    for (let g = 0; g < specs.length; g++) {
      const a = [...tables[0]!.slice(g * FIELD_COUNT, (g + 1) * FIELD_COUNT)];
      const b = [...t.slice(g * FIELD_COUNT, (g + 1) * FIELD_COUNT)];
      assert.deepEqual(b, a, `file ${g} kind ${specs[g]!.kind}: ${JSON.stringify(readFileSync(specs[g]!.path, 'latin1'))}`);
    }
  }
  cpSync(d, join(dir, 'rand-copy'), { recursive: true });
});
