/**
 * The apiserver event sink (upstream record.EventBroadcaster + EventCorrelator, reduced): events
 * become core/v1 Events posted to the involved object's namespace. A repeat of the same event
 * (same object, type, reason and message) within the aggregation window is not a new object:
 * the existing Event's count and lastTimestamp are patched. Before that, upstream's correlator
 * (correlator.ts) folds many messages of one object and reason into one Event and drops an
 * object's events past 25 (one more per 5 min). Requests go through a token bucket
 * of eventRecordQPS / eventBurst (50 / 100); writes queue in a bounded buffer and the oldest are
 * dropped when it is full, so a burst never blocks or grows the agent.
 */
import type { ApiClient } from '../apiclient/types.js';
import { TokenBucket } from '../apiclient/rate-limiter.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { apiTime } from '../util/time.js';
import type { EventSink, KubeEvent } from './types.js';
import { EventCorrelator } from './correlator.js';

export interface ApiserverSinkOptions {
  client: ApiClient;
  nodeName: string;
  /** eventRecordQPS (50; 0 = unlimited) and eventBurst (100). */
  qps?: number;
  burst?: number;
  /** Queue bound (default 1000). */
  maxQueue?: number;
  /** Repeats within this window update the same Event (default 10 min, as upstream's cache). */
  aggregateWindowMs?: number;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
  lastSeen: number;
}

export class ApiserverEventSink implements EventSink {
  private readonly queue: KubeEvent[] = [];
  private readonly seen = new Map<string, Seen>();
  private readonly bucket: TokenBucket;
  private draining = false;
  private readonly correlator: EventCorrelator;
  /** Events dropped because the queue was full (for tests and logs). */
  dropped = 0;
  /** Events the spam filter dropped (an object's events past the burst). */
  filtered = 0;
  posted = 0;

  constructor(private readonly opts: ApiserverSinkOptions) {
    this.bucket = new TokenBucket(opts.qps ?? 50, opts.burst ?? 100);
    this.correlator = new EventCorrelator({ component: 'kubelet', host: opts.nodeName });
  }

  write(event: KubeEvent): void {
    this.queue.push(event);
    if (this.queue.length > (this.opts.maxQueue ?? 1000)) {
      this.queue.shift();
      this.dropped++;
    }
    if (!this.draining) {
      this.draining = true;
      void this.drain().finally(() => (this.draining = false));
    }
  }

  private async drain(): Promise<void> {
    for (let ev = this.queue.shift(); ev; ev = this.queue.shift()) {
      const correlated = this.correlator.correlate(ev);
      if (!correlated) {
        this.filtered++;
        continue;
      }
      ev = { ...ev, message: correlated.message };
      await this.bucket.acquire();
      try {
        await this.post(ev, correlated.key);
        this.posted++;
      } catch (err) {
        log('events').debug(
          { err: errorMessage(err), reason: ev.reason },
          'Event not written to the API server; dropped',
        );
      }
    }
  }

  private async post(ev: KubeEvent, key: string): Promise<void> {
    const ref = ev.involvedObject;
    const namespace = ref.namespace ?? 'default';
    const now = ev.timestamp.getTime();
    const ts = apiTime(now).toJSON();
    const window = this.opts.aggregateWindowMs ?? 600_000;
    const prior = this.seen.get(key);
    const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    if (prior && now - prior.lastSeen < window) {
      prior.count++;
      prior.lastSeen = now;
      await this.opts.client.request({
        method: 'PATCH',
        path: `${base}/${encodeURIComponent(prior.name)}`,
        contentType: 'application/strategic-merge-patch+json',
        body: { count: prior.count, lastTimestamp: ts, message: ev.message },
      });
      return;
    }
    const name = `${ref.name}.${(BigInt(now) * 1_000_000n + BigInt(this.posted % 1_000_000)).toString(16)}`;
    await this.opts.client.request({
      method: 'POST',
      path: base,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          kind: ref.kind,
          name: ref.name,
          namespace: ref.namespace,
          uid: ref.uid,
          apiVersion: ref.apiVersion ?? 'v1',
          fieldPath: ref.fieldPath,
        },
        reason: ev.reason,
        message: ev.message,
        type: ev.type,
        count: 1,
        firstTimestamp: ts,
        lastTimestamp: ts,
        source: { component: 'kubelet', host: this.opts.nodeName },
        reportingComponent: 'kubelet',
        reportingInstance: this.opts.nodeName,
      },
    });
    this.seen.set(key, { name, namespace, count: 1, firstTimestamp: ts, lastSeen: now });
    if (this.seen.size > 4096) this.seen.delete(this.seen.keys().next().value!);
  }
}

export function createApiserverSink(opts: ApiserverSinkOptions): ApiserverEventSink {
  return new ApiserverEventSink(opts);
}
