/**
 * Finds a file shipped with the package source (a .proto under src/): the compiled code runs from
 * dist/src/..., so the file is looked up next to the calling module first (in case a build step
 * copies it) and then under the package root (found by walking up to package.json).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** `here` is the calling module's directory; `local` its path from there, `fromRoot` from the package root. */
export function findPackageFile(here: string, local: string, fromRoot: string): string {
  const beside = join(here, local);
  if (existsSync(beside)) return beside;
  for (let dir = here; ;) {
    if (existsSync(join(dir, 'package.json'))) {
      const p = join(dir, fromRoot);
      if (existsSync(p)) return p;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`cannot find ${fromRoot} above ${here}`);
}
