/**
 * The one guard every path built from outside data goes through: a value that is to become one
 * path component must be exactly one. `join(root, '../../etc')` is a different directory, so
 * checking the result afterwards is too late; the component is refused before the join.
 */
import { join } from 'node:path';
import { UnsafePathError } from '../errors.js';

// '/' and NUL are what the kernel treats specially; '\' and control characters are refused too,
// since nothing legitimate has them and they confuse logs and other tools reading the names.
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const UNSAFE_CHARS = /[/\\\u0000-\u001f\u007f]/;

/** True when `value` is one safe path component: not empty, '.' or '..', no unsafe character. */
export function isPathComponent(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value !== '.' && value !== '..' && !UNSAFE_CHARS.test(value);
}

/** `value` when it is one safe path component; otherwise UnsafePathError naming `what`. */
export function pathComponent(value: unknown, what: string): string {
  if (!isPathComponent(value)) throw new UnsafePathError(what, String(value));
  return value;
}

/** `base` joined with components, each checked with pathComponent (named by its `what`). */
export function joinComponents(base: string, ...parts: Array<[value: string, what: string]>): string {
  return join(base, ...parts.map(([v, what]) => pathComponent(v, what)));
}
