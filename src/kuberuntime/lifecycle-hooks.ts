/**
 * Lifecycle hook handlers (upstream pkg/kubelet/lifecycle/handlers.go handlerRunner.Run):
 *
 *  - exec: CRI ExecSync in the container; a non-zero exit or a failed call fails the hook, with
 *    upstream's message (command, container, pod, error and the output);
 *  - httpGet: GET to the action's host or the pod's first IP (see src/util/http-get.ts); any HTTP
 *    response succeeds, only a transport failure fails the hook (as upstream); https that is
 *    answered in plain HTTP is retried over http;
 *  - sleep: waits the given seconds (cut short by the caller's deadline);
 *  - tcpSocket or nothing: "invalid handler".
 *
 * The caller bounds the hook: postStart with the hook timeout, preStop with the grace period.
 */
import type { Container, Pod } from '../api/types.js';
import { formatPod } from '../api/pod.js';
import type { RuntimeService } from '../cri/types.js';
import { errorMessage, kubeletErrorClass } from '../errors.js';
import { runtimeMessage } from '../cri/errors.js';
import { httpGet, newRequestForHTTPGetAction, type HttpGetAction } from '../util/http-get.js';

/** Default bound of a postStart hook and of an HTTP hook request (upstream has none). */
export const DEFAULT_HOOK_TIMEOUT_MS = 120_000;

/** The subset of core/v1 LifecycleHandler we run. */
export interface LifecycleHandler {
  exec?: { command?: string[] };
  httpGet?: HttpGetAction;
  sleep?: { seconds: number };
  tcpSocket?: unknown;
}

/** The container a postStart or preStop hook runs for: its pod, its spec and its runtime ID. */
export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
}

export interface HookContext {
  runtime: RuntimeService;
  pod: Pod;
  container: Pick<Container, 'name' | 'ports'>;
  containerId: string;
  /** The pod's IPs (for httpGet without a host); resolved lazily. */
  podIPs: () => Promise<string[]>;
  timeoutMs: number;
  signal?: AbortSignal;
}

export class HookError extends kubeletErrorClass('KTS_ERR_HOOK') {}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new HookError('container terminated before sleep hook finished'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new HookError('container terminated before sleep hook finished'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs the handler; resolves when it succeeded, rejects with a HookError carrying upstream's message. */
export async function runHandler(handler: LifecycleHandler, ctx: HookContext): Promise<void> {
  const where = `for Container ${JSON.stringify(ctx.container.name)} in Pod ${JSON.stringify(formatPod(ctx.pod))}`;
  if (handler.exec) {
    const command = handler.exec.command ?? [];
    let output = '';
    let failure: string | undefined;
    try {
      const timeoutSeconds = Math.max(1, Math.ceil(ctx.timeoutMs / 1000));
      const r = await ctx.runtime.execSync(ctx.containerId, command, timeoutSeconds);
      output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      if (r.exitCode !== 0) failure = `command '${command.join(' ')}' exited with ${r.exitCode}: ${output}`;
    } catch (err) {
      failure = runtimeMessage(err);
    }
    if (failure !== undefined) {
      throw new HookError(
        `Exec lifecycle hook (${JSON.stringify(command)}) ${where} failed - error: ${failure}, message: ${JSON.stringify(output)}`,
      );
    }
    return;
  }
  if (handler.httpGet) {
    try {
      let podIP = '';
      if (!handler.httpGet.host) {
        const ips = await ctx.podIPs();
        if (ips.length === 0) throw new HookError('failed to find networking container: the pod has no IP');
        podIP = ips[0]!;
      }
      const req = newRequestForHTTPGetAction(handler.httpGet, ctx.container, podIP, 'lifecycle');
      await httpGet(req, {
        timeoutMs: ctx.timeoutMs,
        httpFallback: true,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } catch (err) {
      throw new HookError(
        `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) ${where} failed - error: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    return;
  }
  if (handler.sleep) {
    const seconds = handler.sleep.seconds;
    try {
      await sleep(Math.max(0, seconds) * 1000, ctx.signal);
    } catch (err) {
      throw new HookError(`Sleep lifecycle hook (${seconds}) ${where} failed - error: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    return;
  }
  throw new HookError(`Cannot run handler: invalid handler: ${JSON.stringify(handler)}`);
}
