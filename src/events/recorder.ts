/**
 * The recorder every subsystem is handed. It stamps events, logs them (so standalone mode still
 * shows what upstream would post to the apiserver) and fans them out to sinks, keeping a short
 * ring of recent events for tests and diagnostics.
 */
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import type { EventRecorder, EventSink, EventType, KubeEvent, ObjectReference } from './types.js';

const RECENT_LIMIT = 1000;

export class Recorder implements EventRecorder {
  private readonly sinks: EventSink[] = [];
  private readonly recentEvents: KubeEvent[] = [];

  constructor(private readonly clock: Clock = realClock) {}

  addSink(sink: EventSink): void {
    this.sinks.push(sink);
  }

  event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    const ev: KubeEvent = { involvedObject: ref, type, reason, message, timestamp: new Date(this.clock.now()) };
    const obj = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    // As upstream's StartStructuredLogging: a fixed "Event occurred" with the event's fields as
    // pairs, so the event message appears once, as `message`, and log pipelines can group lines.
    log('events')[type === 'Warning' ? 'warn' : 'info'](
      { object: `${ref.kind}/${obj}`, fieldPath: ref.fieldPath, kind: ref.kind, type, reason, message },
      'Event occurred',
    );
    this.recentEvents.push(ev);
    if (this.recentEvents.length > RECENT_LIMIT) this.recentEvents.splice(0, this.recentEvents.length - RECENT_LIMIT);
    for (const sink of this.sinks) {
      try {
        sink.write(ev);
      } catch (err) {
        log('events').warn({ err: String(err) }, 'event sink failed; event dropped for that sink');
      }
    }
  }

  /** Most recent events first-to-last (bounded); for tests and diagnostics. */
  recent(): readonly KubeEvent[] {
    return this.recentEvents;
  }
}

export function createRecorder(clock?: Clock): Recorder {
  return new Recorder(clock);
}
