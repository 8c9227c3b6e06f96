/**
 * RuntimeConfig (CRI v1.28+, KEP-4033): the runtime tells the kubelet its cgroup driver.
 *
 * The reply is decoded from its bytes, not by proto-loader: proto-loader fills an absent `linux`
 * message with defaults, and the enum's default is SYSTEMD, so "no Linux configuration" (upstream
 * then keeps its configured driver) would read as "systemd". A few fields need only a few lines.
 */
import { replyError } from './errors.js';

export type RuntimeCgroupDriver = 'systemd' | 'cgroupfs';

export interface RuntimeConfigInfo {
  /** Absent when the reply carries no LinuxRuntimeConfiguration. */
  cgroupDriver?: RuntimeCgroupDriver;
}

/** CRI's CgroupDriver enum, by number. */
const CGROUP_DRIVERS: readonly RuntimeCgroupDriver[] = ['systemd', 'cgroupfs'];

interface WireField {
  num: number;
  wt: number;
  /** Wire type 0: the varint (exact below 2^53). */
  value: number;
  /** Wire type 2: the bytes. */
  bytes: Uint8Array;
}

const EMPTY: Uint8Array = new Uint8Array(0);

/** The top-level fields of one protobuf message; a malformed one is a KTS_ERR_CRI_REPLY naming `what`. */
function* wireFields(buf: Uint8Array, what: string): Generator<WireField> {
  const bad = (why: string) => replyError('RuntimeConfig', `${what}: ${why}`);
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= buf.length) throw bad('truncated varint');
      const b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    throw bad('varint longer than 10 bytes');
  };
  while (pos < buf.length) {
    const tag = varint();
    const num = Math.floor(tag / 8);
    const wt = tag % 8;
    if (num === 0) throw bad('field number 0');
    let value = 0;
    let bytes: Uint8Array = EMPTY;
    if (wt === 0) value = varint();
    else if (wt === 1) pos += 8;
    else if (wt === 5) pos += 4;
    else if (wt === 2) {
      const len = varint();
      if (len > buf.length - pos) throw bad(`field ${num}: length ${len} past the end`);
      bytes = buf.subarray(pos, pos + len);
      pos += len;
    } else throw bad(`field ${num}: wire type ${wt} not supported`);
    if (pos > buf.length) throw bad(`field ${num}: truncated`);
    yield { num, wt, value, bytes };
  }
}

/** The last occurrence of field `num` with wire type `wt` (protobuf: the last one wins). */
function lastField(buf: Uint8Array, num: number, wt: number, what: string): WireField | undefined {
  let found: WireField | undefined;
  for (const f of wireFields(buf, what)) if (f.num === num && f.wt === wt) found = f;
  return found;
}

/** A serialized RuntimeConfigResponse. An unknown cgroup driver is an error, as upstream. */
export function runtimeConfigFromWire(raw: Uint8Array): RuntimeConfigInfo {
  const linux = lastField(raw, 1, 2, 'RuntimeConfigResponse');
  if (!linux) return {};
  const value = lastField(linux.bytes, 1, 0, 'RuntimeConfigResponse.linux')?.value ?? 0;
  const cgroupDriver = CGROUP_DRIVERS[value];
  if (!cgroupDriver)
    throw replyError(
      'RuntimeConfig',
      `the runtime reported cgroup driver ${value}, which is neither SYSTEMD (0) nor CGROUPFS (1)`,
    );
  return { cgroupDriver };
}
