// findOriginal (src/util/source-map-lookup.ts) against node:module's SourceMap.findEntry, which
// the logger used before: every map the build wrote, at every segment and around it; then the
// malformed maps the lookup must refuse without throwing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findOriginal, sourceMapText } from '../../src/util/source-map-lookup.js';

const DIST_SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

function mapFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? mapFiles(join(dir, e.name)) : e.name.endsWith('.js.map') ? [join(dir, e.name)] : [],
  );
}

/** Up to 30 lines spread over the map (and one past its end), at columns around typical segments. */
function probes(lines: number): Array<[number, number]> {
  const step = Math.max(1, Math.floor(lines / 30));
  const out: Array<[number, number]> = [];
  for (let line = 0; line <= lines; line += step) for (const col of [0, 4, 16, 200]) out.push([line, col]);
  return out;
}

describe('findOriginal: as node:module SourceMap.findEntry', () => {
  it('every map under dist/src, every line, columns around the segments', () => {
    const files = mapFiles(DIST_SRC);
    assert.ok(files.length > 50, `the build wrote ${files.length} maps`);
    let compared = 0;
    for (const file of files) {
      const payload = JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload;
      const node = new SourceMap(payload);
      const ours = sourceMapText(payload);
      const lines = payload.mappings.split(';').length;
      for (const [line, col] of probes(lines)) {
        const want = node.findEntry(line, col) as { originalSource?: string; originalLine?: number };
        const got = findOriginal(ours, line, col);
        const at = `${file}:${line}:${col}`;
        if (want.originalSource === undefined) assert.equal(got, undefined, at);
        else {
          assert.ok(got, at);
          assert.equal(got.line, want.originalLine, at);
          assert.ok(want.originalSource.endsWith(got.source.replace(/^(\.\.\/)+/, '')), at);
        }
        compared++;
      }
    }
    assert.ok(compared > 10_000, `${compared} positions compared`);
  });
});

describe('findOriginal: hand-made maps', () => {
  // "AAAA" = segment 0,0,0,0; "CAAC" = col +1, line 0 → col +1; "K" = col +5, no source; ";" = next line.
  const map = (mappings: string, extra: object = {}) =>
    sourceMapText({ version: 3, sources: ['a.ts'], mappings, ...extra });
  const cases: Array<[string, string, number, number, { source: string; line: number; column: number } | undefined]> = [
    ['the first segment', 'AAAA', 0, 0, { source: 'a.ts', line: 0, column: 0 }],
    ['past the last segment on its line', 'AAAA,CAAC', 0, 50, { source: 'a.ts', line: 0, column: 1 }],
    ['a later line without segments: the last one before', 'AAAA;;', 2, 3, { source: 'a.ts', line: 0, column: 0 }],
    ['before the first segment', 'EAAA', 0, 1, undefined],
    ['a one-field segment maps to no source', 'AAAA,K', 0, 9, undefined],
    ['lines add up across the map', 'AAAA;AACA;AACA', 2, 0, { source: 'a.ts', line: 2, column: 0 }],
    ['a negative delta', 'AAEA;AAFA', 1, 0, { source: 'a.ts', line: 0, column: 0 }],
    ['a multi-digit VLQ (line 16)', 'AAgBA', 0, 0, { source: 'a.ts', line: 16, column: 0 }],
    ['empty mappings', '', 0, 0, undefined],
    ['a character outside base64', 'AA!A', 0, 0, undefined],
    ['a two-field segment', 'AA', 0, 0, undefined],
    ['six fields', 'AAAAAA', 0, 0, undefined],
    ['a VLQ that never ends', 'AAAg', 0, 0, undefined],
    ['a source index past the sources', 'ACAA', 0, 0, undefined],
  ];
  for (const [name, mappings, line, col, want] of cases)
    it(name, () => assert.deepEqual(findOriginal(map(mappings), line, col), want));

  it('sourceRoot prefixes the sources', () => {
    assert.deepEqual(findOriginal(map('AAAA', { sourceRoot: 'src' }), 0, 0)?.source, 'src/a.ts');
  });

  it('a payload that is not a source map is refused, naming the fields', () => {
    for (const bad of [null, 7, {}, { mappings: 'AAAA' }, { mappings: 1, sources: [] }])
      assert.throws(() => sourceMapText(bad), /mappings \(a string\) and sources \(an array\)/);
  });
});
