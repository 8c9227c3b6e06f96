/**
 * RelistDiffer on the addon's RelistDiffer (native/src/pleg.cc): decode + diff + retained state
 * in C++, one call per relist; only the events (and their pods) come back, as one flat Buffer
 * decoded here. Same contract as the TypeScript twin (relist-differ-ts.ts).
 */
import {
  closedError,
  relistDecodeError,
  RELIST_EVENT_TYPES,
  type CreateRelistDiffer,
  type RelistDiffer,
  type RelistEvent,
  type RelistPodInfo,
  type RelistResult,
} from './relist-types.js';

/** The addon's class (native/src/addon.cc). Output layout: native/src/pleg.h. */
export interface NativeRelistDiffer {
  /** The result Buffer, or the decode error's message (retained state unchanged). */
  diff(sandboxes: Uint8Array, containers: Uint8Array): Buffer | string;
  podInfo(uid: string): [string, string] | undefined;
  keepPrevious(uids: string[]): void;
  reset(): void;
  close(): void;
}
export type NativeRelistDifferCtor = new () => NativeRelistDiffer;

const HEADER = 28;

/** Decodes the addon's output (layout in native/src/pleg.h). */
function decodeNativeResult(buf: Buffer): RelistResult {
  const nPods = buf.readUInt32LE(20);
  const nEvents = buf.readUInt32LE(24);
  const result: RelistResult = {
    events: new Array<RelistEvent>(nEvents),
    pods: new Map(),
    counts: {
      runningPods: buf.readUInt32LE(0),
      containers: {
        created: buf.readUInt32LE(4),
        running: buf.readUInt32LE(8),
        exited: buf.readUInt32LE(12),
        unknown: buf.readUInt32LE(16),
      },
    },
  };
  const podIds: string[] = new Array<string>(nPods);
  let off = HEADER;
  for (let i = 0; i < nPods; i++) {
    const uidLen = buf.readUInt32LE(off);
    const nameLen = buf.readUInt32LE(off + 4);
    const nsLen = buf.readUInt32LE(off + 8);
    off += 12;
    const uid = buf.toString('utf8', off, (off += uidLen));
    const name = buf.toString('utf8', off, (off += nameLen));
    const namespace = buf.toString('utf8', off, (off += nsLen));
    podIds[i] = uid;
    result.pods.set(uid, { uid, name, namespace });
  }
  for (let i = 0; i < nEvents; i++) {
    const type = RELIST_EVENT_TYPES[buf[off]! - 1]!;
    const podId = podIds[buf.readUInt32LE(off + 1)]!;
    const idLen = buf.readUInt32LE(off + 5);
    off += 9;
    result.events[i] = { podId, containerId: buf.toString('utf8', off, (off += idLen)), type };
  }
  return result;
}

class NativeRelistDifferImpl implements RelistDiffer {
  readonly #native: NativeRelistDiffer;
  #closed = false;

  constructor(Ctor: NativeRelistDifferCtor) {
    this.#native = new Ctor();
  }

  diff(sandboxes: Uint8Array, containers: Uint8Array): RelistResult {
    if (this.#closed) throw closedError();
    const out = this.#native.diff(sandboxes, containers);
    if (typeof out === 'string') throw relistDecodeError(out);
    return decodeNativeResult(out);
  }

  podInfo(uid: string): RelistPodInfo | undefined {
    if (this.#closed) return undefined;
    const info = this.#native.podInfo(uid);
    return info ? { uid, name: info[0], namespace: info[1] } : undefined;
  }

  keepPrevious(uids: Iterable<string>): void {
    if (this.#closed) return;
    this.#native.keepPrevious([...uids]);
  }

  reset(): void {
    if (!this.#closed) this.#native.reset();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#native.close();
  }
}

export function nativeRelistDifferFactory(Ctor: NativeRelistDifferCtor): CreateRelistDiffer {
  return () => new NativeRelistDifferImpl(Ctor);
}
