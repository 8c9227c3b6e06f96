/**
 * TypeScript twin of the native cgroup batch reader: the same persistent fds and positional
 * reads (fs.readSync with a position is pread), and the same parser (cgroup-fields.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { FIELD_COUNT, MISSING, NEED_ALL, parseCgroupFile, wanted, type CgroupFileSpec } from './cgroup-fields.js';
import type { CgroupReader } from './types.js';

interface Entry {
  spec: CgroupFileSpec;
  fd: number;
}

class TsCgroupReader implements CgroupReader {
  private entries: Entry[] = [];
  private buf = Buffer.alloc(16384);

  setFiles(specs: readonly CgroupFileSpec[]): void {
    const open = new Map<string, number>();
    for (const e of this.entries) {
      if (e.fd < 0) continue;
      if (open.has(e.spec.path)) closeSync(e.fd);
      else open.set(e.spec.path, e.fd);
    }
    this.entries = specs.map((spec) => {
      const fd = open.get(spec.path) ?? -1;
      open.delete(spec.path);
      return { spec, fd };
    });
    for (const fd of open.values()) closeSync(fd);
  }

  read(out: BigUint64Array, mask = NEED_ALL): number {
    out.fill(MISSING);
    let files = 0;
    for (const e of this.entries) {
      const base = e.spec.group * FIELD_COUNT;
      if (base + FIELD_COUNT > out.length || !wanted(e.spec, mask)) continue;
      const text = this.readEntry(e);
      if (text === undefined) continue;
      parseCgroupFile(e.spec.kind, e.spec.slot, text, out, base);
      files++;
    }
    return files;
  }

  private readEntry(e: Entry): string | undefined {
    try {
      if (e.fd < 0) e.fd = openSync(e.spec.path, 'r');
    } catch {
      return undefined;
    }
    let used = 0;
    try {
      for (;;) {
        if (used === this.buf.length) {
          const bigger = Buffer.alloc(this.buf.length * 2);
          this.buf.copy(bigger);
          this.buf = bigger;
        }
        const n = readSync(e.fd, this.buf, used, this.buf.length - used, used);
        if (n === 0) break;
        used += n;
        if (this.buf.length - used >= 4096) break; // a short read is the end, as in the native reader
      }
    } catch {
      closeSync(e.fd); // a removed cgroup answers ENODEV: reopen next pass
      e.fd = -1;
      return undefined;
    }
    return this.buf.toString('latin1', 0, used);
  }

  close(): void {
    for (const e of this.entries) if (e.fd >= 0) closeSync(e.fd);
    this.entries = [];
  }
}

export const createTsCgroupReader = (): CgroupReader => new TsCgroupReader();
