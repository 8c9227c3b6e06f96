/**
 * The TypeScript twin's skim decoder of the raw ListPodSandboxResponse / ListContainersResponse
 * bytes: only the fields the relist diff needs (id, state, the pod labels, sandbox metadata),
 * no JS object per field, names kept as byte offsets until a pod with events needs them. Kept
 * apart from the differ (relist-differ-ts.ts) because it is the protobuf half: the wire rules
 * and error messages mirror native/src/pleg_decode.cc byte for byte.
 *
 * The container and sandbox loops below are written out by hand, not shared: one generic loop
 * with callbacks costs the hot path a call per field (bench/pleg-diff.ts).
 */
import { relistDecodeError } from './relist-types.js';

// Strings are kept as latin1 (one char per byte) internally, so that keys compare and sort
// bytewise exactly as the native side does; they become UTF-8 only on the way out.
// eslint-disable-next-line no-control-regex -- every 7-bit byte, NUL and control characters included
const ASCII = /^[\x00-\x7f]*$/;
export function latin1ToUtf8(s: string): string {
  return ASCII.test(s) ? s : Buffer.from(s, 'latin1').toString('utf8');
}
export function utf8ToLatin1(s: string): string {
  return ASCII.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
}

// ---- skim decoder --------------------------------------------------------------------------

/** Record states, as native/src/pleg.h numbers them. */
export const RUNNING = 0;
export const EXITED = 1;
export const UNKNOWN = 2;
export const NON_EXISTENT = 3;

const TWO_32 = 0x1_0000_0000;

/** Buffer's own (undocumented, long-standing) slice decoder: toString('latin1') minus the checks. */
type RawBuffer = Buffer & { latin1Slice(start: number, end: number): string };

/** Where in the reply we are, for error messages: "<top>[ <list>[<index>][.<sub>]]". */
interface Ctx {
  top: string;
  list: string | undefined;
  index: number;
  sub: string | undefined;
}

function label(s: string): Uint8Array {
  return Buffer.from(s, 'latin1');
}
const POD_UID = label('io.kubernetes.pod.uid');
const POD_NAME = label('io.kubernetes.pod.name');
const POD_NAMESPACE = label('io.kubernetes.pod.namespace');
const CONTAINER_NAME = label('io.kubernetes.container.name');

/** One field at a time; the fields of the last next() call are in num/wt/value/start/end/at. */
export class Reader {
  buf: Buffer = Buffer.alloc(0);
  num = 0;
  wt = 0;
  /** Wire type 0: the value if below 2^53 (else -1: see big()). */
  value = 0;
  start = 0;
  end = 0;
  at = 0;

  /** Reads the field at `pos` (< end); returns the position after it. */
  next(pos: number, end: number, ctx: Ctx): number {
    const buf = this.buf;
    this.at = pos;
    // Tag: at most 5 bytes for a valid one; anything longer is out of range or malformed.
    let tag = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (pos >= end) this.fail(ctx, 'truncated varint');
      const b = buf[pos++]!;
      tag += (b & 0x7f) * mul;
      if (b < 0x80) break;
      if (i === 9) this.fail(ctx, 'varint longer than 10 bytes');
      mul *= 128;
    }
    // Past 2^53 the sum is inexact and the native side wraps at 2^64: redo it exactly.
    if (tag > Number.MAX_SAFE_INTEGER) tag = Number(this.bigAt(this.at));
    if (tag >= TWO_32) this.fail(ctx, `tag ${this.bigAt(this.at)} out of range`);
    const num = Math.floor(tag / 8);
    const wt = tag & 7;
    this.num = num;
    this.wt = wt;
    if (num === 0) this.fail(ctx, 'field number 0');
    switch (wt) {
      case 0: {
        const vstart = pos;
        let v = 0;
        mul = 1;
        for (let i = 0; ; i++) {
          if (pos >= end) this.fail(ctx, `field ${num}: truncated varint`);
          const b = buf[pos++]!;
          v += (b & 0x7f) * mul;
          if (b < 0x80) break;
          if (i === 9) this.fail(ctx, `field ${num}: varint longer than 10 bytes`);
          mul *= 128;
        }
        this.value = v <= Number.MAX_SAFE_INTEGER ? v : -1;
        this.start = vstart;
        return pos;
      }
      case 1:
        if (end - pos < 8) this.fail(ctx, `field ${num}: truncated fixed64`);
        return pos + 8;
      case 2: {
        const lstart = pos;
        let len = 0;
        mul = 1;
        for (let i = 0; ; i++) {
          if (pos >= end) this.fail(ctx, `field ${num}: truncated length`);
          const b = buf[pos++]!;
          len += (b & 0x7f) * mul;
          if (b < 0x80) break;
          if (i === 9) this.fail(ctx, `field ${num}: length varint longer than 10 bytes`);
          mul *= 128;
        }
        if (len > Number.MAX_SAFE_INTEGER) len = Number(this.bigAt(lstart));
        const left = end - pos;
        if (len > left) this.fail(ctx, `field ${num}: length ${this.bigAt(lstart)} past end (${left} bytes left)`);
        this.start = pos;
        this.end = pos + len;
        return pos + len;
      }
      case 5:
        if (end - pos < 4) this.fail(ctx, `field ${num}: truncated fixed32`);
        return pos + 4;
      case 3:
      case 4:
        return this.fail(ctx, `field ${num}: group wire type ${wt} not supported`);
      default:
        return this.fail(ctx, `field ${num}: invalid wire type ${wt}`);
    }
  }

  /** The low 32 bits of the last varint value (enums). */
  low32(): number {
    if (this.value >= 0) return this.value % TWO_32;
    return Number(BigInt.asUintN(32, this.bigAt(this.start)));
  }

  expect(wt: number, ctx: Ctx): void {
    if (this.wt !== wt) this.fail(ctx, `field ${this.num}: wire type ${this.wt}, expected ${wt}`);
  }

  /** The (well-formed) varint at `pos` as a uint64, for messages and huge values. */
  bigAt(pos: number): bigint {
    let v = 0n;
    for (let i = 0n; ; i++) {
      const b = this.buf[pos++]!;
      v |= BigInt(b & 0x7f) << (7n * i);
      if (b < 0x80) return BigInt.asUintN(64, v);
    }
  }

  fail(ctx: Ctx, what: string): never {
    let where = ctx.top;
    if (ctx.list !== undefined) where += ` ${ctx.list}[${ctx.index}]${ctx.sub !== undefined ? `.${ctx.sub}` : ''}`;
    throw relistDecodeError(`${where}: ${what} at byte ${this.at}`);
  }
}

function bytesEqual(buf: Buffer, start: number, end: number, lit: Uint8Array): boolean {
  if (end - start !== lit.length) return false;
  // From the end: our labels share the "io.kubernetes." prefix.
  for (let i = lit.length - 1; i >= 0; i--) if (buf[start + i] !== lit[i]) return false;
  return true;
}

/** Offsets of the labels we need inside the reply (-1: absent). */
class Labels {
  uidStart = -1;
  uidEnd = -1;
  nameStart = -1;
  nameEnd = -1;
  nsStart = -1;
  nsEnd = -1;
  cnameLen = 0;
  reset(): void {
    this.uidStart = this.uidEnd = this.nameStart = this.nameEnd = this.nsStart = this.nsEnd = -1;
    this.cnameLen = 0;
  }
}

/** Decodes the map entry (a label) whose bytes `r` has just read. */
function decodeLabel(r: Reader, l: Labels, ctx: Ctx): void {
  const entryEnd = r.end;
  let ks = 0;
  let ke = 0;
  let vs = 0;
  let ve = 0;
  let pos = r.start;
  while (pos < entryEnd) {
    pos = r.next(pos, entryEnd, ctx);
    if (r.num === 1) {
      r.expect(2, ctx);
      ks = r.start;
      ke = r.end;
    } else if (r.num === 2) {
      r.expect(2, ctx);
      vs = r.start;
      ve = r.end;
    }
  }
  const buf = r.buf;
  switch (ke - ks) {
    case POD_UID.length:
      if (bytesEqual(buf, ks, ke, POD_UID)) {
        l.uidStart = vs;
        l.uidEnd = ve;
      }
      break;
    case POD_NAME.length:
      if (bytesEqual(buf, ks, ke, POD_NAME)) {
        l.nameStart = vs;
        l.nameEnd = ve;
      }
      break;
    case POD_NAMESPACE.length:
      if (bytesEqual(buf, ks, ke, POD_NAMESPACE)) {
        l.nsStart = vs;
        l.nsEnd = ve;
      }
      break;
    case CONTAINER_NAME.length:
      if (bytesEqual(buf, ks, ke, CONTAINER_NAME)) l.cnameLen = ve - vs;
      break;
  }
}

/** A labelled sandbox or container of this relist. Name/namespace stay offsets until needed. */
export interface Item<P = unknown> {
  id: string;
  uid: string;
  state: number;
  /** Containers: 0 created, 1 running, 2 exited, 3 unknown. Sandboxes: 0 ready, 1 not. */
  cri: number;
  nameStart: number;
  nameEnd: number;
  nsStart: number;
  nsEnd: number;
  /** The differ's pod, filled in by the differ (P), so it looks each uid up once. */
  pod: P | undefined;
}

export function decodeContainers<P>(r: Reader, buf: Buffer, out: Item<P>[], counts: number[]): void {
  r.buf = buf;
  const len = buf.length;
  const top: Ctx = { top: 'ListContainersResponse', list: undefined, index: 0, sub: undefined };
  const ctx: Ctx = { top: 'ListContainersResponse', list: 'containers', index: 0, sub: undefined };
  const lctx: Ctx = { top: 'ListContainersResponse', list: 'containers', index: 0, sub: 'labels' };
  const l = new Labels();
  let index = 0;
  let pos = 0;
  while (pos < len) {
    pos = r.next(pos, len, top);
    if (r.num !== 1) continue;
    r.expect(2, top);
    const cend = r.end;
    ctx.index = lctx.index = index++;
    let idStart = 0;
    let idEnd = 0;
    let state = 0;
    l.reset();
    let p = r.start;
    while (p < cend) {
      p = r.next(p, cend, ctx);
      const num = r.num;
      if (num === 1) {
        r.expect(2, ctx);
        idStart = r.start;
        idEnd = r.end;
      } else if (num === 6) {
        r.expect(0, ctx);
        state = r.low32();
      } else if (num === 8) {
        r.expect(2, ctx);
        decodeLabel(r, l, lctx);
      }
    }
    if (l.uidEnd - l.uidStart <= 0 || l.cnameLen === 0) continue; // not ours
    const cri = state <= 3 ? state : 3;
    counts[cri]!++;
    out.push({
      id: (buf as RawBuffer).latin1Slice(idStart, idEnd),
      uid: (buf as RawBuffer).latin1Slice(l.uidStart, l.uidEnd),
      state: state === 1 ? RUNNING : state === 2 ? EXITED : UNKNOWN,
      cri,
      nameStart: l.nameStart,
      nameEnd: l.nameEnd,
      nsStart: l.nsStart,
      nsEnd: l.nsEnd,
      pod: undefined,
    });
  }
}

export function decodeSandboxes<P>(r: Reader, buf: Buffer, out: Item<P>[]): void {
  r.buf = buf;
  const len = buf.length;
  const top: Ctx = { top: 'ListPodSandboxResponse', list: undefined, index: 0, sub: undefined };
  const ctx: Ctx = { top: 'ListPodSandboxResponse', list: 'items', index: 0, sub: undefined };
  const lctx: Ctx = { top: 'ListPodSandboxResponse', list: 'items', index: 0, sub: 'labels' };
  const mctx: Ctx = { top: 'ListPodSandboxResponse', list: 'items', index: 0, sub: 'metadata' };
  const l = new Labels();
  let index = 0;
  let pos = 0;
  while (pos < len) {
    pos = r.next(pos, len, top);
    if (r.num !== 1) continue;
    r.expect(2, top);
    const send = r.end;
    ctx.index = lctx.index = mctx.index = index++;
    let idStart = 0;
    let idEnd = 0;
    let state = 0;
    let mnStart = 0;
    let mnEnd = 0;
    let msStart = 0;
    let msEnd = 0;
    l.reset();
    let p = r.start;
    while (p < send) {
      p = r.next(p, send, ctx);
      const num = r.num;
      if (num === 1) {
        r.expect(2, ctx);
        idStart = r.start;
        idEnd = r.end;
      } else if (num === 2) {
        // metadata: repeated occurrences merge
        r.expect(2, ctx);
        const mend = r.end;
        let q = r.start;
        while (q < mend) {
          q = r.next(q, mend, mctx);
          if (r.num === 1 || r.num === 3) {
            r.expect(2, mctx);
            if (r.num === 1) {
              mnStart = r.start;
              mnEnd = r.end;
            } else {
              msStart = r.start;
              msEnd = r.end;
            }
          }
        }
      } else if (num === 3) {
        r.expect(0, ctx);
        state = r.low32();
      } else if (num === 5) {
        r.expect(2, ctx);
        decodeLabel(r, l, lctx);
      }
    }
    if (l.uidEnd - l.uidStart <= 0) continue; // not ours
    const useMetaName = mnEnd > mnStart;
    const useMetaNs = msEnd > msStart;
    out.push({
      id: (buf as RawBuffer).latin1Slice(idStart, idEnd),
      uid: (buf as RawBuffer).latin1Slice(l.uidStart, l.uidEnd),
      state: state === 0 ? RUNNING : EXITED,
      cri: state === 0 ? 0 : 1,
      nameStart: useMetaName ? mnStart : l.nameStart,
      nameEnd: useMetaName ? mnEnd : l.nameEnd,
      nsStart: useMetaNs ? msStart : l.nsStart,
      nsEnd: useMetaNs ? msEnd : l.nsEnd,
      pod: undefined,
    });
  }
}

/** The bytes start..end as a latin1 string (see above), '' when empty. */
export function latin1(buf: Buffer, start: number, end: number): string {
  return end > start ? (buf as RawBuffer).latin1Slice(start, end) : '';
}
