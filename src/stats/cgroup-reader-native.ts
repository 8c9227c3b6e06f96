/** Adapter for the addon's CgroupReader (native/src/cgroup_stats.{h,cc}). */
import { NEED_ALL, type CgroupFileSpec } from './cgroup-fields.js';
import type { CgroupReader, CreateCgroupReader } from './types.js';

export interface NativeCgroupReader {
  setFiles(paths: string[], meta: Uint32Array): void;
  read(out: BigUint64Array, mask: number): number;
  readAsync(out: BigUint64Array, mask: number): Promise<number>;
  parse(kind: number, slot: number, text: Buffer, out: BigUint64Array): void;
  close(): void;
}
export type NativeCgroupReaderCtor = new () => NativeCgroupReader;

export function nativeCgroupReaderFactory(Ctor: NativeCgroupReaderCtor): CreateCgroupReader {
  return (): CgroupReader => {
    const inner = new Ctor();
    return {
      setFiles(specs: readonly CgroupFileSpec[]): void {
        const meta = new Uint32Array(specs.length * 4);
        specs.forEach((s, i) => {
          meta[i * 4] = s.kind;
          meta[i * 4 + 1] = s.group;
          meta[i * 4 + 2] = s.slot;
          meta[i * 4 + 3] = s.need ?? 0;
        });
        inner.setFiles(
          specs.map((s) => s.path),
          meta,
        );
      },
      read: (out, mask = NEED_ALL) => inner.read(out, mask),
      readAsync: (out, mask = NEED_ALL) => inner.readAsync(out, mask),
      close: () => inner.close(),
    };
  };
}
