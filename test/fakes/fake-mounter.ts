/** A Mounter that mounts nothing: it records tmpfs (and hugetlbfs) mounts so volume code can be tested unprivileged. */
import { resolve } from 'node:path';
import type { Mounter, TmpfsOptions } from '../../src/volume/mount.js';

export class FakeMounter implements Mounter {
  /** Mount point → the options it was mounted with. */
  readonly mounts = new Map<string, TmpfsOptions>();
  mountCalls = 0;
  /** hugetlbfs mount point → page size option. */
  readonly hugetlbfs = new Map<string, string>();

  async fsTypeAt(path: string): Promise<string | undefined> {
    if (this.hugetlbfs.has(resolve(path))) return 'hugetlbfs';
    return this.mounts.has(resolve(path)) ? 'tmpfs' : undefined;
  }

  async mountHugetlbfs(path: string, pageSize: string): Promise<void> {
    this.mountCalls++;
    this.hugetlbfs.set(resolve(path), pageSize);
  }

  async mountTmpfs(path: string, opts: TmpfsOptions): Promise<void> {
    this.mountCalls++;
    this.mounts.set(resolve(path), opts);
  }

  async unmount(path: string): Promise<void> {
    if (this.hugetlbfs.delete(resolve(path))) return;
    if (!this.mounts.delete(resolve(path))) throw new Error(`umount ${path}: not mounted`);
  }

  async mountsUnder(dir: string): Promise<string[]> {
    const prefix = resolve(dir) + '/';
    return [...this.mounts.keys()].filter((p) => p.startsWith(prefix)).sort((a, b) => b.length - a.length);
  }
}
