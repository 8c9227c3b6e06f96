/**
 * Unmarshalling of values by their signature, in either byte order (spec, "Marshaling (Wire
 * Format)"). Hostile bytes are the norm here: every length is checked against what is left
 * before anything is read or allocated, padding must be zero, booleans 0 or 1, strings valid
 * UTF-8 without NUL, and nesting is bounded; each violation is a DBusProtocolError.
 */
import { DBusProtocolError } from './errors.js';
import { alignmentOf, parseSignature, parseSingleType, type DBusType } from './dbus-signature.js';
import { MAX_ARRAY_BYTES, MAX_CONTAINER_DEPTH, isObjectPath, type DBusValue } from './dbus-values.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads from `buf`; offsets (and so alignment) count from its first byte. */
export class WireReader {
  pos = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly littleEndian: boolean,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  /** Reads values of a whole signature, which must use every byte. */
  readAll(sig: string): DBusValue[] {
    const values = parseSignature(sig).map((t) => this.read(t, 0));
    if (this.remaining !== 0)
      throw new DBusProtocolError(`${this.remaining} bytes left over after values of signature ${JSON.stringify(sig)}`);
    return values;
  }

  read(t: DBusType, depth: number): DBusValue {
    switch (t.code) {
      case 'y':
        return this.take(1)[0]!;
      case 'b':
        return this.bool();
      case 'n':
        return this.fixed(2, (b) => (this.littleEndian ? b.readInt16LE(0) : b.readInt16BE(0)));
      case 'q':
        return this.fixed(2, (b) => (this.littleEndian ? b.readUInt16LE(0) : b.readUInt16BE(0)));
      case 'i':
        return this.fixed(4, (b) => (this.littleEndian ? b.readInt32LE(0) : b.readInt32BE(0)));
      case 'u':
      case 'h':
        return this.uint32();
      case 'x':
        return this.fixed(8, (b) => (this.littleEndian ? b.readBigInt64LE(0) : b.readBigInt64BE(0)));
      case 't':
        return this.fixed(8, (b) => (this.littleEndian ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0)));
      case 'd':
        return this.fixed(8, (b) => (this.littleEndian ? b.readDoubleLE(0) : b.readDoubleBE(0)));
      case 's':
        return this.string();
      case 'o':
        return this.objectPath();
      case 'g':
        return this.signature();
      case 'v':
        return this.variant(depth + 1);
      case 'a':
        return this.array(t.elem, depth + 1);
      case '(':
        return this.struct(t.fields, depth + 1);
      case '{':
        return this.struct([t.key, t.value], depth + 1);
    }
  }

  uint32(): number {
    return this.fixed(4, (b) => (this.littleEndian ? b.readUInt32LE(0) : b.readUInt32BE(0)));
  }

  /** Skips padding up to `alignment`; the spec requires padding bytes to be zero. */
  align(alignment: number): void {
    const n = (alignment - (this.pos % alignment)) % alignment;
    const pad = this.take(n, 'padding');
    if (pad.some((b) => b !== 0)) throw new DBusProtocolError(`non-zero padding at offset ${this.pos - n}`);
  }

  private fixed<T>(size: number, decode: (b: Buffer) => T): T {
    this.align(size);
    return decode(this.take(size));
  }

  private bool(): boolean {
    const n = this.uint32();
    if (n > 1) throw new DBusProtocolError(`boolean with value ${n} at offset ${this.pos - 4} (must be 0 or 1)`);
    return n === 1;
  }

  private string(): string {
    const length = this.uint32();
    return this.text(length, 'string');
  }

  private objectPath(): string {
    const p = this.string();
    if (!isObjectPath(p)) throw new DBusProtocolError(`invalid object path ${JSON.stringify(p.slice(0, 80))}`);
    return p;
  }

  private signature(): string {
    const length = this.take(1)[0]!;
    const sig = this.text(length, 'signature');
    parseSignature(sig); // throws naming what is wrong
    return sig;
  }

  /** `length` bytes of UTF-8 and a NUL terminator, with no NUL inside. */
  private text(length: number, what: string): string {
    const bytes = this.take(length + 1, what);
    if (bytes[length] !== 0)
      throw new DBusProtocolError(`${what} at offset ${this.pos - length - 1} is not NUL-terminated`);
    if (bytes.indexOf(0) !== length)
      throw new DBusProtocolError(`${what} at offset ${this.pos - length - 1} contains a NUL byte`);
    try {
      return utf8.decode(bytes.subarray(0, length));
    } catch {
      throw new DBusProtocolError(`${what} at offset ${this.pos - length - 1} is not valid UTF-8`);
    }
  }

  private variant(depth: number): DBusValue {
    this.checkDepth(depth);
    const sig = this.signature();
    const value = this.read(parseSingleType(sig), depth);
    return { sig, value };
  }

  private array(elem: DBusType, depth: number): DBusValue[] {
    this.checkDepth(depth);
    const length = this.uint32();
    if (length > MAX_ARRAY_BYTES)
      throw new DBusProtocolError(`array length ${length} is over the ${MAX_ARRAY_BYTES}-byte limit`);
    this.align(alignmentOf(elem));
    if (length > this.remaining)
      throw new DBusProtocolError(
        `array length ${length} at offset ${this.pos} runs past the end (${this.remaining} bytes left)`,
      );
    const end = this.pos + length;
    const out: DBusValue[] = [];
    while (this.pos < end) out.push(this.read(elem, depth));
    if (this.pos !== end)
      throw new DBusProtocolError(`array elements end at offset ${this.pos}, not at its length's end ${end}`);
    return out;
  }

  private struct(fields: DBusType[], depth: number): DBusValue[] {
    this.checkDepth(depth);
    this.align(8);
    return fields.map((f) => this.read(f, depth));
  }

  private checkDepth(depth: number): void {
    if (depth > MAX_CONTAINER_DEPTH)
      throw new DBusProtocolError(`value nests more than ${MAX_CONTAINER_DEPTH} containers`);
  }

  private take(n: number, what = 'value'): Buffer {
    if (n > this.remaining)
      throw new DBusProtocolError(
        `truncated: ${what} of ${n} bytes at offset ${this.pos}, ${this.remaining} bytes left`,
      );
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}
