#!/usr/bin/env node
// Renders the generated parts of docs/ from the code that defines them, so the references cannot
// drift from it:
//   docs/configuration.md  the KubeletConfiguration field table  ← FIELDS of src/config/schema.ts
//   docs/errors.md         the error-code table                  ← ERROR_CODES of src/errors.ts
//   docs/architecture.md   the layer table                       ← scripts/layers.json
//   docs/differences.md    the pod fields refused at admission   ← POD_FIELD_RULES of src/kubelet/pod-fields.ts
// Each generated part sits between `<!-- generated:NAME -->` and `<!-- /generated -->`; the
// hand-written text around it is kept as it is.
//
//   npm run build && node scripts/gen-docs.mjs           rewrite the generated parts
//   node scripts/gen-docs.mjs --check                    exit 1 naming each stale file (the suite
//                                                        runs this: test/docs/docs.test.ts)
//
// It reads the compiled dist/src/ (npm run build), as the suite does. Exit 0: up to date or
// rewritten; 1: stale (--check) or a marker missing; 2: bad arguments or no build.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REGENERATE = 'npm run build && node scripts/gen-docs.mjs';

function fail(status, message) {
  console.error(`gen-docs: ${message}`);
  process.exit(status);
}

async function importBuilt(path) {
  const file = join(REPO, 'dist', path);
  if (!existsSync(file)) fail(2, `${join('dist', path)} is missing: run npm run build first`);
  return import(pathToFileURL(file).href);
}

/** A table cell: pipes escaped, `<` escaped so `<root-dir>` is not read as an HTML tag. */
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/</g, '\\<');

/** A default as YAML would spell it; `fooMs` numbers inside objects become Go durations `foo`. */
function renderValue(value, kind, formatDuration) {
  if (kind === 'duration') return formatDuration(value);
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (Array.isArray(value))
    return value.length === 0 ? '[]' : `[${value.map((v) => renderValue(v, '', formatDuration)).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) =>
      k.endsWith('Ms') && typeof v === 'number'
        ? `${k.slice(0, -2)}: ${formatDuration(v)}`
        : `${k}: ${renderValue(v, '', formatDuration)}`,
    );
    return entries.length === 0 ? '{}' : `{${entries.join(', ')}}`;
  }
  return String(value);
}

async function configFields() {
  const { FIELDS } = await importBuilt('src/config/schema.js');
  const { formatDuration } = await importBuilt('src/util/duration.js');
  const rows = FIELDS.map((f) => {
    const notes = [f.help];
    if (f.min !== undefined) notes.push(`Minimum ${f.kind === 'duration' ? formatDuration(f.min) : f.min}.`);
    if (f.zeroDefault) notes.push('A zero value in the file means the default.');
    const flag = f.flag ? `\`--${f.flag}\`` : '';
    return `| \`${f.name}\` | ${flag} | \`${cell(renderValue(f.default, f.kind, formatDuration))}\` | ${cell(notes.join(' '))} |`;
  });
  return ['| field | flag | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

async function errorCodes() {
  const { ERROR_CODES } = await importBuilt('src/errors.js');
  const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${cell(meaning)} |`);
  return ['| code | meaning |', '| --- | --- |', ...rows].join('\n');
}

async function layers() {
  const { layers: list } = JSON.parse(readFileSync(join(REPO, 'scripts', 'layers.json'), 'utf8'));
  const folder = (f) => (f === '(root)' ? '`src/*.ts`' : `\`src/${f}/\``);
  const rows = list.map((l, i) => `| ${i} | ${cell(l.name)} | ${l.folders.map(folder).join(', ')} |`);
  return ['| layer | what | folders |', '| --- | --- | --- |', ...rows].join('\n');
}

/** Upstream names not acted on, each with the one value accepted (upstream's default). */
async function unactedDefaults() {
  const { UNACTED_FIELDS, UNACTED_FLAGS, unactedFlagDefault } = await importBuilt('src/config/unacted-defaults.js');
  const flagsOf = new Map();
  for (const [flag, field] of Object.entries(UNACTED_FLAGS))
    if (typeof field === 'string') flagsOf.set(field, [...(flagsOf.get(field) ?? []), `\`--${flag}\``]);
  const row = (name, flags, d) => `| ${name} | ${flags} | \`${cell(d.shown)}\` | ${cell(d.why ?? '')} |`;
  const rows = [
    ...Object.entries(UNACTED_FIELDS).map(([n, d]) => row(`\`${n}\``, (flagsOf.get(n) ?? []).join(', '), d)),
    ...Object.keys(UNACTED_FLAGS)
      .filter((f) => typeof UNACTED_FLAGS[f] !== 'string')
      .map((f) => row('', `\`--${f}\``, unactedFlagDefault(f))),
  ];
  return ['| field | flag | accepted value (upstream default) | note |', '| --- | --- | --- | --- |', ...rows].join(
    '\n',
  );
}

async function refusedPodFields() {
  const { POD_FIELD_RULES } = await importBuilt('src/kubelet/pod-fields.js');
  const rows = POD_FIELD_RULES.filter((r) => r.class === 'refused').map(
    (r) => `| \`${cell(r.path)}\`${r.subtree ? ' (and below)' : ''} | ${cell(r.when ?? 'set')} | ${cell(r.why)} |`,
  );
  return ['| field | refused when | why |', '| --- | --- | --- |', ...rows].join('\n');
}

const TARGETS = [
  { file: 'docs/configuration.md', name: 'config-fields', render: configFields },
  { file: 'docs/configuration.md', name: 'unacted-defaults', render: unactedDefaults },
  { file: 'docs/errors.md', name: 'error-codes', render: errorCodes },
  { file: 'docs/architecture.md', name: 'layers', render: layers },
  { file: 'docs/differences.md', name: 'refused-pod-fields', render: refusedPodFields },
];

/** `text` with the part between NAME's markers replaced by `body`; undefined when a marker is missing. */
function splice(text, name, body) {
  const open = `<!-- generated:${name} -->`;
  const close = '<!-- /generated -->';
  const start = text.indexOf(open);
  const end = start < 0 ? -1 : text.indexOf(close, start);
  if (end < 0) return undefined;
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

async function main(argv) {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length > 0) fail(2, `unknown argument ${unknown[0]} (usage: node scripts/gen-docs.mjs [--check])`);
  const problems = [];
  for (const t of TARGETS) {
    const path = join(REPO, t.file);
    const text = readFileSync(path, 'utf8');
    const next = splice(text, t.name, await t.render());
    if (next === undefined) {
      problems.push(`${t.file}: no <!-- generated:${t.name} --> ... <!-- /generated --> markers`);
    } else if (next !== text) {
      if (check)
        problems.push(`${t.file} is stale (its ${t.name} table no longer matches the code): run ${REGENERATE}`);
      else writeFileSync(path, next);
    }
  }
  for (const p of problems) console.error(`gen-docs: ${p}`);
  process.exit(problems.length > 0 ? 1 : 0);
}

await main(process.argv.slice(2));
