/**
 * Kubernetes events (core/v1 Event) as the kubelet raises them: upstream's record.EventRecorder
 * reduced to what we use. Subsystems depend on this interface only; the composition root picks
 * the sink (the log in standalone mode, the apiserver with rate limits and aggregation when a
 * kubeconfig is given).
 */

/** The object an event is about (core/v1 ObjectReference, the fields the kubelet sets). */
export interface ObjectReference {
  kind: 'Pod' | 'Node';
  name: string;
  namespace?: string;
  uid?: string;
  apiVersion?: string;
  /** For container-scoped pod events: `spec.containers{name}` (upstream's FieldPath). */
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

/** What an event says, apart from what it is about. */
export type EventFields = Pick<KubeEvent, 'type' | 'reason' | 'message'>;

export interface KubeEvent {
  involvedObject: ObjectReference;
  type: EventType;
  /** Upstream reason strings: Pulling, Pulled, Created, Started, Killing, BackOff, Unhealthy, OOMKilling, Evicted, ... */
  reason: string;
  message: string;
  /** When it happened (the recorder's clock). */
  timestamp: Date;
}

export interface EventRecorder {
  /** Record one event. Never throws and never blocks the caller: sinks queue and drop under pressure. */
  event(ref: ObjectReference, type: EventType, reason: string, message: string): void;
}

/** Where recorded events go (log, apiserver). */
export interface EventSink {
  write(event: KubeEvent): void;
}
