/**
 * The manifest URL source (upstream pkg/kubelet/config/http.go, seed 000's sourceURL):
 * staticPodURL is fetched every httpCheckFrequency; its body is one v1 Pod or a v1 PodList, in
 * JSON or YAML. Each good read pushes a SET of the source's complete pod list.
 *
 *  - Unchanged bytes are skipped (no decode, no push).
 *  - An empty body is a successful read of "no pods": the source becomes seen, and pods it
 *    served earlier are removed.
 *  - A failure (connection, HTTP status, oversized body, a body that does not decode) pushes
 *    nothing: the pods already running from this source keep running until a successful read
 *    says otherwise. The first few failures in a row are logged as errors, the rest at debug
 *    level, and a recovery is logged once.
 *  - A body larger than `maxBytes` (default 10 MiB) is refused without being read further.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { KubeletError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { decodeUrlManifest } from './manifest.js';
import type { PodSource, PodUpdate } from './types.js';
import { HTTPSource } from './types.js';

export interface UrlSourceOptions {
  /** staticPodURL (http:// or https://). */
  url: string;
  /** staticPodURLHeader: header name → values, each sent in order. */
  headers?: Readonly<Record<string, readonly string[]>>;
  nodeName: string;
  /** httpCheckFrequency in ms (default 20 000). */
  periodMs?: number;
  /** Largest body accepted, in bytes (default 10 MiB). */
  maxBytes?: number;
  /** Deadline of one fetch, in ms (default 10 s, as upstream's http.Client timeout). */
  timeoutMs?: number;
  /** Consecutive failures logged as errors before the source goes quiet (default 3). */
  loudFailures?: number;
  clock?: Clock;
  logger?: Logger;
}

export interface ManifestUrlSource extends PodSource {
  /** Fetches once now; resolves when the result was pushed (or the failure logged). */
  sync(): Promise<void>;
}

export const DefaultHttpCheckFrequencyMs = 20_000;
export const DefaultMaxManifestBytes = 10 * 1024 * 1024;

/** A failed read, with the reason logged. */
class UrlReadError extends KubeletError {
  constructor(message: string) {
    super('KTS_ERR_MANIFEST_URL', message);
  }
}

class UrlSourceImpl implements ManifestUrlSource {
  private readonly opts: Required<Omit<UrlSourceOptions, 'headers' | 'clock' | 'logger'>> & {
    headers: Readonly<Record<string, readonly string[]>>;
  };
  private readonly clock: Clock;
  private readonly logger: Logger;
  private push: ((u: PodUpdate) => void) | undefined;
  private timer: { cancel(): void } | undefined;
  private readonly abort = new AbortController();
  private stopped = false;
  private lastKey: string | undefined;
  private failures = 0;
  private running: Promise<void> | undefined;

  constructor(opts: UrlSourceOptions) {
    this.opts = {
      url: opts.url,
      headers: opts.headers ?? {},
      nodeName: opts.nodeName,
      periodMs: opts.periodMs && opts.periodMs > 0 ? opts.periodMs : DefaultHttpCheckFrequencyMs,
      maxBytes: opts.maxBytes ?? DefaultMaxManifestBytes,
      timeoutMs: opts.timeoutMs ?? 10_000,
      loudFailures: opts.loudFailures ?? 3,
    };
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? log('podconfig').child({ source: HTTPSource });
  }

  start(push: (update: PodUpdate) => void): void {
    if (this.push) throw new TypeError('the URL source was already started');
    this.push = push;
    this.logger.info({ url: this.opts.url, periodMs: this.opts.periodMs }, 'watching manifest URL');
    void this.tick();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.timer?.cancel();
    this.abort.abort();
  }

  sync(): Promise<void> {
    this.running ??= this.readOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async tick(): Promise<void> {
    await this.sync();
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.tick(), this.opts.periodMs);
  }

  private async readOnce(): Promise<void> {
    let body: Buffer;
    try {
      body = await this.fetchBody();
    } catch (err) {
      if (!this.stopped) this.failed(err);
      return;
    }
    if (this.stopped) return;
    const key = createHash('sha256').update(body).digest('hex');
    if (key === this.lastKey) {
      this.recovered();
      return;
    }
    const text = body.toString('utf8');
    let pods;
    try {
      pods = text.trim() === '' ? [] : decodeUrlManifest(text, { url: this.opts.url, nodeName: this.opts.nodeName });
    } catch (err) {
      // Not remembered as lastKey: the same bad bytes are decoded (and counted) again next time.
      this.failed(err);
      return;
    }
    this.recovered();
    this.lastKey = key;
    this.logger.info({ url: this.opts.url, pods: pods.map((p) => p.metadata?.name) }, 'manifest URL content changed');
    this.push?.({ op: 'SET', pods, source: HTTPSource });
  }

  private async fetchBody(): Promise<Buffer> {
    const headers = new Headers();
    for (const [name, values] of Object.entries(this.opts.headers)) for (const v of values) headers.append(name, v);
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    const res = await fetch(this.opts.url, { headers, signal, redirect: 'follow' });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new UrlReadError(`${this.opts.url}: HTTP ${res.status} ${res.statusText}`);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > this.opts.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new UrlReadError(
        `${this.opts.url}: body of ${declared} bytes is larger than the ${this.opts.maxBytes}-byte limit`,
      );
    }
    return this.readBounded(res);
  }

  /** Reads the body chunk by chunk and gives up as soon as it passes maxBytes. */
  private async readBounded(res: Response): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    if (!res.body) return Buffer.alloc(0);
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > this.opts.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new UrlReadError(`${this.opts.url}: body is larger than the ${this.opts.maxBytes}-byte limit`);
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    }
    return Buffer.concat(chunks);
  }

  private failed(err: unknown): void {
    this.failures++;
    const fields = { url: this.opts.url, failures: this.failures, err: errorMessage(err) };
    if (this.failures <= this.opts.loudFailures) {
      const quiet = this.failures === this.opts.loudFailures ? '; further failures are logged at debug level' : '';
      this.logger.error(fields, `unable to read manifest URL; pods from it keep running${quiet}`);
    } else {
      this.logger.debug(fields, 'unable to read manifest URL');
    }
  }

  private recovered(): void {
    if (this.failures > 0)
      this.logger.info({ url: this.opts.url, failures: this.failures }, 'manifest URL readable again');
    this.failures = 0;
  }
}

/** Creates the manifest URL source (register it under the name 'http'); PodConfig starts it. */
export function newSourceURL(opts: UrlSourceOptions): ManifestUrlSource {
  return new UrlSourceImpl(opts);
}
