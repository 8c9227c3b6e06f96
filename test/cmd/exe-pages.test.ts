/**
 * releaseExecutablePages takes the node binary's read-only, never-written pages out of RSS
 * (they stay in the page cache and come back on use); the agent runs it after start-up and every
 * minute, only when the addon is in use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { addonReleaseExecutablePages, startExePagesRelease } from '../../src/cmd/exe-pages.js';

interface Mapping {
  perms: string;
  rssKiB: number;
  anonKiB: number;
}

/** This process's mappings of its executable, from /proc/self/smaps. */
function exeMappings(): Mapping[] {
  const exe = readlinkSync('/proc/self/exe');
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      cur = line.endsWith(` ${exe}`) ? { perms: line.split(' ')[1]!, rssKiB: 0, anonKiB: 0 } : undefined;
      if (cur) out.push(cur);
    } else if (cur) {
      const m = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
      if (m?.[1] === 'Rss') cur.rssKiB = Number(m[2]);
      if (m?.[1] === 'Anonymous') cur.anonKiB = Number(m[2]);
    }
  }
  return out;
}

const residentKiB = (ms: Mapping[]) => ms.reduce((s, m) => s + m.rssKiB, 0);

test(
  "with the addon: the executable's read-only pages leave RSS, the process keeps working",
  { skip: addonReleaseExecutablePages() ? false : 'no addon in use (KUBELET_TS_NATIVE=0 or not built)' },
  () => {
    const release = addonReleaseExecutablePages()!;
    const before = exeMappings();
    const eligible = before.filter((m) => !m.perms.includes('w') && m.perms[3] === 'p' && m.anonKiB === 0);
    assert.ok(
      before.some((m) => m.anonKiB > 0),
      'the executable has copy-on-write pages (data, RELRO) to leave alone',
    );
    const r = release()!;
    assert.equal(r.mappings, eligible.length, 'every read-only mapping without copy-on-write pages, and only those');
    assert.ok(r.residentBytes >= residentKiB(eligible) * 1024 * 0.9, `${r.residentBytes} B were resident`);
    const after = exeMappings();
    assert.ok(
      residentKiB(after) < residentKiB(before) / 2,
      `executable pages resident ${residentKiB(before)} → ${residentKiB(after)} KiB`,
    );
    for (const [i, m] of before.entries())
      if (m.anonKiB > 0) assert.equal(after[i]!.anonKiB, m.anonKiB, 'copy-on-write pages kept');
    // Code, ICU data and the snapshot are read again from the page cache on use.
    assert.equal(['b', 'a', 'C'].sort((x, y) => x.localeCompare(y, 'en')).join(''), 'abC');
    assert.equal(new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'long' }).format(new Date(0)), 'January');
    assert.equal(JSON.parse(JSON.stringify({ a: [1, 2, { b: 'é'.normalize('NFD') }] })).a[2].b.length, 2);
  },
);

test('startExePagesRelease: first after firstMs, then every interval until stopped; no release, no timer', async () => {
  const at: number[] = [];
  const t0 = Date.now();
  const t = startExePagesRelease(
    () => (at.push(Date.now() - t0), { mappings: 1, bytes: 4096, residentBytes: 4096 }),
    30,
    10,
  );
  await new Promise((r) => setTimeout(r, 75));
  t.stop();
  const n = at.length;
  assert.ok(n >= 2 && n <= 6, `${n} releases in 75 ms`);
  assert.ok(at[0]! >= 25, `first release after ${at[0]} ms`);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(at.length, n, 'none after stop()');
  startExePagesRelease(undefined, 1, 1).stop();
  if (process.env.KUBELET_TS_NATIVE === '0')
    assert.equal(addonReleaseExecutablePages(), undefined, 'KUBELET_TS_NATIVE=0: nothing released');
});
