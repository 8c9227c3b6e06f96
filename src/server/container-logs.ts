/**
 * `GET /containerLogs/{namespace}/{pod}/{container}` (upstream server.go getContainerLogs): the
 * query is core/v1 PodLogOptions (follow, tailLines, timestamps, sinceSeconds, sinceTime,
 * limitBytes, previous). The body streams (chunked) while following and ends when the container
 * ends. A self-contained handler over node:http so any server can mount it; it belongs on the
 * authenticated port, never on the read-only one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Container, Pod } from '../api/types.js';
import { errorMessage, KubeletError } from '../errors.js';
import {
  ContainerLogsError,
  checkNames,
  containerLogDir,
  instanceLogFile,
  logFilePath,
  openLogFile,
} from '../logs/paths.js';
import { readLogs } from '../logs/reader.js';
import type { ContainerLogsDeps, LogOptions } from '../logs/types.js';
import { log } from '../util/log.js';

export interface ContainerLogsParams {
  namespace: string;
  pod: string;
  container: string;
}

function bool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ContainerLogsError(400, `${name}: invalid boolean ${JSON.stringify(v)}`);
}

function int(q: URLSearchParams, name: string, min: number): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^-?\d+$/.test(v)) throw new ContainerLogsError(400, `${name}: invalid integer ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < min)
    throw new ContainerLogsError(
      400,
      `${name}: must be ${min === 0 ? 'greater than or equal to 0' : `at least ${min}`}`,
    );
  return n;
}

/** PodLogOptions from the query, validated as upstream ValidatePodLogOptions does. */
export function parseLogOptions(query: URLSearchParams, now = Date.now()): LogOptions {
  const sinceSeconds = int(query, 'sinceSeconds', 1);
  const sinceTimeRaw = query.get('sinceTime');
  if (sinceSeconds !== undefined && sinceTimeRaw !== null)
    throw new ContainerLogsError(400, 'at most one of `sinceTime` or `sinceSeconds` may be specified');
  let sinceTime: Date | undefined;
  if (sinceTimeRaw !== null) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(sinceTimeRaw))
      throw new ContainerLogsError(400, `sinceTime: not an RFC3339 time: ${JSON.stringify(sinceTimeRaw)}`);
    sinceTime = new Date(sinceTimeRaw);
  } else if (sinceSeconds !== undefined) {
    sinceTime = new Date(now - sinceSeconds * 1000);
  }
  return {
    follow: bool(query, 'follow'),
    timestamps: bool(query, 'timestamps'),
    previous: bool(query, 'previous'),
    tailLines: int(query, 'tailLines', 0),
    limitBytes: int(query, 'limitBytes', 1),
    sinceTime,
  };
}

function findContainer(pod: Pod, name: string): Container | undefined {
  const spec = pod.spec;
  return [
    ...(spec?.containers ?? []),
    ...(spec?.initContainers ?? []),
    ...((spec?.ephemeralContainers ?? []) as Container[]),
  ].find((c) => c.name === name);
}

/** Writes with back-pressure; rejects (KTS_ERR_HTTP) when the client went away. */
function writer(res: ServerResponse): (b: Buffer) => Promise<void> {
  const gone = () =>
    new KubeletError('KTS_ERR_HTTP', 'the client closed the connection while its container log was being sent');
  return (b) =>
    new Promise<void>((resolve, reject) => {
      if (res.destroyed) return reject(gone());
      if (res.write(b)) return resolve();
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        if (res.destroyed) reject(gone());
        else resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
}

export async function handleContainerLogs(
  req: IncomingMessage,
  res: ServerResponse,
  params: ContainerLogsParams,
  deps: ContainerLogsDeps,
): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    if (req.method !== 'GET') throw new ContainerLogsError(405, `method ${req.method ?? ''} not allowed`);
    const { namespace, pod: podName, container } = params;
    checkNames(namespace, podName, container);
    const opts = parseLogOptions(new URL(req.url ?? '/', 'http://localhost').searchParams);
    const pod = deps.getPod(namespace, podName);
    if (!pod) throw new ContainerLogsError(404, `pod "${podName}" in namespace "${namespace}" not found`);
    if (!findContainer(pod, container))
      throw new ContainerLogsError(404, `container "${container}" not found in pod "${podName}"`);
    const dir = containerLogDir(deps.podLogsDir, pod, container);
    const name = await instanceLogFile(dir, opts.previous);
    // Open once before answering 200 so a refused file is a clean error status.
    await (await openLogFile(dir, name)).close();
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    await readLogs(logFilePath(dir, name), opts, writer(res), {
      signal: abort.signal,
      // Every (re)open after rotation walks from podLogsDir again, following no symlink.
      open: () => openLogFile(dir, name),
      // The previous instance is dead: following it ends at its end.
      isRunning: () => (opts.previous ? Promise.resolve(false) : deps.isContainerRunning(pod, container)),
      pollMs: deps.followPollMs ?? 200,
    });
    res.end();
  } catch (err) {
    if (!res.headersSent) {
      const status = err instanceof ContainerLogsError ? err.status : 500;
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${errorMessage(err)}\n`);
    } else {
      if (!abort.signal.aborted) log('logs').warn({ err: errorMessage(err), ...params }, 'container log stream failed');
      res.destroy();
    }
  }
}
