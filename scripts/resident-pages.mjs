#!/usr/bin/env node
// Which pages of the node binary a running process holds in RSS, and what they are: section
// (.text, .rodata, .dynsym, …) and, inside them, the code or data they belong to (V8's compiler,
// ICU's data, OpenSSL, the embedded builtins, …), read from the binary's symbol table.
//
//   node scripts/resident-pages.mjs <pid> [--top N] [--json]
//
// It reads /proc/<pid>/maps for the mappings of the executable, /proc/<pid>/pagemap (bit 63:
// page present in this process's page table, what RSS counts) for each of their pages, and
// `nm -n -S -C` of the executable. Needs root (or the process's owner) for pagemap. Written for
// issue 18 (RSS at 100 pods): it tells start-up-only code from steady-state code and shows which
// read-only data (ICU, the V8 snapshot) a process has touched.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, readlinkSync } from 'node:fs';

const PAGE = 4096;

/** The executable's mappings: [start, end) with the file offset of start. */
function exeMappings(pid, exe) {
  return readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith(exe))
    .map((l) => {
      const [range, perms, offset] = l.split(/\s+/);
      const [start, end] = range.split('-').map((h) => parseInt(h, 16));
      return { start, end, perms, offset: parseInt(offset, 16) };
    });
}

/** Addresses of the pages of [start, end) that are present (pagemap bit 63). */
function presentPages(pid, start, end) {
  const fd = openSync(`/proc/${pid}/pagemap`, 'r');
  try {
    const n = (end - start) / PAGE;
    const buf = Buffer.alloc(n * 8);
    readSync(fd, buf, 0, buf.length, (start / PAGE) * 8);
    const out = [];
    for (let i = 0; i < n; i++) if (buf.readBigUInt64LE(i * 8) >> 63n) out.push(start + i * PAGE);
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Sections of the ELF file by address (non-PIE node: the link address is the run address). */
function sections(exe) {
  const out = [];
  for (const l of execFileSync('readelf', ['-S', '-W', exe], { encoding: 'utf8', maxBuffer: 1 << 26 }).split('\n')) {
    const m = /\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+[0-9a-f]+\s+([0-9a-f]+)/.exec(l);
    if (m && parseInt(m[2], 16) > 0)
      out.push({ name: m[1], start: parseInt(m[2], 16), end: parseInt(m[2], 16) + parseInt(m[3], 16) });
  }
  return out;
}

/** Sorted symbols (address, name); a page belongs to the last symbol starting at or before it. */
function symbols(exe) {
  const out = [];
  for (const l of execFileSync('nm', ['-n', '-S', '-C', exe], { encoding: 'utf8', maxBuffer: 1 << 30 }).split('\n')) {
    const m = /^([0-9a-f]{16}) (?:([0-9a-f]{16}) )?(\w) (.*)$/.exec(l);
    if (m) out.push({ addr: parseInt(m[1], 16), size: m[2] ? parseInt(m[2], 16) : undefined, name: m[4] });
  }
  return out;
}

/** A coarse owner for a symbol: the C++ namespaces (two deep for v8/node), or a C prefix. */
export function ownerOf(name) {
  if (name === 'icudt78_dat' || /^icudt\d+_dat$/.test(name)) return 'ICU data (icudt*_dat)';
  if (name.startsWith('v8_Default_embedded_blob')) return `V8 embedded builtins (${name})`;
  if (name === 'v8::internal::blob_data') return 'V8 startup snapshot (blob_data)';
  const bare = name.replace(/\(.*$/, '').replace(/<.*$/, '');
  const parts = bare.split('::');
  if (parts.length > 1) {
    const depth = parts[0] === 'v8' || parts[0] === 'node' ? (parts[1] === 'internal' && parts.length > 3 ? 3 : 2) : 1;
    return parts.slice(0, Math.min(depth, parts.length - 1)).join('::') + '::';
  }
  const c = /^_*([A-Za-z]+?)(?:_|[A-Z0-9]|$)/.exec(bare);
  return `C ${c ? c[1].toLowerCase() : bare}`;
}

function findLast(sorted, addr, key) {
  let lo = 0,
    hi = sorted.length - 1,
    best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid][key] <= addr) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best < 0 ? undefined : sorted[best];
}

function tally(map, key, pages = 1) {
  map.set(key, (map.get(key) ?? 0) + pages);
}
const mib = (pages) => Math.round(((pages * PAGE) / 1048576) * 100) / 100;

function main() {
  const pid = Number(process.argv[2]);
  const top = Number(process.argv[process.argv.indexOf('--top') + 1] || 25);
  if (!pid) {
    process.stderr.write('usage: node scripts/resident-pages.mjs <pid> [--top N] [--json]\n');
    process.exit(2);
  }
  const exe = readlinkSync(`/proc/${pid}/exe`);
  const secs = sections(exe);
  const syms = symbols(exe);
  const bySection = new Map(),
    byOwner = new Map(),
    bySymbol = new Map();
  let total = 0;
  for (const m of exeMappings(pid, exe)) {
    for (const addr of presentPages(pid, m.start, m.end)) {
      total++;
      const sec = secs.find((s) => addr < s.end && addr + PAGE > s.start)?.name ?? `(${m.perms} no section)`;
      tally(bySection, sec);
      const sym = sec === '.text' || sec === '.rodata' ? findLast(syms, addr, 'addr') : undefined;
      tally(byOwner, `${sec} ${sym ? ownerOf(sym.name) : sec}`);
      if (sym)
        tally(
          bySymbol,
          `${sec} ${sym.size !== undefined && addr >= sym.addr + sym.size + PAGE ? 'after ' : ''}${sym.name.slice(0, 100)}`,
        );
    }
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => ({ what: k, mib: mib(v) }));
  const result = {
    pid,
    exe,
    resident_mib: mib(total),
    by_section: sorted(bySection),
    by_owner: sorted(byOwner).slice(0, top),
    by_symbol: sorted(bySymbol).slice(0, top),
  };
  if (process.argv.includes('--json')) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return;
  }
  process.stdout.write(`${exe}: ${result.resident_mib} MiB resident in pid ${pid}\n\nby section:\n`);
  for (const r of result.by_section) process.stdout.write(`  ${String(r.mib).padStart(7)}  ${r.what}\n`);
  process.stdout.write(`\nby owner (top ${top}):\n`);
  for (const r of result.by_owner) process.stdout.write(`  ${String(r.mib).padStart(7)}  ${r.what}\n`);
  process.stdout.write(`\nby symbol (top ${top}; "after": pages past the symbol's end, no symbol of their own):\n`);
  for (const r of result.by_symbol) process.stdout.write(`  ${String(r.mib).padStart(7)}  ${r.what}\n`);
}

main();
