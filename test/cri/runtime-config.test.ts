/**
 * The RuntimeConfig reply decoder (CRI v1.28+) on hand-made bytes, hostile ones included (the call
 * through the client is in client.test.ts). An absent `linux` must not read as SYSTEMD
 * (the enum's zero), which is why the reply is decoded from its bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeConfigFromWire } from '../../src/cri/index.js';
import { CriError } from '../../src/errors.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

test('the RuntimeConfigResponse decoder: presence, last value wins, unknown fields skipped', () => {
  const cases: Array<[string, Uint8Array, object]> = [
    ['empty reply: no Linux part', bytes(), {}],
    ['empty Linux part: SYSTEMD', bytes(0x0a, 0x00), { cgroupDriver: 'systemd' }],
    ['CGROUPFS', bytes(0x0a, 0x02, 0x08, 0x01), { cgroupDriver: 'cgroupfs' }],
    ['the last cgroup_driver wins', bytes(0x0a, 0x04, 0x08, 0x01, 0x08, 0x00), { cgroupDriver: 'systemd' }],
    ['the last linux wins', bytes(0x0a, 0x02, 0x08, 0x01, 0x0a, 0x00), { cgroupDriver: 'systemd' }],
    [
      'unknown fields of every wire type are skipped',
      bytes(
        0x10,
        0x05,
        0x19,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        0x25,
        1,
        2,
        3,
        4,
        0x2a,
        0x01,
        0xff,
        0x0a,
        0x04,
        0x10,
        0x07,
        0x08,
        0x01,
      ),
      { cgroupDriver: 'cgroupfs' },
    ],
  ];
  for (const [name, raw, want] of cases) assert.deepEqual(runtimeConfigFromWire(raw), want, name);
});

test('the RuntimeConfigResponse decoder refuses what no runtime should send, naming the problem', () => {
  const cases: Array<[string, Uint8Array, RegExp]> = [
    [
      'an unknown driver (upstream: "unknown cgroup driver")',
      bytes(0x0a, 0x02, 0x08, 0x64),
      /cgroup driver 100, which is neither SYSTEMD \(0\) nor CGROUPFS \(1\)/,
    ],
    ['a truncated tag', bytes(0x8a), /RuntimeConfigResponse: truncated varint/],
    ['a length past the end', bytes(0x0a, 0x05, 0x08), /field 1: length 5 past the end/],
    ['a truncated fixed64', bytes(0x09, 1, 2), /field 1: truncated/],
    ['a group wire type', bytes(0x0b), /field 1: wire type 3 not supported/],
    ['field number 0', bytes(0x00, 0x01), /field number 0/],
    ['a varint longer than 10 bytes', bytes(0x10, ...Array(11).fill(0xff)), /varint longer than 10 bytes/],
    ['malformed inside linux', bytes(0x0a, 0x01, 0x08), /RuntimeConfigResponse.linux: truncated varint/],
  ];
  for (const [name, raw, re] of cases) {
    assert.throws(
      () => runtimeConfigFromWire(raw),
      (err: unknown) => err instanceof CriError && err.code === 'KTS_ERR_CRI_REPLY' && re.test(err.message),
      name,
    );
  }
});
