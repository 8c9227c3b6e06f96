/**
 * Marshalling of values by their signature, little-endian (spec, "Marshaling (Wire Format)").
 * Every value is checked against its type first; a mismatch is a DBusProtocolError naming the
 * type and the value, so a wrong property never reaches the peer.
 */
import { DBusProtocolError } from './errors.js';
import { alignmentOf, parseSignature, parseSingleType, type DBusType } from './dbus-signature.js';
import { MAX_ARRAY_BYTES, MAX_CONTAINER_DEPTH, isObjectPath, isVariant, type DBusValue } from './dbus-values.js';

const INT_RANGES: Record<string, [number, number, number]> = {
  // code: [min, max, byte size]
  y: [0, 0xff, 1],
  n: [-0x8000, 0x7fff, 2],
  q: [0, 0xffff, 2],
  i: [-0x80000000, 0x7fffffff, 4],
  u: [0, 0xffffffff, 4],
  h: [0, 0xffffffff, 4],
};
const BIG_RANGES: Record<string, [bigint, bigint]> = { x: [-(2n ** 63n), 2n ** 63n - 1n], t: [0n, 2n ** 64n - 1n] };

/** A growing little-endian buffer; offsets (and so alignment) count from its first byte. */
export class WireWriter {
  private buf = Buffer.alloc(256);
  private pos = 0;

  get length(): number {
    return this.pos;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** Writes values of a whole signature (a message body, say). */
  writeAll(sig: string, values: DBusValue[]): void {
    const types = parseSignature(sig);
    if (types.length !== values.length)
      throw new DBusProtocolError(
        `signature ${JSON.stringify(sig)} has ${types.length} types but ${values.length} values were given`,
      );
    types.forEach((t, i) => this.write(t, values[i]!, 0));
  }

  write(t: DBusType, v: DBusValue, depth: number): void {
    switch (t.code) {
      case 'b':
        return this.bool(v);
      case 'x':
      case 't':
        return this.int64(t.code, v);
      case 'd':
        return this.double(t, v);
      case 's':
        return this.string(t, v);
      case 'o':
        return this.string(t, v);
      case 'g':
        return this.signature(v);
      case 'v':
        return this.variant(v, depth + 1);
      case 'a':
        return this.array(t.elem, v, depth + 1);
      case '(':
        return this.struct(t.fields, v, depth + 1);
      case '{':
        return this.struct([t.key, t.value], v, depth + 1);
      default:
        return this.int(t.code, v);
    }
  }

  pad(alignment: number): void {
    const n = (alignment - (this.pos % alignment)) % alignment;
    this.reserve(n).fill(0);
  }

  /** Patches a uint32 written earlier (an array's byte length). */
  patchUint32(at: number, value: number): void {
    this.buf.writeUInt32LE(value, at);
  }

  uint32(n: number): void {
    this.pad(4);
    this.reserve(4).writeUInt32LE(n, 0);
  }

  byte(n: number): void {
    this.reserve(1)[0] = n;
  }

  private bool(v: DBusValue): void {
    this.check({ code: 'b' }, typeof v === 'boolean', v);
    this.uint32(v ? 1 : 0);
  }

  private int(code: string, v: DBusValue): void {
    const [min, max, size] = INT_RANGES[code]!;
    this.check({ code }, typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max, v);
    this.pad(size);
    const n = v as number;
    const out = this.reserve(size);
    if (size === 1) out[0] = n;
    else if (size === 2 && min < 0) out.writeInt16LE(n, 0);
    else if (size === 2) out.writeUInt16LE(n, 0);
    else if (min < 0) out.writeInt32LE(n, 0);
    else out.writeUInt32LE(n, 0);
  }

  private int64(code: 'x' | 't', v: DBusValue): void {
    const [min, max] = BIG_RANGES[code]!;
    const big = typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : v;
    this.check({ code }, typeof big === 'bigint' && big >= min && big <= max, v);
    this.pad(8);
    const out = this.reserve(8);
    if (code === 'x') out.writeBigInt64LE(big as bigint, 0);
    else out.writeBigUInt64LE(big as bigint, 0);
  }

  private double(t: DBusType, v: DBusValue): void {
    this.check(t, typeof v === 'number', v);
    this.pad(8);
    this.reserve(8).writeDoubleLE(v as number, 0);
  }

  private string(t: DBusType, v: DBusValue): void {
    const ok = typeof v === 'string' && !v.includes('\0') && (t.code !== 'o' || isObjectPath(v));
    this.check(t, ok, v);
    const bytes = Buffer.from(v as string, 'utf8');
    this.uint32(bytes.length);
    bytes.copy(this.reserve(bytes.length + 1));
    this.buf[this.pos - 1] = 0;
  }

  private signature(v: DBusValue): void {
    this.check({ code: 'g' }, typeof v === 'string', v);
    parseSignature(v as string); // throws naming what is wrong
    this.byte((v as string).length);
    Buffer.from(`${v as string}\0`, 'latin1').copy(this.reserve((v as string).length + 1));
  }

  private variant(v: DBusValue, depth: number): void {
    this.checkDepth(depth);
    if (!isVariant(v))
      throw new DBusProtocolError(`cannot marshal ${describe(v)} as a variant: expected { sig, value }`);
    const inner = parseSingleType(v.sig);
    this.signature(v.sig);
    this.write(inner, v.value, depth);
  }

  private array(elem: DBusType, v: DBusValue, depth: number): void {
    this.checkDepth(depth);
    if (!Array.isArray(v)) throw new DBusProtocolError(`cannot marshal ${describe(v)} as an array`);
    this.uint32(0);
    const lengthAt = this.pos - 4;
    this.pad(alignmentOf(elem)); // the padding before the first element is not part of the length
    const start = this.pos;
    for (const e of v) this.write(elem, e, depth);
    const length = this.pos - start;
    if (length > MAX_ARRAY_BYTES)
      throw new DBusProtocolError(`array of ${length} bytes is over the ${MAX_ARRAY_BYTES}-byte limit`);
    this.patchUint32(lengthAt, length);
  }

  private struct(fields: DBusType[], v: DBusValue, depth: number): void {
    this.checkDepth(depth);
    if (!Array.isArray(v) || v.length !== fields.length) {
      throw new DBusProtocolError(`cannot marshal ${describe(v)} as a struct or dict entry of ${fields.length} fields`);
    }
    this.pad(8);
    fields.forEach((f, i) => this.write(f, v[i]!, depth));
  }

  private checkDepth(depth: number): void {
    if (depth > MAX_CONTAINER_DEPTH)
      throw new DBusProtocolError(`value nests more than ${MAX_CONTAINER_DEPTH} containers`);
  }

  private check(t: { code: string }, ok: boolean, v: DBusValue): void {
    if (!ok) throw new DBusProtocolError(`cannot marshal ${describe(v)} as type ${JSON.stringify(t.code)}`);
  }

  /** Makes room for n more bytes and returns them. */
  private reserve(n: number): Buffer {
    if (this.pos + n > this.buf.length) {
      const grown = Buffer.alloc(Math.max(this.buf.length * 2, this.pos + n));
      this.buf.copy(grown, 0, 0, this.pos);
      this.buf = grown;
    }
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function describe(v: DBusValue): string {
  const text =
    typeof v === 'bigint'
      ? `${v}n`
      : (JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
