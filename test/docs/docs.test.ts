// The documentation stays true to the code and to itself: the generated references of docs/
// (configuration fields, error codes, layers) match what they are generated from
// (scripts/gen-docs.mjs --check), the README stays a short door that links every page of docs/,
// every relative link resolves to a file and a heading, every error code named in the docs
// exists, and the operating guide describes every flag --help lists.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../../src/errors.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const README_MAX_LINES = 250;

const docsPages = (): string[] =>
  readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort();
/** Every Markdown file the links are checked in. */
const markdownFiles = (): string[] => [
  README,
  join(ROOT, 'native', 'README.md'),
  ...docsPages().map((f) => join(DOCS, f)),
];

/** The text outside fenced code blocks and inline code spans, where links and headings are. */
function prose(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      out.push('');
      continue;
    }
    out.push(fenced ? '' : line.replace(/`[^`]*`/g, '``'));
  }
  return out;
}

/** GitHub's anchor for a heading: inline markup dropped, lowercased, punctuation removed, spaces → '-'. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, (c) => (c === '_' ? '_' : ''))
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings, with GitHub's -1, -2 suffixes for repeats. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a file (not http:, https:, mailto:), as [line, target]. */
function relativeLinks(file: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  prose(readFileSync(file, 'utf8')).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push([i + 1, target]);
    }
  });
  return out;
}

test('the generated references of docs/ match the code (node scripts/gen-docs.mjs --check)', () => {
  const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'gen-docs.mjs'), '--check'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `${run.stderr}${run.stdout}`);
});

test(`README.md is at most ${README_MAX_LINES} lines`, () => {
  const lines = readFileSync(README, 'utf8').split('\n').length - 1;
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines: move detail into docs/ and link it`);
});

test('README.md links every page of docs/', () => {
  const linked = new Set(relativeLinks(README).map(([, t]) => t.split('#')[0]));
  const missing = docsPages().filter((f) => !linked.has(`docs/${f}`));
  assert.deepEqual(missing, [], 'pages of docs/ that README.md does not link');
});

test('every relative link in README.md, native/README.md and docs/ names a file that exists and a heading it has', () => {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    for (const [line, target] of relativeLinks(file)) {
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)}:${line}: ${target}`;
      if (!existsSync(dest)) broken.push(`${where} (no such file)`);
      else if (anchor && statSync(dest).isFile() && dest.endsWith('.md') && !anchors(dest).has(anchor))
        broken.push(`${where} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test("docs/operating.md's flags table names every flag of kubelet-ts --help", () => {
  const help = spawnSync(process.execPath, [join(ROOT, 'dist', 'src', 'cmd', 'cli.js'), '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, KUBELET_TS_RELAUNCHED: '1' },
  });
  assert.equal(help.status, 0, help.stderr);
  const section = help.stdout.slice(help.stdout.indexOf('Flags ('));
  const flags = [...section.slice(0, section.indexOf('\n\n')).matchAll(/^ {2}--([a-z0-9-]+)/gm)].map((m) => m[1]!);
  assert.ok(flags.length > 50, `parsed only ${flags.length} flags from --help`);
  const doc = readFileSync(join(DOCS, 'operating.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Flags'), doc.indexOf('\n## ', doc.indexOf('## Flags') + 1));
  const missing = flags.filter((f) => !table.includes(`\`--${f}\``) && !(f === 'v' && table.includes('`--v`')));
  assert.deepEqual(missing, [], 'flags --help lists that docs/operating.md does not describe');
});

test('every KTS_ERR_ code the docs name is a code of ERROR_CODES', () => {
  const unknown: string[] = [];
  for (const file of markdownFiles()) {
    for (const m of readFileSync(file, 'utf8').matchAll(/KTS_ERR_[A-Z_]+/g)) {
      if (!(m[0] in ERROR_CODES) && !m[0].endsWith('_')) unknown.push(`${relative(ROOT, file)}: ${m[0]}`);
    }
  }
  assert.deepEqual(unknown, []);
});

test('slug follows GitHub: punctuation dropped, each space a hyphen', () => {
  assert.equal(slug('Exit → event on each runtime'), 'exit--event-on-each-runtime');
  assert.equal(
    slug("Under 80 MiB: the node binary's pages (issue 18, 2026-11-25)"),
    'under-80-mib-the-node-binarys-pages-issue-18-2026-11-25',
  );
  assert.equal(slug('Options (`RuntimeManagerDeps`)'), 'options-runtimemanagerdeps');
});
