/**
 * D-Bus type signatures parsed into a small tree, with the specification's bounds
 * (https://dbus.freedesktop.org/doc/dbus-specification.html, "Type System" and "Valid
 * Signatures"): at most 255 bytes, at most 32 nested arrays and 32 nested structs in one
 * signature, a dict entry only as an array's element with a basic key, no empty struct.
 */
import { DBusProtocolError } from './errors.js';

/** The basic (fixed-size or string-like) type codes, and what is a valid dict key. */
export type BasicCode = 'y' | 'b' | 'n' | 'q' | 'i' | 'u' | 'x' | 't' | 'd' | 'h' | 's' | 'o' | 'g';

/** One complete type. */
export type DBusType =
  | { code: BasicCode }
  | { code: 'v' }
  | { code: 'a'; elem: DBusType }
  | { code: '('; fields: DBusType[] }
  | { code: '{'; key: DBusType; value: DBusType };

const BASIC = new Set<string>(['y', 'b', 'n', 'q', 'i', 'u', 'x', 't', 'd', 'h', 's', 'o', 'g']);
export const MAX_SIGNATURE_LENGTH = 255;
const MAX_ARRAY_DEPTH = 32;
const MAX_STRUCT_DEPTH = 32;

/** Parses a signature (zero or more complete types) or throws DBusProtocolError naming what is wrong. */
export function parseSignature(sig: string): DBusType[] {
  if (sig.length > MAX_SIGNATURE_LENGTH)
    throw new DBusProtocolError(`signature longer than ${MAX_SIGNATURE_LENGTH} bytes (${sig.length})`);
  const parser = new SignatureParser(sig);
  const types: DBusType[] = [];
  while (parser.pos < sig.length) types.push(parser.one(0, 0));
  return types;
}

/** Parses a signature that must be exactly one complete type (a variant's). */
export function parseSingleType(sig: string): DBusType {
  const types = parseSignature(sig);
  if (types.length !== 1)
    throw new DBusProtocolError(`variant signature ${JSON.stringify(sig)} is not exactly one complete type`);
  return types[0]!;
}

/** The signature text of a type (the inverse of parsing). */
export function typeSignature(t: DBusType): string {
  switch (t.code) {
    case 'a':
      return `a${typeSignature(t.elem)}`;
    case '(':
      return `(${t.fields.map(typeSignature).join('')})`;
    case '{':
      return `{${typeSignature(t.key)}${typeSignature(t.value)}}`;
    default:
      return t.code;
  }
}

class SignatureParser {
  pos = 0;
  constructor(private readonly sig: string) {}

  one(arrays: number, structs: number): DBusType {
    const c = this.sig[this.pos++];
    if (c === undefined) return this.fail('ends inside a container');
    if (BASIC.has(c)) return { code: c as BasicCode };
    if (c === 'v') return { code: 'v' };
    if (c === 'a') return this.array(arrays + 1, structs);
    if (c === '(') return this.struct(arrays, structs + 1);
    return this.fail(c === '{' ? 'has a dict entry outside an array' : `has an unknown type code ${JSON.stringify(c)}`);
  }

  private array(arrays: number, structs: number): DBusType {
    if (arrays > MAX_ARRAY_DEPTH) this.fail(`nests more than ${MAX_ARRAY_DEPTH} arrays`);
    if (this.sig[this.pos] !== '{') return { code: 'a', elem: this.one(arrays, structs) };
    this.pos++;
    const key = this.one(arrays, structs);
    if (!BASIC.has(key.code)) this.fail('has a dict entry whose key is not a basic type');
    const value = this.one(arrays, structs);
    if (this.sig[this.pos++] !== '}') this.fail('has a dict entry that is not exactly a key and a value');
    return { code: 'a', elem: { code: '{', key, value } };
  }

  private struct(arrays: number, structs: number): DBusType {
    if (structs > MAX_STRUCT_DEPTH) this.fail(`nests more than ${MAX_STRUCT_DEPTH} structs`);
    const fields: DBusType[] = [];
    while (this.sig[this.pos] !== ')') {
      if (this.pos >= this.sig.length) this.fail('has an unclosed struct');
      fields.push(this.one(arrays, structs));
    }
    this.pos++;
    if (fields.length === 0) this.fail('has an empty struct');
    return { code: '(', fields };
  }

  private fail(problem: string): never {
    throw new DBusProtocolError(`signature ${JSON.stringify(this.sig)} ${problem}`);
  }
}

/** Alignment of each type's start on the wire ("Marshaling (Wire Format)", the alignment table). */
export function alignmentOf(t: DBusType): number {
  switch (t.code) {
    case 'y':
    case 'g':
    case 'v':
      return 1;
    case 'n':
    case 'q':
      return 2;
    case 'x':
    case 't':
    case 'd':
    case '(':
    case '{':
      return 8;
    default:
      return 4; // b i u h s o a
  }
}
