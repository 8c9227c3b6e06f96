/** Adapter for the addon's CgroupReader (native/src/cgroup_stats.{h,cc}). */
import type { CgroupFileSpec } from './cgroup-fields.js';
import type { CgroupReader, CreateCgroupReader } from './types.js';

export interface NativeCgroupReader {
  setFiles(paths: string[], meta: Uint32Array): void;
  read(out: BigUint64Array): number;
  parse(kind: number, slot: number, text: Buffer, out: BigUint64Array): void;
  close(): void;
}
export type NativeCgroupReaderCtor = new () => NativeCgroupReader;

export function nativeCgroupReaderFactory(Ctor: NativeCgroupReaderCtor): CreateCgroupReader {
  return (): CgroupReader => {
    const inner = new Ctor();
    return {
      setFiles(specs: readonly CgroupFileSpec[]): void {
        const meta = new Uint32Array(specs.length * 3);
        specs.forEach((s, i) => {
          meta[i * 3] = s.kind;
          meta[i * 3 + 1] = s.group;
          meta[i * 3 + 2] = s.slot;
        });
        inner.setFiles(specs.map((s) => s.path), meta);
      },
      read: (out) => inner.read(out),
      close: () => inner.close(),
    };
  };
}
