/**
 * Per-key exponential back-off with upstream's flowcontrol.Backoff semantics (client-go
 * util/flowcontrol), used for CrashLoopBackOff (src/kuberuntime, keyed by pod + container + spec
 * hash) and ImagePullBackOff (src/images, pod + image):
 *
 *  - the first event for a key creates an entry of `initial` and is not delayed (`next` is called
 *    when a restart is allowed; the check before it finds no entry);
 *  - every later `next` doubles the delay up to `max`;
 *  - an entry whose last update is more than 2×max before the event is stale, so a container that
 *    ran cleanly for 10 minutes (with the 5 minute cap) starts over at `initial`.
 *
 * No jitter: upstream creates both kubelet back-offs without it.
 */
import type { Clock } from './clock.js';

/** Upstream kubelet: backOffPeriod 10 s, MaxContainerBackOff 300 s. */
export const DEFAULT_BACKOFF_INITIAL_MS = 10_000;
export const DEFAULT_BACKOFF_MAX_MS = 300_000;

/** A back-off's first delay and cap, as the configuration and the tests give them. */
export interface BackOffSettings {
  initialMs: number;
  maxMs: number;
}

/** The settings with upstream's defaults filled in; a RangeError when max is below initial. */
export function backOffSettings(s: Partial<BackOffSettings> | undefined): BackOffSettings {
  const initialMs = s?.initialMs ?? DEFAULT_BACKOFF_INITIAL_MS;
  const maxMs = s?.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  if (!(initialMs > 0) || !(maxMs >= initialMs))
    throw new RangeError(`back-off needs 0 < initialMs <= maxMs, got ${initialMs} / ${maxMs}`);
  return { initialMs, maxMs };
}

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

/** Read-only view: what computePodActions may ask without changing anything. */
export interface BackoffView {
  /** Current delay for key in ms (0 when the key has no entry). */
  get(key: string): number;
  /** True while less than the key's delay has passed since eventTime (ms epoch). */
  isInBackOffSince(key: string, eventTime: number): boolean;
}

export class Backoff implements BackoffView {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly initialMs = DEFAULT_BACKOFF_INITIAL_MS,
    private readonly maxMs = DEFAULT_BACKOFF_MAX_MS,
  ) {}

  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** The injected clock's time, for events that happen now. */
  now(): number {
    return this.clock.now();
  }

  /** Records an event (a restart or a failed pull) at eventTime and grows the delay. */
  next(key: string, eventTime: number): void {
    const e = this.entries.get(key);
    if (!e || this.hasExpired(eventTime, e.lastUpdate)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: this.clock.now() });
      return;
    }
    e.backoffMs = Math.min(e.backoffMs * 2, this.maxMs);
    e.lastUpdate = this.clock.now();
  }

  isInBackOffSince(key: string, eventTime: number): boolean {
    const e = this.entries.get(key);
    if (!e || this.hasExpired(eventTime, e.lastUpdate)) return false;
    return this.clock.now() - eventTime < e.backoffMs;
  }

  /** True while less than the delay has passed since the last `next` (image pulls). */
  isInBackOffSinceUpdate(key: string): boolean {
    const e = this.entries.get(key);
    if (!e || this.hasExpired(this.clock.now(), e.lastUpdate)) return false;
    return this.clock.now() - e.lastUpdate < e.backoffMs;
  }

  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Drops entries that can no longer delay anything (upstream Backoff.GC). */
  gc(): void {
    const now = this.clock.now();
    for (const [key, e] of this.entries) if (this.hasExpired(now, e.lastUpdate)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private hasExpired(eventTime: number, lastUpdate: number): boolean {
    return eventTime - lastUpdate > 2 * this.maxMs;
  }
}

/** Go's time.Duration.String() for whole and fractional seconds: "10s", "1m20s", "5m0s", "1.5s". */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const totalSeconds = ms / 1000;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds - h * 3600 - m * 60;
  const sec = `${Number.isInteger(s) ? s : Number(s.toFixed(3))}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}
