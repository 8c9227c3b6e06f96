/** A Mounter that mounts nothing: it records tmpfs mounts so volume code can be tested unprivileged. */
import { resolve } from 'node:path';
import type { Mounter, TmpfsOptions } from '../../src/volume/mount.js';

export class FakeMounter implements Mounter {
  /** Mount point → the options it was mounted with. */
  readonly mounts = new Map<string, TmpfsOptions>();
  mountCalls = 0;

  async fsTypeAt(path: string): Promise<string | undefined> {
    return this.mounts.has(resolve(path)) ? 'tmpfs' : undefined;
  }

  async mountTmpfs(path: string, opts: TmpfsOptions): Promise<void> {
    this.mountCalls++;
    this.mounts.set(resolve(path), opts);
  }

  async unmount(path: string): Promise<void> {
    if (!this.mounts.delete(resolve(path))) throw new Error(`umount ${path}: not mounted`);
  }

  async mountsUnder(dir: string): Promise<string[]> {
    const prefix = resolve(dir) + '/';
    return [...this.mounts.keys()].filter((p) => p.startsWith(prefix)).sort((a, b) => b.length - a.length);
  }
}
