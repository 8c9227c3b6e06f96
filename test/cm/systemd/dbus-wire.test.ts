/**
 * The D-Bus wire format (src/cm/systemd/dbus-*.ts) against the specification
 * (https://dbus.freedesktop.org/doc/dbus-specification.html, "Marshaling (Wire Format)" and
 * "Message Format"): round trips of every type, alignment, one message checked byte by byte
 * against bytes derived by hand, and hostile input, which must fail with DBusProtocolError only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WireWriter } from '../../../src/cm/systemd/dbus-marshal.js';
import { parseSignature, parseSingleType, typeSignature } from '../../../src/cm/systemd/dbus-signature.js';
import { WireReader } from '../../../src/cm/systemd/dbus-unmarshal.js';
import {
  DBusProtocolError,
  MessageType,
  decodeMessage,
  encodeMessage,
  messageLength,
  variant,
  type DBusMessage,
  type DBusValue,
} from '../../../src/cm/systemd/index.js';
import { HELLO_BYTES, hex } from './hand-derived-hello.js';

function marshal(sig: string, values: DBusValue[]): Buffer {
  const w = new WireWriter();
  w.writeAll(sig, values);
  return Buffer.from(w.bytes());
}

function unmarshal(sig: string, bytes: Buffer, littleEndian = true): DBusValue[] {
  return new WireReader(bytes, littleEndian).readAll(sig);
}

function roundTrip(sig: string, values: DBusValue[]): void {
  assert.deepEqual(unmarshal(sig, marshal(sig, values)), values, `round trip of ${sig}`);
}

/** A METHOD_RETURN whose body is `body` as given, claimed to have signature `sig`. */
function rawReply(sig: string, body: Buffer): Buffer {
  const w = new WireWriter();
  for (const b of [0x6c, MessageType.METHOD_RETURN, 0, 1]) w.byte(b);
  w.uint32(body.length);
  w.uint32(1);
  const fields: DBusValue[] = [[5, variant('u', 1)]];
  if (sig !== '') fields.push([8, variant('g', sig)]);
  w.write(parseSingleType('a(yv)'), fields, 0);
  w.pad(8);
  return Buffer.concat([w.bytes(), body]);
}

/** Runs `fn`; passes if it returns or throws DBusProtocolError, fails on any other throw. */
function onlyProtocolErrors(fn: () => unknown, what: string): 'ok' | 'rejected' {
  try {
    fn();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof DBusProtocolError, `${what}: threw ${String(err)} instead of a DBusProtocolError`);
    return 'rejected';
  }
}

describe('D-Bus signatures', () => {
  it('parses and prints back every container kind', () => {
    for (const sig of [
      'y',
      'bnqiuxtdhsogv',
      'a(sv)',
      'a{sv}',
      'a{oa(ii)}',
      'aay',
      '(ya(sa(sv)))',
      'a{sa{sv}}',
      'ssa(sv)a(sa(sv))',
    ]) {
      assert.equal(parseSignature(sig).map(typeSignature).join(''), sig);
    }
  });

  it('refuses invalid signatures, naming the problem', () => {
    const bad: Array<[string, RegExp]> = [
      ['a', /ends inside a container/],
      ['(', /unclosed struct|ends inside/],
      ['()', /empty struct/],
      ['(i', /unclosed struct/],
      ['{sv}', /dict entry outside an array/],
      ['a{vs}', /key is not a basic type/],
      ['a{sv', /not exactly a key and a value/],
      ['a{svs}', /not exactly a key and a value/],
      ['z', /unknown type code/],
      [')', /unknown type code/],
      ['y'.repeat(256), /longer than 255/],
      [`${'a'.repeat(33)}y`, /more than 32 arrays/],
      [`${'('.repeat(33)}y${')'.repeat(33)}`, /more than 32 structs/],
    ];
    for (const [sig, message] of bad)
      assert.throws(
        () => parseSignature(sig),
        (e: unknown) => e instanceof DBusProtocolError && message.test(e.message),
        sig,
      );
    assert.doesNotThrow(() => parseSignature(`${'a'.repeat(32)}y`));
    assert.throws(() => parseSingleType('ss'), /not exactly one complete type/);
  });
});

describe('D-Bus marshalling: round trips', () => {
  it('every basic type at its bounds', () => {
    roundTrip('yy', [0, 255]);
    roundTrip('bb', [true, false]);
    roundTrip('nn', [-32768, 32767]);
    roundTrip('qq', [0, 65535]);
    roundTrip('ii', [-2147483648, 2147483647]);
    roundTrip('uu', [0, 4294967295]);
    roundTrip('xx', [-(2n ** 63n), 2n ** 63n - 1n]);
    roundTrip('tt', [0n, 2n ** 64n - 1n]);
    roundTrip('ddd', [0.5, -1e308, Number.NaN]);
    roundTrip('sss', ['', 'kubepods-burstable.slice', 'ünïcödé ✓ 𝄞']);
    roundTrip('oo', ['/', '/org/freedesktop/systemd1/unit/kubepods_2eslice']);
    roundTrip('gg', ['', 'a(sv)a(sa(sv))']);
    roundTrip('h', [3]);
  });

  it('64-bit values accept safe integer numbers and come back as bigints', () => {
    assert.deepEqual(unmarshal('tx', marshal('tx', [42, -7])), [42n, -7n]);
  });

  it('a(sv) with a variant of every type, nested variants and containers', () => {
    const props: DBusValue = [
      ['Y', variant('y', 7)],
      ['B', variant('b', true)],
      ['N', variant('n', -2)],
      ['Q', variant('q', 3)],
      ['I', variant('i', -4)],
      ['U', variant('u', 5)],
      ['X', variant('x', -6n)],
      ['T', variant('t', 2n ** 64n - 1n)],
      ['D', variant('d', 2.5)],
      ['S', variant('s', 'str')],
      ['O', variant('o', '/a/b')],
      ['G', variant('g', 'a{sv}')],
      ['V', variant('v', variant('v', variant('t', 1n)))],
      ['AS', variant('as', ['a', 'b'])],
      ['AT', variant('at', [1n, 2n])],
      ['ST', variant('(yt)', [1, 2n])],
      ['DICT', variant('a{sv}', [['k', variant('b', false)]])],
      ['AUX', variant('a(sa(sv))', [['unit.slice', [['Description', variant('s', 'd')]]]])],
      ['EMPTY', variant('a(yt)', [])],
    ];
    roundTrip('a(sv)', [props]);
    roundTrip('ssa(sv)a(sa(sv))', ['x.slice', 'replace', props, []]);
  });

  it('dict entries, arrays of arrays, structs in structs', () => {
    roundTrip('a{sv}', [
      [
        ['a', variant('u', 1)],
        ['b', variant('as', [])],
      ],
    ]);
    roundTrip('a{oa(ii)}', [
      [
        [
          '/x',
          [
            [1, 2],
            [3, 4],
          ],
        ],
        ['/y', []],
      ],
    ]);
    roundTrip('aay', [[[1, 2, 3], [], [255]]]);
    roundTrip('(y(n(t)))', [[1, [2, [3n]]]]);
  });
});

describe('D-Bus marshalling: alignment, byte for byte', () => {
  it('pads each type to its alignment with zero bytes', () => {
    assert.deepEqual(marshal('yu', [1, 2]), hex('01000000 02000000'));
    assert.deepEqual(marshal('yn', [1, -1]), hex('0100 ffff'));
    assert.deepEqual(marshal('yt', [1, 2n]), hex('01000000 00000000 0200000000000000'));
    assert.deepEqual(marshal('y(y)', [1, [2]]), hex('01000000 00000000 02'));
    assert.deepEqual(marshal('yg', [1, 'as']), hex('01 02 6173 00'));
    assert.deepEqual(marshal('yv', [1, variant('q', 9)]), hex('01 01 71 00 0900'));
    assert.deepEqual(marshal('ys', [1, 'ab']), hex('01000000 02000000 616200'));
  });

  it('an array length excludes the padding before its first element, even when it is empty', () => {
    assert.deepEqual(marshal('at', [[]]), hex('00000000 00000000'));
    assert.deepEqual(marshal('at', [[5n]]), hex('08000000 00000000 0500000000000000'));
    assert.deepEqual(marshal('ayat', [[1], []]), hex('01000000 01 000000 00000000 00000000'));
    assert.deepEqual(unmarshal('ayat', hex('01000000 01 000000 00000000 00000000')), [[1], []]);
    assert.deepEqual(
      marshal('a(yy)', [
        [
          [1, 2],
          [3, 4],
        ],
      ]),
      hex('0a000000 00000000 0102 000000000000 0304'),
    );
  });

  it('encodes org.freedesktop.DBus.Hello exactly as derived from the specification', () => {
    const expected = HELLO_BYTES;
    assert.equal(expected.length, 128);
    const hello: DBusMessage = {
      type: MessageType.METHOD_CALL,
      flags: 0,
      serial: 1,
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'Hello',
      destination: 'org.freedesktop.DBus',
      signature: '',
      body: [],
    };
    assert.deepEqual(encodeMessage(hello), expected);
    assert.deepEqual(decodeMessage(expected), hello);
    assert.equal(messageLength(expected.subarray(0, 16)), 128);
    assert.equal(messageLength(expected.subarray(0, 15)), undefined);
  });

  it('decodes a big-endian message derived by hand', () => {
    const be = Buffer.concat([
      hex('42 02 00 01 00000004 00000009 0000000f'), // 'B', METHOD_RETURN, body 4 bytes, serial 9, fields 15 bytes
      hex('05 01 75 00 00000001'), // REPLY_SERIAL u 1
      hex('08 01 67 00 01 75 00'),
      hex('00'), // SIGNATURE g "u", then padding to 32
      hex('01020304'),
    ]);
    const msg = decodeMessage(be);
    assert.equal(msg.replySerial, 1);
    assert.equal(msg.serial, 9);
    assert.deepEqual(msg.body, [0x01020304]);
    assert.deepEqual(unmarshal('nqixtd', marshalBE(), false), [-2, 3, -4, -5n, 6n, 1.5]);
  });
});

/** 'nqixtd' = [-2, 3, -4, -5n, 6n, 1.5] written big-endian by hand. */
function marshalBE(): Buffer {
  return hex('fffe 0003 fffffffc fffffffffffffffb 0000000000000006 3ff8000000000000');
}

describe('D-Bus unmarshalling: hostile input fails with DBusProtocolError', () => {
  const good = encodeMessage({
    type: MessageType.SIGNAL,
    flags: 0,
    serial: 5,
    path: '/org/freedesktop/systemd1',
    interface: 'org.freedesktop.systemd1.Manager',
    member: 'JobRemoved',
    signature: 'uossa(sv)',
    body: [7, '/org/freedesktop/systemd1/job/7', 'a.slice', 'done', [['K', variant('at', [1n])]]],
  });

  it('every truncation of a valid message', () => {
    for (let n = 0; n < good.length; n++)
      assert.equal(
        onlyProtocolErrors(() => decodeMessage(good.subarray(0, n)), `prefix ${n}`),
        'rejected',
      );
    assert.equal(decodeMessage(good).member, 'JobRemoved');
  });

  it('every single-byte corruption decodes or is refused, nothing else', () => {
    for (let i = 0; i < good.length; i++) {
      for (const b of [0x00, 0x01, 0x7f, 0x80, 0xff, good[i]! ^ 0x20]) {
        const bad = Buffer.from(good);
        bad[i] = b;
        onlyProtocolErrors(() => decodeMessage(bad), `byte ${i} = ${b}`);
      }
    }
  });

  it('random garbage after a plausible fixed header', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 2000; round++) {
      const body = Buffer.from(Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256)));
      const fields = Buffer.from(Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256)));
      const head = hex('6c 02 00 01 00000000 01000000 00000000');
      head.writeUInt32LE(body.length, 4);
      head.writeUInt32LE(fields.length, 12);
      const pad = Buffer.alloc((8 - ((16 + fields.length) % 8)) % 8);
      onlyProtocolErrors(() => decodeMessage(Buffer.concat([head, fields, pad, body])), `round ${round}`);
    }
  });

  it('names the problem for each kind of malformed data', () => {
    const cases: Array<[string, string, Buffer, RegExp]> = [
      ['absurd array length', 'ai', hex('ffffffff'), /over the 67108864-byte limit/],
      ['array past the end', 'ai', hex('e8030000 01000000'), /runs past the end/],
      ['array elements overrun', 'a(yy)', hex('01000000 00000000 0102'), /not at its length's end/],
      ['boolean 2', 'b', hex('02000000'), /boolean with value 2/],
      ['non-zero padding', 'yu', hex('01 000100 02000000'), /non-zero padding/],
      ['string without NUL', 's', hex('02000000 6162 61'), /not NUL-terminated/],
      ['NUL inside a string', 's', hex('02000000 6100 00'), /contains a NUL/],
      ['invalid UTF-8', 's', hex('02000000 c328 00'), /not valid UTF-8/],
      ['invalid object path', 'o', hex('03000000 2f612f 00'), /invalid object path/],
      ['bad variant signature', 'v', hex('02 7373 00'), /not exactly one complete type/],
      ['bad signature value', 'g', hex('01 7a 00'), /unknown type code/],
      ['string longer than the body', 's', hex('ffffff7f 61'), /truncated/],
      ['trailing bytes', 'y', hex('01 02'), /bytes left over/],
    ];
    for (const [what, sig, body, message] of cases) {
      assert.throws(
        () => decodeMessage(rawReply(sig, body)),
        (e: unknown) => e instanceof DBusProtocolError && message.test(e.message),
        what,
      );
    }
  });

  it('bounds nesting: 64 containers decode, 65 nested variants are refused', () => {
    const nested = (n: number) => Buffer.concat([hex('017600'.repeat(n)), hex('01 79 00 05')]);
    assert.doesNotThrow(() => decodeMessage(rawReply('v', nested(63))));
    assert.throws(() => decodeMessage(rawReply('v', nested(64))), /nests more than 64 containers/);
    let deep: DBusValue = variant('y', 1);
    for (let i = 0; i < 64; i++) deep = variant('v', deep);
    assert.throws(() => marshal('v', [deep]), /nests more than 64 containers/);
  });

  it('bounds sizes before buffering: 128 MiB messages and 64 MiB header arrays', () => {
    const head = hex('6c 02 00 01 00000000 01000000 08000000');
    head.writeUInt32LE(128 * 1024 * 1024, 4);
    assert.throws(() => messageLength(head), /over the 134217728-byte limit/);
    head.writeUInt32LE(0, 4);
    head.writeUInt32LE(64 * 1024 * 1024 + 1, 12);
    assert.throws(() => messageLength(head), /header fields length .* over the 67108864-byte limit/);
    assert.throws(() => messageLength(hex('58 02 00 01 00000000 01000000 00000000')), /bad endianness byte 0x58/);
  });

  it('refuses headers that break the message rules', () => {
    const reply = { type: MessageType.METHOD_RETURN, flags: 0, serial: 2, replySerial: 1, signature: '', body: [] };
    const v2 = encodeMessage(reply);
    v2[3] = 2;
    assert.throws(() => decodeMessage(v2), /unsupported protocol version 2/);
    const noSerial = encodeMessage(reply);
    noSerial.writeUInt32LE(0, 8);
    assert.throws(() => decodeMessage(noSerial), /serial is 0/);
    const noReplySerial = encodeMessage(reply);
    noReplySerial[16] = 9; // REPLY_SERIAL's code becomes UNIX_FDS (also u)
    assert.throws(() => decodeMessage(noReplySerial), /lacks the required header field replySerial/);
    const wrongType = encodeMessage(reply);
    wrongType[18] = 0x69; // REPLY_SERIAL's variant 'u' becomes 'i'
    assert.throws(() => decodeMessage(wrongType), /replySerial must have signature u/);
  });
});

describe('D-Bus marshalling: values that do not fit their signature', () => {
  it('fail with DBusProtocolError before any byte is sent', () => {
    const bad: Array<[string, DBusValue[], RegExp]> = [
      ['y', [256], /as type "y"/],
      ['u', [-1], /as type "u"/],
      ['i', [1.5], /as type "i"/],
      ['t', [-1n], /as type "t"/],
      ['x', [2n ** 63n], /as type "x"/],
      ['t', [2 ** 60], /as type "t"/],
      ['b', [1], /as type "b"/],
      ['s', ['a\0b'], /as type "s"/],
      ['o', ['relative/path'], /as type "o"/],
      ['g', ['a{'], /signature "a\{"/],
      ['v', [5], /as a variant/],
      ['v', [{ sig: 'ii', value: 1 }], /not exactly one complete type/],
      ['(ii)', [[1]], /struct or dict entry of 2 fields/],
      ['as', ['x'], /as an array/],
      ['ss', ['x'], /has 2 types but 1 values/],
      ['d', ['1'], /as type "d"/],
    ];
    for (const [sig, values, message] of bad)
      assert.throws(
        () => marshal(sig, values),
        (e: unknown) => e instanceof DBusProtocolError && message.test(e.message),
        sig,
      );
  });
});
