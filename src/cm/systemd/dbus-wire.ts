/**
 * D-Bus messages on the wire (spec, "Message Format"): a 12-byte fixed header (endianness
 * 'l' or 'B', type, flags, version 1, body length, serial), the header fields as a(yv), padding
 * to 8, then the body marshalled by the SIGNATURE field. We write little-endian and read both.
 */
import { DBusProtocolError } from './errors.js';
import { WireWriter } from './dbus-marshal.js';
import { WireReader } from './dbus-unmarshal.js';
import { MAX_ARRAY_BYTES, MAX_MESSAGE_BYTES, isVariant, type DBusValue } from './dbus-values.js';
import { parseSignature } from './dbus-signature.js';

export const MessageType = { METHOD_CALL: 1, METHOD_RETURN: 2, ERROR: 3, SIGNAL: 4 } as const;
export const MessageFlag = {
  NO_REPLY_EXPECTED: 0x1,
  NO_AUTO_START: 0x2,
  ALLOW_INTERACTIVE_AUTHORIZATION: 0x4,
} as const;

export interface DBusMessage {
  /** One of MessageType; other values decode (the spec says to ignore them) but are never sent. */
  type: number;
  flags: number;
  serial: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  /** The body's signature; '' for no body. */
  signature: string;
  unixFds?: number;
  body: DBusValue[];
}

type FieldName =
  'path' | 'interface' | 'member' | 'errorName' | 'replySerial' | 'destination' | 'sender' | 'signature' | 'unixFds';

/** Header field codes and the one signature each must carry ("Header Fields" table). */
const FIELDS: ReadonlyArray<[code: number, name: FieldName, sig: string]> = [
  [1, 'path', 'o'],
  [2, 'interface', 's'],
  [3, 'member', 's'],
  [4, 'errorName', 's'],
  [5, 'replySerial', 'u'],
  [6, 'destination', 's'],
  [7, 'sender', 's'],
  [8, 'signature', 'g'],
  [9, 'unixFds', 'u'],
];
const FIELD_BY_CODE = new Map(FIELDS.map(([code, name, sig]) => [code, { name, sig }]));

/** The fields each known type must have ("Message Types"). */
const REQUIRED: Record<number, FieldName[]> = {
  [MessageType.METHOD_CALL]: ['path', 'member'],
  [MessageType.METHOD_RETURN]: ['replySerial'],
  [MessageType.ERROR]: ['errorName', 'replySerial'],
  [MessageType.SIGNAL]: ['path', 'interface', 'member'],
};

const FIXED_HEADER_BYTES = 16; // 12 fixed bytes and the header fields array's length

export function encodeMessage(msg: DBusMessage): Buffer {
  const body = new WireWriter();
  body.writeAll(msg.signature, msg.body);
  const out = new WireWriter();
  for (const b of [0x6c /* 'l' */, msg.type, msg.flags, 1]) out.byte(b);
  out.uint32(body.length);
  out.uint32(msg.serial);
  const fields: DBusValue[] = [];
  for (const [code, name, sig] of FIELDS) {
    const value = msg[name];
    if (value !== undefined && !(name === 'signature' && value === '')) fields.push([code, { sig, value }]);
  }
  out.write({ code: 'a', elem: { code: '(', fields: [{ code: 'y' }, { code: 'v' }] } }, fields, 0);
  out.pad(8);
  const total = out.length + body.length;
  if (total > MAX_MESSAGE_BYTES)
    throw new DBusProtocolError(`message of ${total} bytes is over the ${MAX_MESSAGE_BYTES}-byte limit`);
  return Buffer.concat([out.bytes(), body.bytes()]);
}

/**
 * The total length of the message that starts `head`, from its first 16 bytes; undefined while
 * fewer have arrived. Lets a stream reader refuse an oversized message before buffering it.
 */
export function messageLength(head: Buffer): number | undefined {
  if (head.length < FIXED_HEADER_BYTES) return undefined;
  const le = endianness(head[0]!);
  const bodyLength = le ? head.readUInt32LE(4) : head.readUInt32BE(4);
  const fieldsLength = le ? head.readUInt32LE(12) : head.readUInt32BE(12);
  if (fieldsLength > MAX_ARRAY_BYTES)
    throw new DBusProtocolError(`header fields length ${fieldsLength} is over the ${MAX_ARRAY_BYTES}-byte limit`);
  const total = align8(FIXED_HEADER_BYTES + fieldsLength) + bodyLength;
  if (total > MAX_MESSAGE_BYTES)
    throw new DBusProtocolError(`message of ${total} bytes is over the ${MAX_MESSAGE_BYTES}-byte limit`);
  return total;
}

/** Decodes exactly one whole message; anything malformed is a DBusProtocolError. */
export function decodeMessage(buf: Buffer): DBusMessage {
  const total = messageLength(buf);
  if (total === undefined || total !== buf.length)
    throw new DBusProtocolError(`message is ${buf.length} bytes but its header says ${total ?? 'at least 16'}`);
  const le = endianness(buf[0]!);
  const r = new WireReader(buf, le);
  const [, type, flags, version] = r.read(
    { code: '(', fields: [{ code: 'y' }, { code: 'y' }, { code: 'y' }, { code: 'y' }] },
    0,
  ) as number[];
  if (version !== 1) throw new DBusProtocolError(`unsupported protocol version ${version}`);
  const bodyLength = r.uint32();
  const serial = r.uint32();
  if (serial === 0) throw new DBusProtocolError('message serial is 0');
  const msg: DBusMessage = { type: type!, flags: flags!, serial, signature: '', body: [] };
  readHeaderFields(r, msg);
  r.align(8);
  const body = new WireReader(buf.subarray(r.pos, r.pos + bodyLength), le);
  msg.body = body.readAll(msg.signature);
  return msg;
}

function readHeaderFields(r: WireReader, msg: DBusMessage): void {
  const raw = r.read({ code: 'a', elem: { code: '(', fields: [{ code: 'y' }, { code: 'v' }] } }, 0) as Array<
    [number, DBusValue]
  >;
  const seen = new Set<number>();
  for (const [code, value] of raw) {
    if (seen.has(code)) throw new DBusProtocolError(`header field ${code} appears twice`);
    seen.add(code);
    const field = FIELD_BY_CODE.get(code);
    if (!field) continue; // unknown fields must be accepted and ignored
    if (!isVariant(value) || value.sig !== field.sig)
      throw new DBusProtocolError(`header field ${field.name} must have signature ${field.sig}`);
    (msg as unknown as Record<string, DBusValue>)[field.name] = value.value;
  }
  for (const name of REQUIRED[msg.type] ?? []) {
    if (msg[name] === undefined)
      throw new DBusProtocolError(`message of type ${msg.type} lacks the required header field ${name}`);
  }
  if (msg.signature !== '') parseSignature(msg.signature);
}

function endianness(b: number): boolean {
  if (b === 0x6c) return true; // 'l'
  if (b === 0x42) return false; // 'B'
  throw new DBusProtocolError(`bad endianness byte 0x${b.toString(16)} (expected 'l' or 'B')`);
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
