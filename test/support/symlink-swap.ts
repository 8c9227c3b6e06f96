/**
 * Races a symlink against path resolution: flips `dir` between the real directory and a symlink
 * to `outside` as fast as it can (rename away, symlink in, unlink, rename back), yielding to the
 * event loop every few flips so that requests in flight interleave with it. Bounded.
 */
import { renameSync, symlinkSync, unlinkSync } from 'node:fs';

export function startSymlinkSwap(dir: string, outside: string, maxFlips = 50_000): { stop(): Promise<void> } {
  const parked = `${dir}-parked`;
  let stopped = false;
  const loop = (async () => {
    for (let i = 0; i < maxFlips && !stopped; i++) {
      renameSync(dir, parked);
      symlinkSync(outside, dir);
      unlinkSync(dir);
      renameSync(parked, dir);
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
