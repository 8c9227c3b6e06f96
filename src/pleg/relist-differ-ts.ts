/**
 * The TypeScript twin of the relist differ (createTsRelistDiffer): the retained records of the
 * last relist, per pod, and the diff that turns a new relist into events, upstream's
 * generateEvents (seed 003). Same contract and semantics as the native differ; see
 * relist-types.ts. The bytes are decoded first (relist-decoder.ts), so a malformed reply leaves
 * the retained state untouched.
 */
import {
  closedError,
  RELIST_EVENT_TYPES,
  type CreateRelistDiffer,
  type RelistDiffer,
  type RelistPodInfo,
  type RelistResult,
} from './relist-types.js';
import {
  decodeContainers,
  decodeSandboxes,
  EXITED,
  latin1,
  latin1ToUtf8,
  NON_EXISTENT,
  Reader,
  RUNNING,
  UNKNOWN,
  utf8ToLatin1,
  type Item as DecodedItem,
} from './relist-decoder.js';

type Item = DecodedItem<Pod>;

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
          pod = {
            uid: it.uid,
            name: '',
            ns: '',
            recs: new Map(),
            lastSeen: 0,
            infoGen: 0,
            infoPrio: 0,
            readyGen: 0,
            eventGen: 0,
          };
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
      counts: {
        runningPods,
        containers: { created: counts[0]!, running: counts[1]!, exited: counts[2]!, unknown: counts[3]! },
      },
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

// eslint-disable-next-line @typescript-eslint/max-params -- per container per relist: no options object to allocate
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

// eslint-disable-next-line @typescript-eslint/max-params -- per container per relist: no options object to allocate
function setInfo(pod: Pod, it: Item, buf: Buffer, prio: number, gen: number): void {
  if (pod.infoGen === gen && pod.infoPrio >= prio) return;
  pod.infoGen = gen;
  pod.infoPrio = prio;
  pod.name = latin1(buf, it.nameStart, it.nameEnd);
  pod.ns = latin1(buf, it.nsStart, it.nsEnd);
}

/** The TypeScript twin. */
export const createTsRelistDiffer: CreateRelistDiffer = () => new TsRelistDiffer();
