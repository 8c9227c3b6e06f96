/**
 * org.freedesktop.DBus.Hello as bytes derived by hand from the D-Bus specification ("Message
 * Format"), not by our encoder: the wire test compares the encoder with them, the connection
 * test sends them to a real dbus-daemon, which must accept them.
 */
export const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
export const cstr = (s: string) => Buffer.from(`${s}\0`, 'latin1');

// Fixed header: 'l', METHOD_CALL, flags 0, version 1, body length 0, serial 1, fields length 0x6d.
// Fields (each struct 8-aligned): PATH(1) 'o', INTERFACE(2) 's', MEMBER(3) 's', DESTINATION(6) 's';
// every string is a 4-aligned u32 length, its bytes and a NUL. The header ends padded to 8.
export const HELLO_BYTES = Buffer.concat([
  hex('6c 01 00 01 00000000 01000000 6d000000'),
  hex('01 01 6f 00 15000000'),
  cstr('/org/freedesktop/DBus'),
  hex('0000'), // offsets 16..47
  hex('02 01 73 00 14000000'),
  cstr('org.freedesktop.DBus'),
  hex('000000'), // 48..79
  hex('03 01 73 00 05000000'),
  cstr('Hello'),
  hex('0000'), // 80..95
  hex('06 01 73 00 14000000'),
  cstr('org.freedesktop.DBus'),
  hex('000000'), // 96..127
]);
