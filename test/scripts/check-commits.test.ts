// scripts/check-commits.mjs on made-up `git log` output: subjects of at most 72 characters, a
// blank line, a body; one line per offending commit and exit 1, else a summary line and exit 0.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { testTempDir } from '../support/temp-dir.js';

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'check-commits.mjs');

/** What `git log --format=%H%x00%B%x1e` prints for these commits (git ends %B with a newline). */
const gitLog = (commits: [hash: string, message: string][]) =>
  commits.map(([hash, message]) => `${hash}\0${message}\n\x1e\n`).join('');

function check(commits: [string, string][]): { status: number | null; lines: string[] } {
  const run = spawnSync(process.execPath, [SCRIPT, '--log', '-'], { input: gitLog(commits), encoding: 'utf8' });
  return { status: run.status, lines: `${run.stdout}${run.stderr}`.split('\n').filter(Boolean) };
}

const GOOD =
  'images: move the pull limiter to src/images\n\nThe limiter belongs to the image manager, not the runtime.\n';

describe('scripts/check-commits.mjs', () => {
  it('passes commits with a short subject, a blank line and a body', () => {
    const r = check([
      ['a'.repeat(40), GOOD],
      ['b'.repeat(40), `${'x'.repeat(72)}\n\nwhy\n`],
    ]);
    assert.deepEqual(r, { status: 0, lines: ['commits: 2 checked, 0 with a problem'] });
  });

  it('names each commit with a long subject, no body or no blank line', () => {
    const r = check([
      ['a'.repeat(40), GOOD],
      ['b'.repeat(40), `${'y'.repeat(73)}\n\nbody\n`],
      ['c'.repeat(40), 'fix the thing\n'],
      ['d'.repeat(40), 'fix the thing\nbody right under the subject\n'],
    ]);
    assert.equal(r.status, 1);
    assert.deepEqual(r.lines, [
      `bbbbbbbbbbbb "${'y'.repeat(60)}": subject is 73 characters (at most 72)`,
      'cccccccccccc "fix the thing": no body (say what changed and why)',
      'dddddddddddd "fix the thing": no blank line after the subject',
      'commits: 4 checked, 3 with a problem',
    ]);
  });

  it('a body of blank lines is no body', () => {
    const r = check([['e'.repeat(40), 'subject\n\n\n   \n']]);
    assert.equal(r.status, 1);
    assert.match(r.lines[0] ?? '', /no body/);
  });

  it('no commits after the base: nothing to check', () => {
    assert.deepEqual(check([]), { status: 0, lines: ['commits: 0 checked, 0 with a problem'] });
  });

  it('a shallow clone without the base commit: the commits it holds are checked', () => {
    const dir = testTempDir('kts-commits-');
    after(() => rmSync(dir, { recursive: true, force: true }));
    const git = (cwd: string, ...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd,
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
    };
    const origin = join(dir, 'origin');
    git(dir, 'init', '-q', origin);
    for (const [i, message] of ['old history, no body', 'a subject that is fine\n\nand a body'].entries()) {
      writeFileSync(join(origin, 'f'), `${i}`);
      git(origin, 'add', 'f');
      git(origin, 'commit', '-q', '-m', message);
    }
    git(dir, 'clone', '-q', '--depth', '1', `file://${origin}`, 'clone');
    const run = spawnSync(process.execPath, [SCRIPT], { cwd: join(dir, 'clone'), encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /shallow clone without ab17e30: checking the commits it has\ncommits: 1 checked/);
  });
});
