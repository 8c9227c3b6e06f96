/**
 * A hostile kube-apiserver: the test apiserver (test-apiserver.ts, real wire protocol) with one
 * mounted handler that, while a mode is set, answers the requests it targets (by default LIST
 * and watch of /api/v1/pods) as an attacker or a man in the middle would. Every other request
 * (node status, lease, events) is served normally. Big bodies are generated lazily with
 * backpressure, never held in memory; each stream ends when the client goes or at its bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestApiserver, type TestApiserver, type TestApiserverOptions } from './test-apiserver.js';

export type HostileMode =
  /** LIST: a 200 MB PodList streamed as fast as the client reads; watch: ERROR 410 (forces a LIST). */
  | 'huge-list'
  /** watch: one endless line without a newline (up to 200 MB). */
  | 'endless-line'
  /** LIST: the body one byte per 100 ms; watch: ERROR 410. */
  | 'slow-drip'
  /** watch: a line that is not JSON, then the stream stays open. */
  | 'garbage'
  /** watch: 200 and headers, then nothing, ever. */
  | 'silent-watch';

export interface HostileApiserver extends TestApiserver {
  /** The current mode; undefined = an honest server. */
  mode: HostileMode | undefined;
  /** Which requests the mode applies to (default: the collection /api/v1/pods). */
  targets: (path: string) => boolean;
  /** Requests the mode answered. */
  hostileRequests: number;
  /** Ends every watch of the targeted paths now open (honest or not), so that the client's next one meets the current mode. */
  dropWatches(): void;
}

const HUGE_BYTES = 200 * 1024 * 1024;
const POD = Buffer.from(`{"metadata":{"name":"${'x'.repeat(40)}","namespace":"hostile"}},`);

/** Writes `next()` until it returns undefined or the client goes, waiting for drain between writes. */
async function pump(res: ServerResponse, next: () => Buffer | undefined, gapMs = 0): Promise<void> {
  for (let chunk = next(); chunk && !res.destroyed; chunk = next()) {
    const flushed = res.write(chunk);
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    else if (!flushed)
      await new Promise((r) => {
        res.once('drain', r);
        res.once('close', r);
      });
  }
  if (!res.destroyed) res.end();
}

/** `total` bytes of `unit` repeated, in ~1 MiB chunks. */
function repeated(unit: Buffer, total: number): () => Buffer | undefined {
  const chunk = Buffer.concat(Array(Math.ceil((1 << 20) / unit.length)).fill(unit));
  let sent = 0;
  return () => (sent >= total ? undefined : ((sent += chunk.length), chunk));
}

const gone = `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'hostile: too old resource version' } })}\n`;

function answer(mode: HostileMode, watch: boolean, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  const listHead = Buffer.from('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[');
  switch (mode) {
    case 'huge-list':
    case 'slow-drip': {
      if (watch) return void res.end(gone);
      if (mode === 'huge-list') {
        res.write(listHead);
        return void pump(res, repeated(POD, HUGE_BYTES));
      }
      // 6000 bytes: ten minutes of drip, longer than any deadline a client should allow.
      let i = 0;
      const bytes = Buffer.concat([listHead, ...Array(Math.ceil(6000 / POD.length)).fill(POD)]);
      return void pump(res, () => (i < bytes.length ? bytes.subarray(i, ++i) : undefined), 100);
    }
    case 'endless-line':
      res.write('{"type":"ADDED","object":{"metadata":{"name":"');
      return void pump(res, repeated(Buffer.from('a'), HUGE_BYTES));
    case 'garbage':
      return void res.write('{"type":"ADDED","object":{this is not json\n');
    case 'silent-watch':
      return void res.flushHeaders();
  }
}

export async function startHostileApiserver(opts: TestApiserverOptions = {}): Promise<HostileApiserver> {
  // eslint-disable-next-line prefer-const -- set once the server is up; the handler may run before
  let h: HostileApiserver | undefined;
  const openWatches = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (req.method !== 'GET' || !h?.targets(url.pathname)) return false;
    const watch = url.searchParams.get('watch') === 'true';
    if (watch) {
      openWatches.add(res);
      res.once('close', () => openWatches.delete(res));
    }
    if (!h.mode) return false;
    // The watch-only modes let LISTs through.
    if (!watch && (h.mode === 'endless-line' || h.mode === 'garbage' || h.mode === 'silent-watch')) return false;
    h.hostileRequests++;
    answer(h.mode, watch, res);
    return true;
  };
  const api = await startTestApiserver({ ...opts, extraHandlers: [handler, ...(opts.extraHandlers ?? [])] });
  h = Object.assign(api, {
    mode: undefined,
    targets: (p: string) => p === '/api/v1/pods',
    hostileRequests: 0,
    dropWatches: () => {
      for (const res of openWatches) res.destroy();
    },
  });
  return h;
}
