/**
 * One position looked up in a v3 source map, decoded from its `mappings` text on demand. The
 * logger needs the .ts line of each call site once; node:module's SourceMap parses every
 * mapping of the file into arrays up front (435 KiB of heap for kubelet.js's 28 KB of
 * mappings), and a pod delete brings call sites the start never logged from, so those maps were
 * parsed and held right in the delete's memory peak (issue 30). Here only the text is kept.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64.length; i++) DIGIT[BASE64.charCodeAt(i)] = i;

const SEMICOLON = 59;
const COMMA = 44;

/** A source map reduced to what a lookup needs. */
export interface SourceMapText {
  mappings: string;
  sources: string[];
}

/** The original position of a generated one (0-based lines and columns, as the map's). */
export interface OriginalPosition {
  source: string;
  line: number;
  column: number;
}

/** The map's fields, or an error naming what is wrong with it. */
export function sourceMapText(payload: unknown): SourceMapText {
  const p = payload as { mappings?: unknown; sources?: unknown; sourceRoot?: unknown } | null;
  if (typeof p?.mappings !== 'string' || !Array.isArray(p.sources))
    throw new Error('not a source map: mappings (a string) and sources (an array) are required');
  const root = typeof p.sourceRoot === 'string' && p.sourceRoot !== '' ? p.sourceRoot.replace(/\/?$/, '/') : '';
  return { mappings: p.mappings, sources: p.sources.map((s) => root + String(s)) };
}

/**
 * The segment node:module's SourceMap.findEntry(line, column) returns: the last one at or before
 * (line, column) in generated order, on this line or an earlier one. Undefined when there is
 * none, when it maps to no source (a one-field segment), or when the text is malformed.
 */
export function findOriginal(map: SourceMapText, line: number, column: number): OriginalPosition | undefined {
  const m = map.mappings;
  // The fields of the segment read last: generated column, source index, original line and column.
  let col = 0;
  let src = 0;
  let origLine = 0;
  let origCol = 0;
  let genLine = 0;
  // The best segment so far (foundSrc -1: none yet, or one without a source).
  let foundSrc = -1;
  let foundLine = 0;
  let foundCol = 0;
  let i = 0;
  while (i < m.length && genLine <= line) {
    const c = m.charCodeAt(i);
    if (c === SEMICOLON || c === COMMA) {
      if (c === SEMICOLON) {
        genLine++;
        col = 0;
      }
      i++;
      continue;
    }
    // One segment: 1, 4 or 5 VLQ fields, each relative to the previous segment's (the fifth, a
    // name index, is read and not used).
    let n = 0;
    while (i < m.length && m.charCodeAt(i) !== COMMA && m.charCodeAt(i) !== SEMICOLON) {
      i = readVlq(m, i);
      if (i < 0 || n === 5) return undefined;
      if (n === 0) col += vlq;
      else if (n === 1) src += vlq;
      else if (n === 2) origLine += vlq;
      else if (n === 3) origCol += vlq;
      n++;
    }
    if (n !== 1 && n !== 4 && n !== 5) return undefined;
    if (genLine === line && col > column) break;
    foundSrc = n === 1 ? -1 : src;
    foundLine = origLine;
    foundCol = origCol;
  }
  const source = foundSrc < 0 ? undefined : map.sources[foundSrc];
  return source === undefined ? undefined : { source, line: foundLine, column: foundCol };
}

/** The number readVlq read last (a module variable: a lookup reads thousands, none allocated). */
let vlq = 0;

/** Reads one base64 VLQ number starting at i into `vlq`; returns where the next starts, or -1. */
function readVlq(m: string, start: number): number {
  let result = 0;
  let shift = 0;
  for (let i = start; i < m.length; i++) {
    const code = m.charCodeAt(i);
    const digit = code < 128 ? DIGIT[code]! : -1;
    if (digit < 0 || shift > 25) return -1; // 30 bits at most: no map is that large
    result |= (digit & 31) << shift;
    shift += 5;
    if ((digit & 32) === 0) {
      vlq = result & 1 ? -(result >>> 1) : result >>> 1;
      return i + 1;
    }
  }
  return -1;
}
