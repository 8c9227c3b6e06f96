/**
 * Pieces of Go's standard library the kubelet's on-disk formats depend on, reproduced bit for bit:
 * FNV-32a (hash/fnv), the way go-spew's `%#v` formatter prints a byte slice (what
 * hashutil.DeepHashObject writes into the hash), and encoding/json's string escaping. Used by the
 * container hash (kuberuntime/hash.ts) and the device manager's checkpoint checksum.
 */

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;
const SPACE = 0x20;
const DIGIT_0 = 0x30;

/** The FNV-32a state before any byte. */
export const FNV32A_INIT = FNV32_OFFSET;

export function fnv32aByte(h: number, byte: number): number {
  return Math.imul(h ^ byte, FNV32_PRIME) >>> 0;
}

/** Feeds `text` as UTF-8 (Go strings are bytes; ours are written as UTF-8). */
export function fnv32aText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return fnv32aBytes(h, Buffer.from(text.slice(i), 'utf8'));
    h = fnv32aByte(h, c);
  }
  return h;
}

export function fnv32aBytes(h: number, bytes: Uint8Array): number {
  for (const b of bytes) h = fnv32aByte(h, b);
  return h;
}

/** FNV-32a of a whole string. */
export function fnv32a(text: string): number {
  return fnv32aText(FNV32A_INIT, text);
}

/** Feeds go-spew's `%#v` of a non-nil []byte without its type: `[b0 b1 ...]`, decimals. */
export function fnv32aSpewBytes(h: number, bytes: Uint8Array): number {
  h = fnv32aByte(h, 0x5b); // [
  bytes.forEach((byte, i) => {
    if (i > 0) h = fnv32aByte(h, SPACE);
    h = feedDecimal(h, byte);
  });
  return fnv32aByte(h, 0x5d); // ]
}

function feedDecimal(h: number, n: number): number {
  if (n >= 100) h = fnv32aByte(h, DIGIT_0 + Math.floor(n / 100));
  if (n >= 10) h = fnv32aByte(h, DIGIT_0 + (Math.floor(n / 10) % 10));
  return fnv32aByte(h, DIGIT_0 + (n % 10));
}

/** go-spew's `%#v` text of a byte slice's elements: `[b0 b1 ...]` (nil is the caller's `<nil>`). */
export function spewBytes(bytes: Uint8Array): string {
  return `[${Array.from(bytes).join(' ')}]`;
}

/** The escapes of Go's encoding/json (HTML-safe, as json.Marshal is) for one string. */
export function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) out += GO_ESCAPES[ch] ?? (ch < ' ' ? unicodeEscape(ch) : ch);
  return `${out}"`;
}

const GO_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function unicodeEscape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
