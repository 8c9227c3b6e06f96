import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { testTempDir } from '../support/temp-dir.js';

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'check-imports.mjs');
const LAYERS = {
  layers: [
    { name: 'ground', folders: ['(root)', 'util'] },
    { name: 'middle', folders: ['a', 'b'] },
    { name: 'top', folders: ['app'] },
  ],
};
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the check on a src tree made of `files` (path under src/ → text). */
function check(files: Record<string, string>, layers: unknown = LAYERS): { status: number | null; lines: string[] } {
  const dir = testTempDir('kts-imports-');
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), text);
  }
  writeFileSync(join(dir, 'layers.json'), JSON.stringify(layers));
  const run = spawnSync(process.execPath, [SCRIPT, '--src', join(dir, 'src'), '--layers', join(dir, 'layers.json')], {
    encoding: 'utf8',
  });
  return { status: run.status, lines: `${run.stdout}${run.stderr}`.split('\n').filter(Boolean) };
}

/** A tree whose only problem is a loop a/x.ts -> a/y.ts -> a/x.ts made by `xImportsY`. */
const loopVia = (xImportsY: string) =>
  check({
    'a/x.ts': `${xImportsY}\nexport type X = 1;\n`,
    'a/y.ts': "import type { X } from './x.js';\nexport type Y = X;\n",
  });
const LOOP = { status: 1, lines: ['import loop: a/x.ts -> a/y.ts -> a/x.ts'] };

describe('scripts/check-imports.mjs', () => {
  it('a clean tree passes with one summary line; packages, builtins, comments and strings are not imports', () => {
    const r = check({
      'errors.ts': "import { EventEmitter } from 'node:events';\nexport class E extends EventEmitter {}\n",
      'util/index.ts': "import { E } from '../errors.js';\nexport const u = new E();\n",
      'util/log.ts': "import pino from 'pino';\nexport const log = pino;\n",
      'a/x.ts': [
        "import { u } from '../util/index.js';",
        "import '../util/log.js';",
        "export * from '../util/log.js';",
        '// import { app } from "../app/main.js";',
        "/* export * from '../app/main.js'; */",
        'const s = "import \'../app/main.js\'";',
        "const t = `${s} import('../app/main.js') ${`${u}`}`;",
        'const re = /[\'"`]/g;',
        "export const lazy = () => import('../util/log.js');",
        'export { re, t };',
      ].join('\n'),
      'app/main.ts':
        "import { lazy } from '../a/x.js';\nexport type L = typeof import('../util/index.js');\nvoid lazy;\n",
    });
    assert.deepEqual(r, { status: 0, lines: ['imports: 5 files, 4 folders in 3 layers, no loops, no upward imports'] });
  });

  it('an import loop between files names the whole cycle', () => {
    const r = check({
      'a/x.ts': "import './y.js';\n",
      'a/y.ts': "import './z.js';\n",
      'a/z.ts': "import './x.js';\n",
      'a/w.ts': "import './x.js';\n",
    });
    assert.deepEqual(r, { status: 1, lines: ['import loop: a/x.ts -> a/y.ts -> a/z.ts -> a/x.ts'] });
  });

  it('a loop between folders of one layer names the folders and an import for each step', () => {
    const r = check({
      'a/x.ts': "import '../b/y.js';\n",
      'b/y.ts': '',
      'b/z.ts': "import '../a/w.js';\n",
      'a/w.ts': '',
    });
    assert.deepEqual(r, { status: 1, lines: ['folder loop: a -> b -> a (a/x.ts -> b/y.ts, b/z.ts -> a/w.ts)'] });
  });

  it('an import of a higher layer is reported once per importing file and target', () => {
    const r = check({
      'util/u.ts':
        "import { m } from '../app/main.js';\nimport type { M } from '../app/main.js';\nexport const u: M = m;\n",
      'version.ts': "export * from './a/x.js';\n",
      'a/x.ts': '',
      'app/main.ts': 'export const m = 1;\nexport type M = number;\n',
    });
    assert.deepEqual(r, {
      status: 1,
      lines: [
        'util/u.ts imports app/main.ts: folder util (layer 0) may not import folder app (layer 2)',
        'version.ts imports a/x.ts: folder (root) (layer 0) may not import folder a (layer 1)',
      ],
    });
  });

  it('a folder the layering does not name is an error', () => {
    const r = check({ 'extra/e.ts': "import '../util/u.js';\n", 'util/u.ts': '' });
    assert.equal(r.status, 1);
    assert.equal(r.lines.length, 1);
    assert.match(
      r.lines[0]!,
      /^folder extra \(extra\/, 1 file, e\.g\. extra\/e\.ts\) is in no layer: declare it in \S*layers\.json$/,
    );
  });

  it('a relative import that names no file is an error with its line', () => {
    assert.deepEqual(check({ 'a/x.ts': "// first\nimport { y } from './nope.js';\n" }), {
      status: 1,
      lines: ["a/x.ts:2 imports './nope.js', which names no file"],
    });
  });

  it('imports that span lines count', () => {
    assert.deepEqual(loopVia("import {\n  type Y,\n  // a comment\n  Y as Z,\n} from\n  './y.js';"), LOOP);
    assert.deepEqual(loopVia("export {\n  type Y,\n} from './y.js';"), LOOP);
  });

  it('type-only imports, re-exports, side effects and dynamic imports all make loops', () => {
    for (const statement of [
      "import type { Y } from './y.js';",
      "import type * as y from './y.js';",
      "export type { Y } from './y.js';",
      "export * as y from './y.js';",
      "import './y.js';",
      "const y = await import('./y.js');",
      "type Y = import('./y.js').Y;",
    ]) {
      assert.deepEqual(loopVia(statement), LOOP, statement);
    }
  });

  it('./dir/index.js resolves to dir/index.ts', () => {
    const r = check({ 'a/x.ts': "import './sub/index.js';\n", 'a/sub/index.ts': "import '../x.js';\n" });
    assert.deepEqual(r.lines, ['import loop: a/sub/index.ts -> a/x.ts -> a/sub/index.ts']);
  });

  it('a malformed layers file stops the check with exit 2', () => {
    const r = check({ 'a/x.ts': '' }, { layers: [['a'], ['a']] });
    assert.equal(r.status, 2);
    assert.match(r.lines[0]!, /folder a is in layer 0 and in layer 1/);
  });
});
