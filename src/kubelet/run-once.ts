/**
 * Run-once mode (--runonce; upstream RunOnce, seed 000): read the sources until each has
 * delivered its first complete list, let the normal sync loop admit and start those pods, wait
 * for each to be running with a growing retry delay, report one result per pod and exit.
 * Pods are left running, as upstream: run-once launches, it does not supervise.
 *
 * `tap()` sits between PodConfig and the Kubelet: it forwards every update unchanged and keeps
 * its own merged view, so that the snapshot is exactly what the sources said when they were
 * all seen (the Kubelet's pod manager may not have caught up yet at that moment).
 */
import type { ApiPodStatus, Pod } from '../api/types.js';
import type { PodConfig, PodUpdate } from '../podconfig/types.js';
import { sleep } from '../util/clock.js';
import { log } from '../util/log.js';

export interface RunOnceOptions {
  /** Names of the configured sources: the snapshot waits for a first SET from each. */
  sources: Iterable<string>;
  podConfig: Pick<PodConfig, 'seenAllSources'>;
  /** The latest API status of a pod (the status manager). */
  status: (uid: string) => ApiPodStatus | undefined;
  /** First delay between checks (upstream runOnceRetryDelay 1 s); doubles up to maxDelayMs. */
  retryDelayMs?: number;
  maxDelayMs?: number;
  /** Checks before a pod that is not running is reported failed (upstream runOnceMaxRetries 10). */
  maxRetries?: number;
  /** How long to wait for every source's first list (default 60 s). */
  sourcesTimeoutMs?: number;
}

export interface RunOnceResult {
  pod: string;
  ok: boolean;
  message: string;
}

/** Waiting reasons that say the pod will not start without an operator (image or config). */
const HOPELESS = new Set(['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);
/** A hopeless reason seen this many checks in a row fails the pod before the retries run out. */
const HOPELESS_CHECKS = 3;

export class RunOnce {
  private readonly pods = new Map<string, Pod>();
  private readonly expected: Set<string>;
  private snapshotReady!: (pods: Pod[]) => void;
  private readonly snapshot = new Promise<Pod[]>((r) => (this.snapshotReady = r));
  private taken = false;

  constructor(private readonly opts: RunOnceOptions) {
    this.expected = new Set(opts.sources);
  }

  /** Forwards `updates` to the Kubelet, recording the merged pods until every source was seen. */
  async *tap(updates: AsyncIterable<PodUpdate>): AsyncGenerator<PodUpdate> {
    if (this.expected.size === 0) this.take();
    for await (const u of updates) {
      if (!this.taken) this.record(u);
      yield u;
      if (!this.taken && this.opts.podConfig.seenAllSources(this.expected)) this.take();
    }
  }

  private record(u: PodUpdate): void {
    for (const p of u.pods) {
      const uid = p.metadata!.uid!;
      if (u.op === 'REMOVE') this.pods.delete(uid);
      else this.pods.set(uid, p);
    }
  }

  private take(): void {
    this.taken = true;
    this.snapshotReady([...this.pods.values()]);
  }

  /** Waits for the snapshot, then for every pod of it; one result per pod, in name order. */
  async run(): Promise<RunOnceResult[]> {
    const timeoutMs = this.opts.sourcesTimeoutMs ?? 60_000;
    const pods = await Promise.race([this.snapshot, sleep(timeoutMs).then(() => undefined)]);
    if (!pods) return [{ pod: '(sources)', ok: false, message: `not every source delivered its pods within ${timeoutMs} ms` }];
    log('runonce').info({ pods: pods.map(podName) }, 'Processing manifests once');
    const results = await Promise.all(pods.map((p) => this.waitForPod(p)));
    return results.sort((a, b) => a.pod.localeCompare(b.pod));
  }

  private async waitForPod(pod: Pod): Promise<RunOnceResult> {
    const name = podName(pod);
    const uid = pod.metadata!.uid!;
    let delay = this.opts.retryDelayMs ?? 1000;
    const maxDelay = this.opts.maxDelayMs ?? 5000;
    const retries = this.opts.maxRetries ?? 10;
    let hopeless = 0;
    let last = 'no status yet';
    for (let i = 0; i < retries; i++) {
      await sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
      const st = this.opts.status(uid);
      const verdict = judge(st);
      if (verdict.ok !== undefined) return { pod: name, ok: verdict.ok, message: verdict.message };
      last = verdict.message;
      hopeless = verdict.hopeless ? hopeless + 1 : 0;
      if (hopeless >= HOPELESS_CHECKS) return { pod: name, ok: false, message: last };
    }
    return { pod: name, ok: false, message: `containers not running after ${retries} retries: ${last}` };
  }
}

function podName(p: Pod): string {
  return `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`;
}

/** ok true/false is final; undefined means keep waiting (with why, and whether it looks hopeless). */
function judge(st: ApiPodStatus | undefined): { ok?: boolean; message: string; hopeless?: boolean } {
  if (!st) return { message: 'no status yet' };
  if (st.phase === 'Succeeded') return { ok: true, message: 'succeeded' };
  if (st.phase === 'Failed') return { ok: false, message: `failed: ${st.reason ?? ''} ${st.message ?? ''}`.trim() };
  const cs = st.containerStatuses ?? [];
  if (st.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running)) return { ok: true, message: 'running' };
  const waiting = cs.find((c) => c.state?.waiting?.reason);
  if (waiting) {
    const w = waiting.state!.waiting!;
    return { message: `container ${waiting.name}: ${w.reason}${w.message ? `: ${w.message}` : ''}`, hopeless: HOPELESS.has(w.reason!) };
  }
  return { message: `phase ${st.phase ?? 'unknown'}` };
}

/** The lines printed to stdout, one per pod, and the exit code (1 when one failed). */
export function formatRunOnce(results: RunOnceResult[]): { text: string; code: number } {
  const lines = results.map((r) => `${r.ok ? 'ok' : 'FAILED'} ${r.pod}: ${r.message}`);
  const failed = results.filter((r) => !r.ok);
  lines.push(failed.length === 0 ? `runonce: ${results.length} pod(s) running` : `runonce: ${failed.length} of ${results.length} pod(s) failed: ${failed.map((r) => r.pod).join(', ')}`);
  return { text: lines.join('\n') + '\n', code: failed.length === 0 ? 0 : 1 };
}
