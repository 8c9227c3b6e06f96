/**
 * CRI container events as a relist trigger (our take on upstream's EventedPLEG).
 *
 * Up to 1.35 upstream's evented PLEG wrote the event's pod status straight into the cache; since
 * then it is a hint to relist, as ours has always been: a stopped container's pod is relisted at
 * once (generic.ts), any other event relists the node. The cache and events keep one code path. When the runtime does
 * not offer GetContainerEvents (containerd 1.6 answers Unimplemented) the trigger says so once
 * and stays off; the periodic relist and the cgroup exit watcher carry on. Other stream failures
 * (runtime restart) resubscribe with back-off, as upstream retries before falling back.
 */
import type { CriError } from '../errors.js';
import type { ContainerEvent } from '../cri/types.js';
import { metrics } from '../metrics/index.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import type { CriEventsState } from './types.js';

/** RuntimeService.getContainerEvents (src/cri), or a test double. */
export type SubscribeContainerEvents = (
  onEvent: (e: ContainerEvent) => void,
  onError: (err: CriError) => void,
) => { cancel(): void };

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 30_000;

export class CriEventTrigger {
  private current: { cancel(): void } | undefined;
  private retryTimer: { cancel(): void } | undefined;
  private retryDelay = RETRY_BASE_MS;
  private stateValue: CriEventsState = 'stopped';

  constructor(
    private readonly subscribe: SubscribeContainerEvents,
    /** Called for every event: the PLEG relists the pod's node view at once. */
    private readonly onEvent: (e: ContainerEvent) => void,
    private readonly clock: Clock = realClock,
  ) {}

  start(): void {
    if (this.stateValue !== 'stopped') return;
    this.connect();
  }

  stop(): void {
    this.stateValue = 'stopped';
    this.retryTimer?.cancel();
    this.current?.cancel();
    this.current = undefined;
  }

  state(): CriEventsState {
    return this.stateValue;
  }

  private connect(): void {
    this.stateValue = 'connecting';
    this.current = this.subscribe(
      (e) => this.received(e),
      (err) => this.failed(err),
    );
  }

  private received(e: ContainerEvent): void {
    if (this.stateValue === 'stopped') return;
    if (this.stateValue !== 'active') {
      // The first message proves the stream works (there is no separate "subscribed" signal).
      this.stateValue = 'active';
      this.retryDelay = RETRY_BASE_MS;
      metrics.eventedPlegConnectionSuccess.inc();
      log('pleg').info('CRI container events stream active: relists follow runtime events');
    }
    this.onEvent(e);
  }

  private failed(err: CriError): void {
    if (this.stateValue === 'stopped') return;
    this.current = undefined;
    if (err.code === 'KTS_ERR_CRI_UNIMPLEMENTED') {
      this.stateValue = 'unsupported';
      log('pleg').info(
        'Runtime does not offer GetContainerEvents; relying on the periodic relist and cgroup exit events',
      );
      return;
    }
    metrics.eventedPlegConnectionError.inc();
    this.stateValue = 'retrying';
    log('pleg').warn(
      { err: err.message, retryInMs: this.retryDelay },
      'CRI container events stream failed; resubscribing',
    );
    this.retryTimer = this.clock.setTimeout(() => {
      if (this.stateValue === 'retrying') this.connect();
    }, this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
  }
}
