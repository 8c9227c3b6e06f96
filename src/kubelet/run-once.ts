/**
 * Run-once mode (--runonce; upstream pkg/kubelet/runonce.go RunOnce): take the first update of
 * the pod sources, giving up when none comes within runOnceManifestDelay (5 s); let the normal
 * sync loop admit and start its pods; wait for each with upstream's retry schedule (checks after
 * 1 s, then 2 s, 4 s, … doubling, runOnceMaxRetries 10: the last check is 1023 s in); report one
 * result per pod and exit. Pods are left running, as upstream: run-once launches, it does not
 * supervise. The GC loops run meanwhile, as upstream's StartGarbageCollection does.
 *
 * Upstream's runPod calls SyncPod itself; here the pod workers do, and run-once reads what they
 * report in the pod status, with the same outcomes:
 *  - a pod counts as started when every container of its spec runs (upstream isPodRunning);
 *  - it fails at once on a sync error: upstream fails when SyncPod returns an error that is not a
 *    back-off; here, a container waiting for any reason but ContainerCreating, PodInitializing
 *    or CrashLoopBackOff. ImagePullBackOff counts as the error: in a fresh process it only
 *    follows an ErrImagePull, which upstream's first SyncPod would have returned;
 *  - a pod rejected at admission is reported without failing the run (upstream's
 *    RunPodResult{pod, nil}); the Kubelet set its status Failed with the admission reason;
 *  - a pod that reached a terminal phase ends its wait (upstream: SyncPod reports it terminal):
 *    Succeeded is started; Failed fails the run (upstream reports it as started, which hides
 *    a pod that never worked).
 *
 * `tap()` sits between PodConfig and the Kubelet: it forwards every update unchanged and keeps
 * the first one, which is what upstream's RunOnce reads from the updates channel.
 */
import type { ApiContainerStatus, ApiPodStatus, Pod } from '../api/types.js';
import { klogRef, podUID } from '../api/pod.js';
import type { PodUpdate } from '../podconfig/types.js';
import { realClock, type Clock } from '../util/clock.js';
import { log } from '../util/log.js';

/**
 * How long to wait for the first update of the sources (upstream runOnceManifestDelay, 1 s there):
 * 5 s, so that a manifest URL that answers within a few seconds is not taken for no pods.
 */
export const runOnceManifestDelayMs = 5000;
/** upstream runOnceMaxRetries: checks after the first before a pod not running fails. */
export const runOnceMaxRetries = 10;
/** upstream runOnceRetryDelay and runOnceRetryDelayBackoff: 1 s, doubling after each check. */
export const runOnceRetryDelayMs = 1000;
export const runOnceRetryDelayBackoff = 2;

export interface RunOnceOptions {
  /** The latest API status of a pod (the status manager). */
  status: (uid: string) => ApiPodStatus | undefined;
  clock?: Clock;
  /** Tests: shorter than upstream's 1 s first delay (upstream's test passes 1 ms). */
  retryDelayMs?: number;
}

export interface RunOnceResult {
  pod: string;
  /** upstream RunPodResult.Err == nil: started, succeeded, or rejected at admission. */
  ok: boolean;
  /** Refused at admission (ok, as upstream: the run does not fail for it). */
  rejected?: boolean;
  message: string;
}

/** Waiting reasons that are no sync error: the pod is on its way, or waits in a back-off upstream's SyncPod does not return as an error. */
const NOT_AN_ERROR = new Set(['ContainerCreating', 'PodInitializing', 'CrashLoopBackOff']);
/** upstream rejectPod's status message prefix. */
const REJECTED_PREFIX = 'Pod was rejected: ';

type Verdict = { done: true; ok: boolean; rejected?: boolean; message: string } | { done: false; message: string };

export class RunOnce {
  private firstReady!: (u: PodUpdate) => void;
  private readonly first = new Promise<PodUpdate>((r) => (this.firstReady = r));
  private taken = false;
  private readonly clock: Clock;

  constructor(private readonly opts: RunOnceOptions) {
    this.clock = opts.clock ?? realClock;
  }

  /** Forwards `updates` to the Kubelet, keeping the first. */
  async *tap(updates: AsyncIterable<PodUpdate>): AsyncGenerator<PodUpdate> {
    for await (const u of updates) {
      if (!this.taken) {
        this.taken = true;
        this.firstReady(u);
      }
      yield u;
    }
  }

  /** Waits for the first update, then for every pod of it; one result per pod, in name order. */
  async run(): Promise<RunOnceResult[]> {
    const timer = this.delay(runOnceManifestDelayMs);
    const u = await Promise.race([this.first, timer.done.then(() => undefined)]);
    timer.cancel();
    if (!u)
      return [{ pod: '(sources)', ok: false, message: `no pod manifest update after ${runOnceManifestDelayMs} ms` }];
    log('runonce').info({ numPods: u.pods.length, source: u.source }, 'Processing manifest with pods');
    const results = await Promise.all(u.pods.map((p) => this.runPod(p)));
    log('runonce').info({ numPods: u.pods.length }, 'Finished processing pods');
    return results.sort((a, b) => a.pod.localeCompare(b.pod));
  }

  /** upstream runPod: check, and while not started wait 1 s, 2 s, 4 s, … for at most runOnceMaxRetries more checks. */
  private async runPod(pod: Pod): Promise<RunOnceResult> {
    const name = klogRef(pod.metadata);
    let delay = this.opts.retryDelayMs ?? runOnceRetryDelayMs;
    for (let retry = 0; ; retry++) {
      const v = judge(pod, this.opts.status(podUID(pod)));
      if (v.done) {
        log('runonce').info({ pod: name, message: v.message }, v.ok ? 'Pod done' : 'Unable to start pod');
        return { pod: name, ok: v.ok, ...(v.rejected ? { rejected: true } : {}), message: v.message };
      }
      if (retry >= runOnceMaxRetries) {
        return {
          pod: name,
          ok: false,
          message: `timeout error: containers not running after ${runOnceMaxRetries} retries (${v.message})`,
        };
      }
      log('runonce').info({ pod: name, waitMs: delay, state: v.message }, "Pod's containers not running yet, waiting");
      await this.delay(delay).done;
      delay *= runOnceRetryDelayBackoff;
    }
  }

  private delay(ms: number): { done: Promise<void>; cancel(): void } {
    let timer: { cancel(): void } | undefined;
    const done = new Promise<void>((r) => {
      timer = this.clock.setTimeout(r, ms);
    });
    return { done, cancel: () => timer?.cancel() };
  }
}

function waitingMessage(c: ApiContainerStatus): string {
  const w = c.state!.waiting!;
  return `container ${c.name}: ${w.reason}${w.message ? `: ${w.message}` : ''}`;
}

/** The outcome the status shows, or why to keep waiting. */
export function judge(pod: Pod, st: ApiPodStatus | undefined): Verdict {
  if (!st) return { done: false, message: 'no status yet' };
  if (st.phase === 'Failed' && st.message?.startsWith(REJECTED_PREFIX)) {
    return {
      done: true,
      ok: true,
      rejected: true,
      message: `${st.reason ?? 'rejected'}: ${st.message.slice(REJECTED_PREFIX.length)}`,
    };
  }
  if (st.phase === 'Succeeded') return { done: true, ok: true, message: 'succeeded' };
  if (st.phase === 'Failed')
    return { done: true, ok: false, message: `failed: ${st.reason ?? ''} ${st.message ?? ''}`.trim() };
  const statuses = [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])];
  const syncError = statuses.find((c) => c.state?.waiting?.reason && !NOT_AN_ERROR.has(c.state.waiting.reason));
  if (syncError) return { done: true, ok: false, message: waitingMessage(syncError) };
  const running = new Set((st.containerStatuses ?? []).filter((c) => c.state?.running).map((c) => c.name));
  if ((pod.spec?.containers ?? []).every((c) => running.has(c.name)))
    return { done: true, ok: true, message: 'running' };
  const waiting = statuses.find((c) => c.state?.waiting?.reason);
  return { done: false, message: waiting ? waitingMessage(waiting) : `phase ${st.phase ?? 'unknown'}` };
}

/** The lines printed to stdout, one per pod, and the exit code (1 when a pod that was admitted failed). */
export function formatRunOnce(results: RunOnceResult[]): { text: string; code: number } {
  const lines = results.map((r) => `${r.rejected ? 'rejected' : r.ok ? 'ok' : 'FAILED'} ${r.pod}: ${r.message}`);
  const failed = results.filter((r) => !r.ok);
  const rejected = results.filter((r) => r.rejected);
  const started = results.length - failed.length - rejected.length;
  const rejectedNote =
    rejected.length > 0 ? `; ${rejected.length} rejected at admission: ${rejected.map((r) => r.pod).join(', ')}` : '';
  lines.push(
    failed.length === 0
      ? `runonce: ${started} pod(s) running${rejectedNote}`
      : `runonce: ${failed.length} of ${results.length} pod(s) failed: ${failed.map((r) => r.pod).join(', ')}${rejectedNote}`,
  );
  return { text: lines.join('\n') + '\n', code: failed.length === 0 ? 0 : 1 };
}
