/**
 * Opens a path below a trusted directory without following a symlink anywhere on the way and
 * without a check-then-open race: what openat2(RESOLVE_NO_SYMLINKS) does, which Node does not
 * offer (it has no openat either). Each component is opened with O_NOFOLLOW relative to the
 * directory opened just before it, named as `/proc/self/fd/<dirfd>/<component>`: the kernel
 * resolves `/proc/self/fd/<dirfd>` to the very directory that descriptor holds, not to a path
 * that could have been swapped since, and O_NOFOLLOW refuses `<component>` when it is a
 * symlink (ELOOP). So a symlink put in place at any level, before or during the walk, is
 * refused rather than followed. Linux with /proc mounted (as the kubelet needs anyway).
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pathComponent } from './path-component.js';

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO planted in the tree must not hang a thread of the pool in open().
const LEAF_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The path that opens `name` inside the directory `dir` holds open (openat semantics). */
export function pathAt(dir: FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`;
}

/**
 * Opens `root` (trusted: symlinks in it are followed) and then each of `components` in turn;
 * the result is the last one, a directory or anything else (the caller fstat()s it). Errors are
 * the kernel's: ELOOP for a symlink, ENOTDIR, ENOENT, EACCES. Components are single names.
 */
export async function openBeneath(root: string, components: readonly string[]): Promise<FileHandle> {
  const names = components.map((c) => pathComponent(c, 'path component'));
  let current = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < names.length; i++) {
      const next = await open(pathAt(current, names[i]), i === names.length - 1 ? LEAF_FLAGS : DIR_FLAGS);
      await current.close();
      current = next;
    }
    return current;
  } catch (err) {
    await current.close().catch(() => undefined);
    throw err;
  }
}
