#!/usr/bin/env node
// Commit messages as upstream writes them: a subject of at most 72 characters, a blank line, and a
// body that says what changed and why. Checked for every commit after BASE (the first commit the
// rule applies to; older history stays as it was written). One line per offending commit, exit 1.
//
//   node scripts/check-commits.mjs                 the commits of HEAD after BASE
//   node scripts/check-commits.mjs --log FILE      check `git log --format=%H%x00%B%x1e` output
//                                                  read from FILE ('-' for stdin) instead (tests)
//
// A shallow clone may not hold BASE: then every commit it has is checked, and it says so. Merge
// commits are skipped: git writes their message, and the merged commits carry the story.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const BASE = 'ab17e30';
const MAX_SUBJECT = 72;
// One record per commit: hash NUL message RS (git's %x00 and %x1e; neither appears in a message).
const FORMAT = '--format=%H%x00%B%x1e';

/** The problems of one commit message (empty when it follows the rule). */
function messageProblems(message) {
  const lines = message.replace(/\s+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const problems = [];
  if (subject.trim() === '') problems.push('empty subject');
  if (subject.length > MAX_SUBJECT) problems.push(`subject is ${subject.length} characters (at most ${MAX_SUBJECT})`);
  if (lines.length > 1 && lines[1]?.trim() !== '') problems.push('no blank line after the subject');
  if (lines.slice(1).every((l) => l.trim() === '')) problems.push('no body (say what changed and why)');
  return problems;
}

/** `git log` output in FORMAT → [{ hash, message }]. */
function parseLog(text) {
  return text
    .split('\x1e')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record.includes('\0'))
    .map((record) => {
      const [hash = '', message = ''] = record.split('\0');
      return { hash, message };
    });
}

function git(args) {
  const r = spawnSync('git', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return { ok: r.status === 0, out: r.stdout ?? '', err: r.stderr ?? '' };
}

/** The commits to check, from this repository's history. */
function logFromGit() {
  if (git(['cat-file', '-e', `${BASE}^{commit}`]).ok)
    return { text: git(['log', '--no-merges', FORMAT, `${BASE}..HEAD`]).out };
  const shallow = git(['rev-parse', '--is-shallow-repository']).out.trim() === 'true';
  if (!shallow) throw new Error(`base commit ${BASE} is not in this repository's history`);
  return {
    text: git(['log', '--no-merges', FORMAT, 'HEAD']).out,
    note: `shallow clone without ${BASE}: checking the commits it has`,
  };
}

function main(argv) {
  const i = argv.indexOf('--log');
  let source;
  if (i >= 0) {
    const file = argv[i + 1];
    source = { text: readFileSync(file === '-' || file === undefined ? 0 : file, 'utf8') };
  } else source = logFromGit();
  if (source.note) console.log(`commits: ${source.note}`);
  const commits = parseLog(source.text);
  let bad = 0;
  for (const { hash, message } of commits) {
    const problems = messageProblems(message);
    if (problems.length === 0) continue;
    bad++;
    console.log(`${hash.slice(0, 12)} ${JSON.stringify(message.split('\n')[0]?.slice(0, 60))}: ${problems.join('; ')}`);
  }
  console.log(`commits: ${commits.length} checked${i >= 0 ? '' : ` (after ${BASE})`}, ${bad} with a problem`);
  return bad === 0 ? 0 : 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  console.error(`check-commits: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 2;
}
