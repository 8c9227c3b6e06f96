#!/usr/bin/env node
// The e2e plan: which test/e2e files run on which containerd release and in which mode, from
// the one classification in test/e2e/matrix.json ("run": every | runtimes | twins | once, and a
// "why").
//
//   node scripts/e2e-matrix.mjs [--runtimes "1.6 1.7 2"] [--only "cri pleg-raw"] [--dir DIR] [--matrix FILE]
//
// Prints one line per leg, in the order scripts/test.sh runs them (a fresh daemon per release):
//   <leg> <containerd version> <KUBELET_TS_NATIVE> <file.test.js>...
// Legs: each runtime in native mode, and TS mode on the first runtime listed (the suite's TS leg).
//   every     every leg
//   runtimes  native on each runtime listed, not in the TS leg
//   twins     native on the last runtime listed, and the TS leg
//   once      native on the last runtime listed
// The last runtime listed is the newest in the default order; with a single runtime every file
// runs there, so KUBELET_TS_E2E_RUNTIMES="1.6" still runs the whole e2e suite on 1.6.
// --only keeps the named files (without .test.ts) after the checks. Leg names: e2e-native,
// e2e-ts (1.6), e2e-native-containerd-<v> and e2e-ts-containerd-<v> (others).
// Exit 0: the plan; 1: an e2e file the matrix does not classify, or a bad entry (one line each);
// 2: bad arguments or a matrix that is not JSON.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = ['every', 'runtimes', 'twins', 'once'];
/** The classes run natively on every runtime, and those of the TS leg. */
const ON_EACH_RUNTIME = new Set(['every', 'runtimes']);
const IN_TS_LEG = new Set(['every', 'twins']);
const SUFFIX = '.test.ts';

function usage(message) {
  if (message) console.error(`e2e-matrix: ${message}`);
  console.error(
    'usage: node scripts/e2e-matrix.mjs [--runtimes "1.6 1.7 2"] [--only "name ..."] [--dir DIR] [--matrix FILE]',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { runtimes: '1.6 1.7 2', only: '', dir: join(REPO, 'test', 'e2e'), matrix: '' };
  const flags = { '--runtimes': 'runtimes', '--only': 'only', '--dir': 'dir', '--matrix': 'matrix' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const key = flags[flag];
    if (!key) usage(`unknown argument ${argv[i]}`);
    const value = inline ?? argv[++i];
    if (value === undefined) usage(`${flag} needs a value`);
    opts[key] = value;
  }
  opts.matrix ||= join(opts.dir, 'matrix.json');
  return opts;
}

/** Problems of the matrix against the e2e files of `dir`, one actionable line each. */
function problems(matrix, files) {
  const out = [];
  const entries = matrix.files ?? {};
  for (const f of files) {
    if (!(f in entries))
      out.push(
        `test/e2e/${f} is not classified: add it to test/e2e/matrix.json with "run": ${RUNS.join(' | ')} and a one-line "why" (docs/testing.md says which)`,
      );
  }
  for (const [f, e] of Object.entries(entries)) {
    if (!files.includes(f)) {
      out.push(`test/e2e/matrix.json names ${f}, which test/e2e/ does not have: remove or rename the entry`);
      continue;
    }
    if (!RUNS.includes(e?.run))
      out.push(`test/e2e/matrix.json: ${f} has "run": ${JSON.stringify(e?.run)}; expected ${RUNS.join(' | ')}`);
    if (typeof e?.why !== 'string' || !e.why.trim()) out.push(`test/e2e/matrix.json: ${f} needs a one-line "why"`);
  }
  return out;
}

/** The legs for `runtimes` (first: also the TS leg; last: where once and twins run native). */
function legs(matrix, files, runtimes) {
  const runOf = (f) => matrix.files[f].run;
  const js = (list) => list.map((f) => f.slice(0, -SUFFIX.length) + '.test.js');
  const out = [];
  runtimes.forEach((version, i) => {
    const suffix = version === '1.6' ? '' : `-containerd-${version}`;
    const last = i === runtimes.length - 1;
    const native = files.filter((f) => last || ON_EACH_RUNTIME.has(runOf(f)));
    if (native.length) out.push([`e2e-native${suffix}`, version, '1', ...js(native)]);
    const ts = files.filter((f) => IN_TS_LEG.has(runOf(f)));
    if (i === 0 && ts.length) out.push([`e2e-ts${suffix}`, version, '0', ...js(ts)]);
  });
  return out;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const runtimes = opts.runtimes.split(/\s+/).filter(Boolean);
  if (!runtimes.length) usage('--runtimes lists no runtime');
  let matrix;
  try {
    matrix = JSON.parse(readFileSync(opts.matrix, 'utf8'));
  } catch (err) {
    console.error(`e2e-matrix: cannot read ${opts.matrix}: ${err.message}`);
    process.exit(2);
  }
  const files = readdirSync(opts.dir)
    .filter((f) => f.endsWith(SUFFIX))
    .sort();
  const found = problems(matrix, files);
  if (found.length) {
    for (const p of found) console.error(p);
    process.exit(1);
  }
  const only = opts.only.split(/\s+/).filter(Boolean);
  const unknown = only.filter((n) => !files.includes(n + SUFFIX));
  if (unknown.length) usage(`--only names no e2e file: ${unknown.join(', ')}`);
  const chosen = only.length ? files.filter((f) => only.includes(f.slice(0, -SUFFIX.length))) : files;
  for (const leg of legs(matrix, chosen, runtimes)) console.log(leg.join(' '));
}

main();
