/**
 * TypeScript twin of the native cgroup batch reader: the same persistent fds and positional
 * reads (fs.readSync with a position is pread), and the same parser (cgroup-fields.ts).
 * readAsync makes the same reads in time slices (util/time-slice.ts): the native one runs on
 * the libuv pool, and a pread per file through fs.promises would cost the loop more than it frees.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { TimeSlice } from '../util/time-slice.js';
import { FIELD_COUNT, MISSING, NEED_ALL, parseCgroupFile, wanted, type CgroupFileSpec } from './cgroup-fields.js';
import type { CgroupReader } from './types.js';

interface Entry {
  spec: CgroupFileSpec;
  fd: number;
}

class TsCgroupReader implements CgroupReader {
  private entries: Entry[] = [];
  private buf = Buffer.alloc(16384);
  private busy = false;
  private closePending = false;

  setFiles(specs: readonly CgroupFileSpec[]): void {
    this.assertIdle('setFiles');
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
    this.assertIdle('read');
    out.fill(MISSING);
    let files = 0;
    for (const e of this.entries) if (this.readInto(e, out, mask)) files++;
    return files;
  }

  readAsync(out: BigUint64Array, mask = NEED_ALL): Promise<number> {
    this.assertIdle('readAsync'); // throws here, as the native one does
    this.busy = true;
    return this.readSliced(out, mask);
  }

  /** Starts on the next turn, as the native read starts on the pool: the caller's turn ends first. */
  private async readSliced(out: BigUint64Array, mask: number): Promise<number> {
    try {
      const slice = new TimeSlice();
      await slice.next();
      out.fill(MISSING);
      let files = 0;
      for (const e of this.entries) {
        if (slice.due()) await slice.next();
        if (this.closePending) break; // close() came while we yielded: the rest would read closed fds
        if (this.readInto(e, out, mask)) files++;
      }
      return files;
    } finally {
      this.busy = false;
      if (this.closePending) this.close();
    }
  }

  private assertIdle(method: string): void {
    if (this.busy) throw new Error(`CgroupReader.${method}: a readAsync() is in progress; await it first`);
  }

  /** One file into out; false when it is not wanted, outside out, or unreadable. */
  private readInto(e: Entry, out: BigUint64Array, mask: number): boolean {
    const base = e.spec.group * FIELD_COUNT;
    if (base + FIELD_COUNT > out.length || !wanted(e.spec, mask)) return false;
    const text = this.readEntry(e);
    if (text === undefined) return false;
    parseCgroupFile(e.spec.kind, e.spec.slot, text, out, base);
    return true;
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
    if (this.busy) {
      this.closePending = true; // readAsync closes when it settles
      return;
    }
    this.closePending = false;
    for (const e of this.entries) if (e.fd >= 0) closeSync(e.fd);
    this.entries = [];
  }
}

export const createTsCgroupReader = (): CgroupReader => new TsCgroupReader();
