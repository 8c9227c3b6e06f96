/**
 * upstream client-go record.EventCorrelator, the two parts the sink's own dedupe (a repeat
 * patches count/lastTimestamp) does not cover:
 *  - aggregation (EventAggregatorByReasonFunc): events of one object with the same type and
 *    reason but different messages are each a new Event; from the 10th distinct message within
 *    10 min they become ONE Event "(combined from similar events): <latest message>" whose
 *    count is patched, so a pod cycling through messages does not make an Event per message;
 *  - the spam filter (EventSourceObjectSpamFilter): per involved object a token bucket of 25
 *    events refilled at one per 5 min; past it the event (new or repeat) is not written at all.
 * Both are keyed by the involved object, so one noisy pod never silences another.
 */
import type { KubeEvent } from './types.js';

export const AGGREGATE_MAX_EVENTS = 10;
export const AGGREGATE_WINDOW_MS = 600_000;
export const SPAM_BURST = 25;
export const SPAM_REFILL_MS = 300_000;
const CACHE_ENTRIES = 4096; // upstream's LRU size
export const COMBINED_PREFIX = '(combined from similar events): ';

export interface Correlated {
  /** The message to write (the aggregate's prefix once aggregated). */
  message: string;
  /** The dedupe key: equal keys are one Event whose count is patched. */
  key: string;
}

interface Aggregate {
  messages: Set<string>;
  last: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A Map used as a bounded cache: the oldest entry goes when it is full. */
function remember<V>(m: Map<string, V>, k: string, v: V): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > CACHE_ENTRIES) m.delete(m.keys().next().value!);
}

export class EventCorrelator {
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly source: { component: string; host: string }) {}

  /** What to write for `ev`, or undefined when the spam filter drops it. */
  correlate(ev: KubeEvent): Correlated | undefined {
    const now = ev.timestamp.getTime();
    const o = ev.involvedObject;
    const object = [this.source.component, this.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion];
    const aggregateKey = JSON.stringify([...object, ev.type, ev.reason]);
    let agg = this.aggregates.get(aggregateKey);
    if (!agg || now - agg.last > AGGREGATE_WINDOW_MS) agg = { messages: new Set(), last: now };
    agg.messages.add(ev.message);
    agg.last = now;
    remember(this.aggregates, aggregateKey, agg);
    let out: Correlated = {
      message: ev.message,
      key: JSON.stringify([...object, o.fieldPath, ev.type, ev.reason, ev.message]),
    };
    if (agg.messages.size >= AGGREGATE_MAX_EVENTS) {
      // Do not grow the set past the threshold (upstream pops one).
      agg.messages.delete(agg.messages.values().next().value!);
      out = { message: `${COMBINED_PREFIX}${ev.message}`, key: aggregateKey };
    }
    // upstream filters after aggregating: a dropped event still counts towards its aggregate.
    return this.allow(JSON.stringify(object), now) ? out : undefined;
  }

  /** The per-object token bucket: SPAM_BURST, one more every SPAM_REFILL_MS. */
  private allow(key: string, now: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) / SPAM_REFILL_MS);
    b.at = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    remember(this.buckets, key, b);
    return ok;
  }
}
