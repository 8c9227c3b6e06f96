/**
 * Upstream names kubelet-ts does not act on: accepted so upstream files and command lines load,
 * their values checked loosely (a duration must parse, a bool must be a bool), then refused unless
 * they hold upstream's default (unacted-defaults.ts), and reported once at start-up. Names
 * upstream does not have stay errors, so a typo still fails.
 */
import { parseDuration } from '../util/duration.js';
import { UPSTREAM_FIELDS, UPSTREAM_FLAGS, UPSTREAM_NESTED, type FlagKind, type LooseKind } from './upstream-names.js';
import { unactedDefaultProblem, unactedFlagProblem } from './unacted-defaults.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const WHAT: Readonly<Record<LooseKind, string>> = {
  duration: 'a duration such as "10s"',
  bool: 'true or false',
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  stringList: 'a list of strings',
  intList: 'a list of integers',
  stringMap: 'a map of strings',
  boolMap: 'a map of name to true/false',
  object: 'an object',
  objectList: 'a list of objects',
};

function fits(kind: LooseKind, v: unknown): boolean {
  switch (kind) {
    case 'duration':
      return typeof v === 'string' && parseDuration(v) !== undefined;
    case 'bool':
      return typeof v === 'boolean';
    case 'int':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'stringList':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'intList':
      return Array.isArray(v) && v.every((x) => Number.isInteger(x));
    case 'stringMap':
      return isObject(v) && Object.values(v).every((x) => typeof x === 'string' || typeof x === 'number');
    case 'boolMap':
      return isObject(v) && Object.values(v).every((x) => typeof x === 'boolean');
    case 'object':
      return isObject(v);
    case 'objectList':
      return Array.isArray(v) && v.every(isObject);
  }
}

/** A problem with one value of `kind`, or undefined when it fits. */
function looseProblem(kind: LooseKind, v: unknown, where: string): string | undefined {
  return fits(kind, v) ? undefined : `${where}: must be ${WHAT[kind]} (got ${JSON.stringify(v)})`;
}

/** The members of a nested object we know (memorySwap, crashLoopBackOff, userNamespaces). */
function nestedProblems(name: string, v: Record<string, unknown>, where: string): string[] {
  const members = UPSTREAM_NESTED[name];
  if (!members) return [];
  return Object.entries(v).flatMap(([k, x]) => {
    const kind = members[k];
    if (!kind) return [`${where}: unknown field "${k}"`];
    const p = looseProblem(kind, x, `${where}.${k}`);
    return p ? [p] : [];
  });
}

/**
 * The file's fields that upstream has and `actedOn` does not: checked loosely; returns their
 * names. A field upstream does not have is a problem naming it.
 */
export function acceptFileFields(
  file: Record<string, unknown>,
  actedOn: ReadonlySet<string>,
  path: string,
  problems: string[],
): string[] {
  const accepted: string[] = [];
  for (const [name, value] of Object.entries(file)) {
    if (name === 'apiVersion' || name === 'kind' || actedOn.has(name)) continue;
    const kind = UPSTREAM_FIELDS[name];
    if (!kind) {
      problems.push(`${path}: unknown field "${name}"`);
      continue;
    }
    const where = `config field ${name}`;
    const p = looseProblem(kind, value, where);
    const nested = p ? [] : isObject(value) ? nestedProblems(name, value, where) : [];
    const notDefault = p || nested.length > 0 ? undefined : unactedDefaultProblem(name, value);
    problems.push(...(p ? [p] : []), ...nested, ...(notDefault ? [notDefault] : []));
    accepted.push(name);
  }
  return accepted;
}

/** Upstream flags kubelet-ts does not act on (their kind), for parseArgv and --help. */
export function unusedUpstreamFlags(actedOn: ReadonlySet<string>): Map<string, FlagKind> {
  return new Map(Object.entries(UPSTREAM_FLAGS).filter(([name]) => !actedOn.has(name)));
}

/** A problem when a flag's raw value is not of its kind. */
function flagKindProblem(name: string, kind: FlagKind, raw: string): string | undefined {
  if (kind === 'bool' && raw !== 'true' && raw !== 'false') return `--${name}: must be true or false (got "${raw}")`;
  if (kind === 'int' && !/^-?\d+$/.test(raw)) return `--${name}: must be an integer (got "${raw}")`;
  if (kind === 'duration' && parseDuration(raw) === undefined)
    return `--${name}: must be a duration such as "10s" (got "${raw}")`;
  return undefined;
}

/**
 * Checks the raw values of the accepted flags that were given (their kind, then upstream's
 * default); returns their names as --name.
 */
export function acceptFlags(
  values: ReadonlyMap<string, string>,
  unused: ReadonlyMap<string, FlagKind>,
  problems: string[],
): string[] {
  const accepted: string[] = [];
  for (const [name, raw] of values) {
    const kind = unused.get(name);
    if (!kind) continue;
    const p = flagKindProblem(name, kind, raw) ?? unactedFlagProblem(name, raw);
    if (p) problems.push(p);
    accepted.push(`--${name}`);
  }
  return accepted;
}

/** The --help section naming what is accepted but not acted on, wrapped to short lines. */
export function acceptedHelpSection(actedOnFields: ReadonlySet<string>, actedOnFlags: ReadonlySet<string>): string[] {
  const fields = Object.keys(UPSTREAM_FIELDS)
    .filter((n) => !actedOnFields.has(n))
    .sort();
  const flags = [...unusedUpstreamFlags(actedOnFlags).keys()].sort().map((n) => `--${n}`);
  return [
    '',
    "Accepted, not acted on (upstream names: only upstream's default is accepted, then ignored; listed at start-up when set):",
    ...wrap('  config: ', fields),
    ...wrap('  flags:  ', flags),
  ];
}

function wrap(head: string, names: readonly string[], width = 100): string[] {
  const lines: string[] = [];
  let line = head;
  for (const n of names) {
    const piece = line === head ? n : `, ${n}`;
    if (line.length + piece.length > width && line !== head) {
      lines.push(`${line},`);
      line = ' '.repeat(head.length) + n;
    } else line += piece;
  }
  lines.push(line);
  return lines;
}
