/**
 * The relist replies bench/pleg-diff.ts replays, and a CLI that writes them for
 * native/bench/pleg_diff_driver.cc (scripts/callgrind-pleg.sh): per size, the
 * ListPodSandboxResponse and ListContainersResponse bytes of STATES node states, each 1 % churn
 * (exits, restarts as new containers, removals) from the one before.
 *   node dist/bench/pleg-replies.js DIR N...     writes DIR/sb<N>_<s>.bin and DIR/ct<N>_<s>.bin
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchNode } from './fixtures/relist-model.js';

export const STATES = 4;

/** The relists of a node of `containers` containers (4 per pod), seeded by its size. */
export function benchRelists(containers: number): { relists: Array<{ sb: Buffer; ct: Buffer }>; sandboxes: number } {
  const node = new BenchNode(0x5eed + containers, containers);
  const relists: Array<{ sb: Buffer; ct: Buffer }> = [];
  for (let s = 0; s < STATES; s++) {
    if (s > 0) node.churn(0.01);
    const enc = node.encode();
    relists.push({ sb: enc.sandboxes, ct: enc.containers });
  }
  return { relists, sandboxes: node.pods.length };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [dir, ...sizes] = process.argv.slice(2);
  if (!dir || sizes.length === 0) {
    console.error('usage: node dist/bench/pleg-replies.js DIR N...');
    process.exit(2);
  }
  mkdirSync(dir, { recursive: true });
  for (const n of sizes) {
    benchRelists(Number(n)).relists.forEach((r, s) => {
      writeFileSync(join(dir, `sb${n}_${s}.bin`), r.sb);
      writeFileSync(join(dir, `ct${n}_${s}.bin`), r.ct);
    });
  }
}
