/**
 * The relist diff hot path (issue 4, item 2): the raw ListPodSandboxResponse and
 * ListContainersResponse bytes in, only the lifecycle events out, with the previous relist kept
 * as retained state inside the differ. Two implementations share this signature: the addon's
 * (native/src/pleg.cc, wrapped by relist-diff-native.ts) and the TypeScript twin below. Both
 * decode with a skim decoder (only the fields the diff needs, no JS object per container) and
 * must agree exactly: events, pods, counts and error messages (test/native/pleg-diff.test.ts).
 *
 * Semantics (upstream GenericPLEG relist + generateEvents, seed 003):
 * - A container belongs to the pod of its `io.kubernetes.pod.uid` label and must also carry
 *   `io.kubernetes.container.name` (as kuberuntime/labels.ts getContainerInfoFromLabels); a
 *   sandbox needs `io.kubernetes.pod.uid`. Anything else is foreign and ignored.
 * - Sandboxes take part as containers of their pod: SANDBOX_READY (the proto3 default) is
 *   running, anything else exited. Containers: CONTAINER_RUNNING running, CONTAINER_EXITED
 *   exited, CREATED / UNKNOWN / other values unknown.
 * - Records are keyed by (pod uid, id), as upstream's per-pod records; within a pod the first
 *   container with an id wins and containers come before sandboxes (upstream getContainerState).
 * - Per record, old -> new: equal: nothing; running: ContainerStarted; exited: ContainerDied;
 *   unknown: ContainerChanged; gone: ContainerRemoved if it was exited, else ContainerDied then
 *   ContainerRemoved. Events are sorted by pod uid, container id (bytewise), emission order.
 * - `pods` holds each pod with events: name/namespace from its first sandbox of this relist
 *   (metadata, each field falling back to the io.kubernetes.pod.name/namespace labels), else
 *   from its first container's labels; a pod gone from this relist keeps its last known values.
 * - `counts`: labelled containers by CRI state; running pods = pods with a ready sandbox.
 * - Protobuf: proto3 merge rules (last scalar wins, repeated message fields merge, the last map
 *   entry for a key wins); enum values are the varint's low 32 bits. Groups (wire types 3/4),
 *   wire types 6/7, field number 0, tags above 32 bits, varints over 10 bytes and lengths past
 *   the end are errors, as is a decoded field with the wrong wire type. A malformed reply throws
 *   KubeletError('KTS_ERR_CRI_REPLY') and leaves the retained state unchanged.
 */
import { KubeletError } from '../errors.js';

export type RelistEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';

export interface RelistEvent {
  /** Pod UID. */
  podId: string;
  /** Container or sandbox id. */
  containerId: string;
  type: RelistEventType;
}

export interface RelistPodInfo {
  uid: string;
  name: string;
  namespace: string;
}

export interface RelistCounts {
  /** Pods with at least one ready sandbox (kubelet_running_pods). */
  runningPods: number;
  /** Labelled containers by CRI state (kubelet_running_containers{container_state}). */
  containers: { created: number; running: number; exited: number; unknown: number };
}

export interface RelistResult {
  /** Only the changes since the previous diff, sorted by pod uid, container id, then order. */
  events: RelistEvent[];
  /** Each pod that has events, by uid. */
  pods: Map<string, RelistPodInfo>;
  counts: RelistCounts;
}

export interface RelistDiffer {
  /**
   * Decodes the two raw replies (serialized ListPodSandboxResponse, ListContainersResponse; an
   * empty buffer is an empty list) and diffs them against the previous relist, which they then
   * replace. Throws KubeletError('KTS_ERR_CRI_REPLY') on malformed bytes, state unchanged.
   */
  diff(sandboxes: Uint8Array, containers: Uint8Array): RelistResult;
  /** A pod of the last two relists or with events in the last diff. */
  podInfo(uid: string): RelistPodInfo | undefined;
  /**
   * Upstream does not update a pod's record when its inspection failed, so the next relist
   * reports its changes again: puts these pods' records back as they were before the last
   * diff(). Call between diffs; a pod without events in the last diff is left alone.
   */
  keepPrevious(uids: Iterable<string>): void;
  /** Forgets the retained state: the next diff reports every container as new. */
  reset(): void;
  /** Frees the retained state; diff() afterwards throws. Idempotent. */
  close(): void;
}

export type CreateRelistDiffer = () => RelistDiffer;

export const RELIST_EVENT_TYPES: readonly RelistEventType[] = ['ContainerStarted', 'ContainerDied', 'ContainerRemoved', 'ContainerChanged'];

/** The error both implementations throw for malformed bytes. */
export function relistDecodeError(message: string): KubeletError {
  return new KubeletError('KTS_ERR_CRI_REPLY', `cannot decode ${message}`);
}

export function closedError(): Error {
  return new Error('RelistDiffer is closed');
}

// Strings are kept as latin1 (one char per byte) internally, so that keys compare and sort
// bytewise exactly as the native side does; they become UTF-8 only on the way out.
const ASCII = /^[\x00-\x7f]*$/;
function latin1ToUtf8(s: string): string {
  return ASCII.test(s) ? s : Buffer.from(s, 'latin1').toString('utf8');
}
function utf8ToLatin1(s: string): string {
  return ASCII.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
}

// ---- skim decoder --------------------------------------------------------------------------

const RUNNING = 0;
const EXITED = 1;
const UNKNOWN = 2;
const NON_EXISTENT = 3;

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
class Reader {
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

function decodeLabel(r: Reader, entryStart: number, entryEnd: number, l: Labels, ctx: Ctx): void {
  let ks = 0;
  let ke = 0;
  let vs = 0;
  let ve = 0;
  let pos = entryStart;
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
      if (bytesEqual(buf, ks, ke, POD_UID)) (l.uidStart = vs), (l.uidEnd = ve);
      break;
    case POD_NAME.length:
      if (bytesEqual(buf, ks, ke, POD_NAME)) (l.nameStart = vs), (l.nameEnd = ve);
      break;
    case POD_NAMESPACE.length:
      if (bytesEqual(buf, ks, ke, POD_NAMESPACE)) (l.nsStart = vs), (l.nsEnd = ve);
      break;
    case CONTAINER_NAME.length:
      if (bytesEqual(buf, ks, ke, CONTAINER_NAME)) l.cnameLen = ve - vs;
      break;
  }
}

/** A labelled sandbox or container of this relist. Name/namespace stay offsets until needed. */
interface Item {
  id: string;
  uid: string;
  state: number;
  /** Containers: 0 created, 1 running, 2 exited, 3 unknown. Sandboxes: 0 ready, 1 not. */
  cri: number;
  nameStart: number;
  nameEnd: number;
  nsStart: number;
  nsEnd: number;
  pod: Pod | undefined;
}

function decodeContainers(r: Reader, buf: Buffer, out: Item[], counts: number[]): void {
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
        decodeLabel(r, r.start, r.end, l, lctx);
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

function decodeSandboxes(r: Reader, buf: Buffer, out: Item[]): void {
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
            if (r.num === 1) (mnStart = r.start), (mnEnd = r.end);
            else (msStart = r.start), (msEnd = r.end);
          }
        }
      } else if (num === 3) {
        r.expect(0, ctx);
        state = r.low32();
      } else if (num === 5) {
        r.expect(2, ctx);
        decodeLabel(r, r.start, r.end, l, lctx);
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

// ---- the TypeScript twin ---------------------------------------------------------------------

interface Rec {
  state: number;
  seen: number;
}

interface Pod {
  uid: string;
  name: string;
  ns: string;
  recs: Map<string, Rec>;
  lastSeen: number;
  infoGen: number;
  infoPrio: number;
  readyGen: number;
  eventGen: number;
}

interface Undo {
  pod: Pod;
  id: string;
  /** The state before the diff; NON_EXISTENT: the record was added. */
  prev: number;
  applied: boolean;
}

interface PendingEvent {
  pod: Pod;
  id: string;
  type: number;
  seq: number;
}

const STARTED = 0;
const DIED = 1;
const REMOVED = 2;
const CHANGED = 3;

function latin1(buf: Buffer, start: number, end: number): string {
  return end > start ? (buf as RawBuffer).latin1Slice(start, end) : '';
}

class TsRelistDiffer implements RelistDiffer {
  #pods = new Map<string, Pod>();
  #liveRecs = 0;
  #gen = 1;
  #undo: Undo[] = [];
  #closed = false;
  readonly #reader = new Reader();

  diff(sandboxes: Uint8Array, containers: Uint8Array): RelistResult {
    if (this.#closed) throw closedError();
    const sbuf = asBuffer(sandboxes);
    const cbuf = asBuffer(containers);
    // 1. Decode everything first: a malformed reply leaves the retained state untouched.
    const sbItems: Item[] = [];
    const ctItems: Item[] = [];
    const counts = [0, 0, 0, 0];
    try {
      decodeSandboxes(this.#reader, sbuf, sbItems);
      decodeContainers(this.#reader, cbuf, ctItems, counts);
    } finally {
      this.#reader.buf = EMPTY;
    }

    // 2. Diff.
    const gen = ++this.#gen;
    const undo: Undo[] = (this.#undo = []);
    const events: PendingEvent[] = [];
    const pods = this.#pods;
    let seen = 0;
    const apply = (it: Item): void => {
      let pod = pods.get(it.uid);
      let rec = pod?.recs.get(it.id);
      if (pod && rec) {
        if (rec.seen !== gen) {
          rec.seen = gen;
          seen++;
          if (rec.state !== it.state) {
            undo.push({ pod, id: it.id, prev: rec.state, applied: false });
            emit(events, pod, it.id, rec.state, it.state, gen);
            rec.state = it.state;
          }
        }
      } else {
        if (!pod) {
          pod = { uid: it.uid, name: '', ns: '', recs: new Map(), lastSeen: 0, infoGen: 0, infoPrio: 0, readyGen: 0, eventGen: 0 };
          pods.set(it.uid, pod);
        }
        rec = { state: it.state, seen: gen };
        pod.recs.set(it.id, rec);
        this.#liveRecs++;
        seen++;
        undo.push({ pod, id: it.id, prev: NON_EXISTENT, applied: false });
        emit(events, pod, it.id, NON_EXISTENT, it.state, gen);
      }
      it.pod = pod;
      pod.lastSeen = gen;
    };
    for (const it of ctItems) apply(it);
    for (const it of sbItems) apply(it);

    // 3. Records not seen in this relist are gone.
    if (seen < this.#liveRecs) {
      for (const pod of pods.values()) {
        for (const [id, rec] of pod.recs) {
          if (rec.seen === gen) continue;
          undo.push({ pod, id, prev: rec.state, applied: false });
          emit(events, pod, id, rec.state, NON_EXISTENT, gen);
          pod.recs.delete(id);
          this.#liveRecs--;
        }
      }
    }

    // 4. Pod names and running pods: first sandbox, else first container.
    let runningPods = 0;
    for (const it of sbItems) {
      const pod = it.pod!;
      setInfo(pod, it, sbuf, 2, gen);
      if (it.cri === 0 && pod.readyGen !== gen) {
        pod.readyGen = gen;
        runningPods++;
      }
    }
    for (const it of ctItems) setInfo(it.pod!, it, cbuf, 1, gen);

    // 5. Output, then forget pods out of sight for two relists (and without events or records).
    events.sort(compareEvents);
    const result: RelistResult = {
      events: [],
      pods: new Map(),
      counts: { runningPods, containers: { created: counts[0]!, running: counts[1]!, exited: counts[2]!, unknown: counts[3]! } },
    };
    let lastPod: Pod | undefined;
    let podId = '';
    for (const e of events) {
      if (e.pod !== lastPod) {
        lastPod = e.pod;
        podId = latin1ToUtf8(e.pod.uid);
        result.pods.set(podId, { uid: podId, name: latin1ToUtf8(e.pod.name), namespace: latin1ToUtf8(e.pod.ns) });
      }
      result.events.push({ podId, containerId: latin1ToUtf8(e.id), type: RELIST_EVENT_TYPES[e.type]! });
    }
    for (const [uid, pod] of pods) {
      if (pod.recs.size === 0 && pod.lastSeen + 1 < gen && pod.eventGen !== gen) pods.delete(uid);
    }
    return result;
  }

  podInfo(uid: string): RelistPodInfo | undefined {
    const pod = this.#pods.get(utf8ToLatin1(uid));
    return pod ? { uid, name: latin1ToUtf8(pod.name), namespace: latin1ToUtf8(pod.ns) } : undefined;
  }

  keepPrevious(uids: Iterable<string>): void {
    if (this.#closed) return;
    for (const uid of uids) {
      const pod = this.#pods.get(utf8ToLatin1(uid));
      if (!pod) continue;
      for (const u of this.#undo) {
        if (u.pod !== pod || u.applied) continue;
        u.applied = true;
        if (u.prev === NON_EXISTENT) {
          if (pod.recs.delete(u.id)) this.#liveRecs--;
          continue;
        }
        const rec = pod.recs.get(u.id);
        if (rec) {
          rec.state = u.prev;
        } else {
          pod.recs.set(u.id, { state: u.prev, seen: 0 });
          this.#liveRecs++;
        }
      }
    }
  }

  reset(): void {
    this.#pods = new Map();
    this.#liveRecs = 0;
    this.#undo = [];
    this.#gen++;
  }

  close(): void {
    this.reset();
    this.#closed = true;
  }
}

const EMPTY = Buffer.alloc(0);

function asBuffer(b: Uint8Array): Buffer {
  if (!(b instanceof Uint8Array)) throw new TypeError('diff(sandboxes: Uint8Array, containers: Uint8Array)');
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function emit(events: PendingEvent[], pod: Pod, id: string, oldState: number, newState: number, gen: number): void {
  const seq = events.length;
  pod.eventGen = gen;
  switch (newState) {
    case RUNNING:
      events.push({ pod, id, type: STARTED, seq });
      break;
    case EXITED:
      events.push({ pod, id, type: DIED, seq });
      break;
    case UNKNOWN:
      events.push({ pod, id, type: CHANGED, seq });
      break;
    default: // gone
      if (oldState !== EXITED) events.push({ pod, id, type: DIED, seq });
      events.push({ pod, id, type: REMOVED, seq: seq + 1 });
  }
}

function compareEvents(a: PendingEvent, b: PendingEvent): number {
  if (a.pod !== b.pod) {
    if (a.pod.uid < b.pod.uid) return -1;
    if (a.pod.uid > b.pod.uid) return 1;
  }
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return a.seq - b.seq;
}

function setInfo(pod: Pod, it: Item, buf: Buffer, prio: number, gen: number): void {
  if (pod.infoGen === gen && pod.infoPrio >= prio) return;
  pod.infoGen = gen;
  pod.infoPrio = prio;
  pod.name = latin1(buf, it.nameStart, it.nameEnd);
  pod.ns = latin1(buf, it.nsStart, it.nsEnd);
}

/** The TypeScript twin. */
export const createTsRelistDiffer: CreateRelistDiffer = () => new TsRelistDiffer();
