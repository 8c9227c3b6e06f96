/**
 * Fresh directories under the OS temp dir for a test file, removed when its process exits (node
 * --test runs each file in a process of its own). A directory with anything still mounted below it
 * is left in place, and said: removing through a bind mount would delete what it shows.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseMountInfo } from '../../src/volume/mount.js';

const made: string[] = [];

function removeAll(): void {
  const points = parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8')).map((m) => m.mountPoint);
  for (const dir of made.splice(0)) {
    const mounted = points.filter((p) => p === dir || p.startsWith(dir + '/'));
    if (mounted.length > 0) {
      process.stderr.write(`testTempDir: ${dir} left in place, still mounted below it: ${mounted.join(', ')}\n`);
      continue;
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch (err) {
      process.stderr.write(`testTempDir: ${dir} not removed: ${String(err)}\n`);
    }
  }
}

/** mkdtemp(<tmpdir>/<prefix>XXXXXX), removed when the test process exits. */
export function testTempDir(prefix: string): string {
  const dir = resolve(mkdtempSync(join(tmpdir(), prefix)));
  if (made.length === 0) process.once('exit', removeAll);
  made.push(dir);
  return dir;
}
