#!/usr/bin/env node
// Reads the relative imports of src/ and fails (exit 1, one line a problem) on
//   1. an import loop between files                      import loop: a.ts -> b.ts -> a.ts
//   2. an import loop between folders                    folder loop: x -> y -> x (x/a.ts -> y/b.ts, y/c.ts -> x/d.ts)
//   3. a folder importing a folder in a higher layer     x/a.ts imports y/b.ts: folder x (layer 1) may not import folder y (layer 2)
//   4. a folder that scripts/layers.json does not name, and a relative import that names no file.
// A folder is the first path segment under src/; the files directly in src/ are the folder "(root)".
// The layering (bottom to top) is declared only in scripts/layers.json: a folder may import
// folders of its own layer and of lower ones.
//
//   node scripts/check-imports.mjs [--src DIR] [--layers FILE]
//
// Every kind of import counts: `import … from`, `export … from`, `import type`, `import '…'`,
// `import('…')` (also in type positions), `import x = require('…')`, over any number of lines;
// comments are skipped.
// Only relative specifiers count: `./x.js` is x.ts, `./dir/index.js` is dir/index.ts.
// Exit 0: no problems; 1: problems; 2: bad arguments or a bad layers file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT_FOLDER = '(root)';
const SOURCE = /\.(ts|tsx|mts|cts)$/;

function usage(message) {
  if (message) console.error(`check-imports: ${message}`);
  console.error('usage: node scripts/check-imports.mjs [--src DIR] [--layers FILE]');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {
    src: join(REPO, 'src'),
    layers: join(REPO, 'scripts', 'layers.json'),
    layersName: 'scripts/layers.json',
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (flag === '--help' || flag === '-h') usage();
    if (flag !== '--src' && flag !== '--layers') usage(`unknown argument ${argv[i]}`);
    const value = inline ?? argv[++i];
    if (!value) usage(`${flag} needs a value`);
    if (flag === '--src') opts.src = resolve(value);
    else {
      opts.layers = resolve(value);
      opts.layersName = value;
    }
  }
  return opts;
}

// --- the layering ----------------------------------------------------------------------------

/** layers.json: {"layers": [{"name": "…", "folders": ["…"]}, …]} (a layer may also be a bare array). */
function readLayers(file, name) {
  const bad = (why) => {
    console.error(`check-imports: ${name}: ${why}`);
    process.exit(2);
  };
  let doc;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    bad(err.code === 'ENOENT' ? 'no such file' : err.message);
  }
  const layers = Array.isArray(doc) ? doc : doc?.layers;
  if (!Array.isArray(layers) || layers.length === 0) bad('expected {"layers": [...]}, bottom layer first');
  const layerOf = new Map();
  layers.forEach((layer, n) => {
    const folders = Array.isArray(layer) ? layer : layer?.folders;
    if (!Array.isArray(folders)) bad(`layer ${n}: expected an array of folder names or {"name": …, "folders": [...]}`);
    for (const folder of folders) {
      if (typeof folder !== 'string' || folder === '' || /[\\/]/.test(folder))
        bad(`layer ${n}: ${JSON.stringify(folder)} is not a folder name`);
      if (layerOf.has(folder)) bad(`folder ${folder} is in layer ${layerOf.get(folder)} and in layer ${n}`);
      layerOf.set(folder, n);
    }
  });
  return { count: layers.length, layerOf };
}

// --- reading imports -------------------------------------------------------------------------

const REGEX_AFTER = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/**
 * The tokens of a TypeScript file that matter for finding imports: names, string literals
 * (value and line) and punctuation. Comments go; template literals, regular expressions and
 * numbers are single opaque tokens, so quotes or slashes inside them mislead nothing.
 */
function tokenize(text) {
  const out = [];
  const braces = []; // per open '{': true when it is a template's `${`
  let i = 0;
  let line = 1;
  const push = (kind, value) => out.push({ kind, value, line });
  const regexMayStart = () => {
    const prev = out[out.length - 1];
    if (!prev) return true;
    if (prev.kind === 'punct') return !')]}'.includes(prev.value);
    return prev.kind === 'name' && REGEX_AFTER.has(prev.value);
  };
  const template = (from) => {
    // from: just after ` or after the } closing a ${…}
    let j = from;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === '\\') j++;
      else if (c === '\n') line++;
      else if (c === '`') {
        push('template', '');
        return j + 1;
      } else if (c === '$' && text[j + 1] === '{') {
        braces.push(true);
        push('punct', '${');
        return j + 2;
      }
    }
    return j;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (let j = i; j < stop; j++) if (text[j] === '\n') line++;
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c && text[j] !== '\n') {
        if (text[j] === '\\') {
          value += text[j + 1] ?? '';
          j += 2;
        } else value += text[j++];
      }
      push('string', value);
      i = j + 1;
      continue;
    }
    if (c === '`') {
      i = template(i + 1);
      continue;
    }
    if (c === '{') {
      braces.push(false);
      push('punct', c);
      i++;
      continue;
    }
    if (c === '}') {
      if (braces.pop()) i = template(i + 1);
      else {
        push('punct', c);
        i++;
      }
      continue;
    }
    if (c === '/' && regexMayStart()) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '\\') j++;
        else if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j++;
      }
      if (text[j] === '/') {
        j++;
        while (/[a-z]/i.test(text[j] ?? '')) j++;
        push('regex', '');
        i = j;
        continue;
      }
    }
    const word = /^(?:[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*|\d[\w.]*)/u.exec(text.slice(i, i + 256));
    if (word) {
      push(/\d/.test(c) ? 'number' : 'name', word[0]);
      i += word[0].length;
      continue;
    }
    push('punct', c);
    i++;
  }
  return out;
}

const isPunct = (t, value) => t?.kind === 'punct' && t.value === value;
const isName = (t, value) => t?.kind === 'name' && t.value === value;

/** The specifiers a file imports, re-exports or loads: [{spec, line}]. */
function importsOf(text) {
  const toks = tokenize(text);
  const found = [];
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (!isName(t, 'import') && !isName(t, 'export')) continue;
    if (isPunct(toks[k - 1], '.')) continue; // x.import
    if (t.value === 'import' && toks[k + 1]?.kind === 'string') {
      found.push(toks[k + 1]);
      continue;
    } // import './x.js'
    if (t.value === 'import' && isPunct(toks[k + 1], '(')) {
      // import('./x.js'), typeof import('./x.js')
      if (toks[k + 2]?.kind === 'string') found.push(toks[k + 2]);
      continue;
    }
    // import [type] a, { b, c as d } from '…'; export [type] * [as ns] | { … } from '…'
    for (let j = k + 1; j < toks.length; j++) {
      const u = toks[j];
      if (isName(u, 'from') && toks[j + 1]?.kind === 'string') {
        found.push(toks[j + 1]);
        break;
      }
      if (
        isPunct(u, '=') &&
        isName(toks[j + 1], 'require') &&
        isPunct(toks[j + 2], '(') &&
        toks[j + 3]?.kind === 'string'
      ) {
        found.push(toks[j + 3]);
        break;
      } // import x = require('…')
      if (u.kind === 'name' && u.value !== 'import' && u.value !== 'export') continue;
      if (u.kind === 'punct' && '{},*'.includes(u.value)) continue;
      break;
    }
  }
  return found.map((t) => ({ spec: t.value, line: t.line }));
}

// --- the graph -------------------------------------------------------------------------------

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(entry.name)) out.push(path);
  }
  return out;
}

/** The file a relative specifier names: a src file (relative path), 'outside' or 'missing'. */
function resolveSpec(srcDir, fromFile, spec, known) {
  const base = resolve(dirname(fromFile), spec);
  const rel = relative(srcDir, base);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return 'outside';
  const stem = base.replace(/\.[mc]?js$/, '');
  const candidates =
    stem !== base
      ? [`${stem}${base.slice(stem.length).replace('js', 'ts')}`, `${stem}.tsx`, base]
      : [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')];
  const hit = candidates.find((c) => known.has(c));
  if (hit) return hit;
  return existsSync(base) && !SOURCE.test(base) ? 'outside' : 'missing'; // a .json or .proto is no module of ours
}

const folderOf = (relPath) => (relPath.includes('/') ? relPath.slice(0, relPath.indexOf('/')) : ROOT_FOLDER);

/** Strongly connected components (Tarjan), each a sorted array of nodes. */
function components(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** The shortest loop through v inside `within`: [v, …, v], or undefined. */
function shortestLoop(graph, v, within) {
  const parent = new Map([[v, null]]);
  const queue = [v];
  while (queue.length) {
    const x = queue.shift();
    for (const w of [...graph.get(x)].sort()) {
      if (w === v) {
        const loop = [v];
        for (let y = x; y !== null; y = parent.get(y)) loop.unshift(y);
        return loop;
      }
      if (within.has(w) && !parent.has(w)) {
        parent.set(w, x);
        queue.push(w);
      }
    }
  }
  return undefined;
}

/**
 * Loops of a graph (Map node → Set of nodes), each [a, b, …, a] and starting at its least
 * node: every pair that imports each other, then for every other node on a loop the shortest
 * loop through it, unless a loop already reported passes through it. So a tangle is told as
 * loops that can each be read and broken, not as every loop it holds; breaking them may reveal
 * more, which the next run reports.
 */
function loops(graph) {
  const out = [];
  for (const scc of components(graph)) {
    const within = new Set(scc);
    const named = new Set();
    for (const a of scc) {
      for (const b of [...graph.get(a)].sort()) {
        if (a < b && within.has(b) && graph.get(b).has(a)) {
          out.push([a, b, a]);
          named.add(a).add(b);
        }
      }
    }
    for (const v of scc) {
      if (named.has(v)) continue;
      const loop = shortestLoop(graph, v, within);
      if (!loop) continue;
      const ring = loop.slice(1);
      const start = ring.indexOf([...ring].sort()[0]);
      out.push([...ring.slice(start), ...ring.slice(0, start), ring[start]]);
      for (const x of ring) named.add(x);
    }
  }
  return out;
}

// --- the check -------------------------------------------------------------------------------

function check(opts) {
  const { count: layerCount, layerOf } = readLayers(opts.layers, opts.layersName);
  if (!existsSync(opts.src)) usage(`no such folder: ${opts.src}`);
  const files = sourceFiles(opts.src);
  const known = new Set(files);
  const rel = (f) => relative(opts.src, f).split(sep).join('/');
  const problems = { fileLoops: [], folderLoops: [], upward: [], undeclared: [], missing: [] };

  const fileGraph = new Map(files.map((f) => [rel(f), new Set()]));
  const folderGraph = new Map(files.map((f) => [folderOf(rel(f)), new Set()]));
  const folderEdge = new Map(); // "a\0b" → [importer, target], the first in file order
  for (const file of files) {
    const from = rel(file);
    for (const { spec, line } of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('./') && !spec.startsWith('../') && spec !== '.' && spec !== '..') continue;
      const target = resolveSpec(opts.src, file, spec, known);
      if (target === 'outside') continue;
      if (target === 'missing') {
        problems.missing.push(`${from}:${line} imports '${spec}', which names no file`);
        continue;
      }
      const to = rel(target);
      if (fileGraph.get(from).has(to)) continue;
      fileGraph.get(from).add(to);
      const [fa, fb] = [folderOf(from), folderOf(to)];
      if (fa === fb) continue;
      folderGraph.get(fa).add(fb);
      if (!folderEdge.has(`${fa}\0${fb}`)) folderEdge.set(`${fa}\0${fb}`, [from, to]);
      const [la, lb] = [layerOf.get(fa), layerOf.get(fb)];
      if (la !== undefined && lb !== undefined && lb > la) {
        problems.upward.push(
          `${from} imports ${to}: folder ${fa} (layer ${la}) may not import folder ${fb} (layer ${lb})`,
        );
      }
    }
  }

  for (const cycle of loops(fileGraph)) problems.fileLoops.push(`import loop: ${cycle.join(' -> ')}`);
  for (const cycle of loops(folderGraph)) {
    const via = cycle.slice(1).map((b, i) => folderEdge.get(`${cycle[i]}\0${b}`).join(' -> '));
    problems.folderLoops.push(`folder loop: ${cycle.join(' -> ')} (${via.join(', ')})`);
  }
  for (const folder of [...folderGraph.keys()].sort()) {
    if (layerOf.has(folder)) continue;
    const own = files.map(rel).filter((f) => folderOf(f) === folder);
    const where = folder === ROOT_FOLDER ? 'the files directly in src/' : `${folder}/`;
    problems.undeclared.push(
      `folder ${folder} (${where}, ${own.length} file${own.length === 1 ? '' : 's'}, e.g. ${own[0]}) is in no layer: declare it in ${opts.layersName}`,
    );
  }

  const all = Object.values(problems).flat();
  for (const line of all) console.log(line);
  if (all.length) return 1;
  console.log(
    `imports: ${files.length} files, ${folderGraph.size} folders in ${layerCount} layers, no loops, no upward imports`,
  );
  return 0;
}

process.exit(check(parseArgs(process.argv.slice(2))));
