/**
 * One probe worker: one container, one probe kind (upstream prober/worker.go). It probes every
 * periodSeconds (never two probes at once), counts consecutive equal outcomes against
 * successThreshold / failureThreshold before changing the cached result, resets when the
 * container ID changes, and holds after a liveness/startup failure until a new container appears.
 */
import type { ApiContainerStatus, Container, Pod, Probe } from '../api/types.js';
import type { EventRecorder } from '../events/types.js';
import { containerEventRef } from '../events/refs.js';
import { probeMetrics } from '../metrics/probes.js';
import { errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import type { CachedResult, Prober, ProbeReply, ProbeType, ResultsManager } from './types.js';

/** What the worker reads of the manager: the pod's latest status and other kinds' results. */
export interface WorkerContext {
  latest(podUid: string): { pod: Pod; containers: ApiContainerStatus[]; podIP: string } | undefined;
  startupSucceeded(containerId: string): boolean;
  recorder?: EventRecorder | undefined;
  now(): number;
}

const INITIAL: Record<ProbeType, CachedResult> = { liveness: 'success', readiness: 'failure', startup: 'unknown' };
const LABEL: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };
const METRIC_RESULT: Record<ProbeReply['outcome'], string> = {
  success: 'successful',
  warning: 'successful',
  failure: 'failed',
  unknown: 'unknown',
};

function stripRuntimePrefix(cid: string | undefined): string {
  if (!cid) return '';
  const i = cid.indexOf('://');
  return i >= 0 ? cid.slice(i + 3) : cid;
}

/** What one worker probes: a container of a pod, with one of its probes. */
export interface ProbeTarget {
  podUid: string;
  container: Container;
  probeType: ProbeType;
  spec: Probe;
}

export class ProbeWorker {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private containerId = '';
  private lastOutcome: CachedResult | undefined;
  private resultRun = 0;
  private onHold = false;
  private readonly periodMs: number;
  private readonly timeoutMs: number;
  readonly podUid: string;
  readonly probeType: ProbeType;
  private readonly container: Container;
  private readonly spec: Probe;

  constructor(
    private readonly ctx: WorkerContext,
    target: ProbeTarget,
    private readonly prober: Prober,
    private readonly results: ResultsManager,
  ) {
    const { spec } = target;
    this.podUid = target.podUid;
    this.probeType = target.probeType;
    this.container = target.container;
    this.spec = spec;
    this.periodMs = Math.max(1, spec.periodSeconds ?? 10) * 1000;
    this.timeoutMs = Math.max(1, spec.timeoutSeconds ?? 1) * 1000;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops probing and forgets this worker's result. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.containerId) this.results.remove(this.containerId);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let keep = true;
    try {
      keep = await this.doProbe();
    } catch (err) {
      log('prober').error(
        { err: errorMessage(err), pod: this.podUid, container: this.container.name, probeType: this.probeType },
        'probe worker iteration failed',
      );
    }
    if (keep) this.schedule(this.periodMs);
    else this.stopped = true;
  }

  /** One iteration (upstream doProbe). Returns false when the worker should stop. */
  async doProbe(): Promise<boolean> {
    const st = this.ctx.latest(this.podUid);
    if (!st) return true;
    const cs = st.containers.find((c) => c.name === this.container.name);
    const id = stripRuntimePrefix(cs?.containerID);
    if (!cs || !id) return true;
    if (id !== this.containerId) {
      if (this.containerId) this.results.remove(this.containerId);
      this.containerId = id;
      this.results.set(id, INITIAL[this.probeType], this.podUid);
      this.onHold = false;
      this.resultRun = 0;
      this.lastOutcome = undefined;
    }
    if (this.onHold) return true;
    const running = cs.state?.running;
    if (!running) {
      this.results.set(id, 'failure', this.podUid);
      // A container that ended for good (restartPolicy Never) will not come back: stop.
      return !(cs.state?.terminated && st.pod.spec?.restartPolicy === 'Never');
    }
    const started = this.ctx.startupSucceeded(id);
    if (this.probeType !== 'startup' && this.container.startupProbe && !started) return true;
    if (this.probeType === 'startup' && started) return true;
    const startedAt = running.startedAt ? new Date(running.startedAt).getTime() : 0;
    if (this.ctx.now() - startedAt < (this.spec.initialDelaySeconds ?? 0) * 1000) return true;

    const reply = await this.runProbe(st.pod, id, st.podIP);
    if (this.stopped || id !== this.containerId) return !this.stopped;
    if (reply.outcome === 'unknown') return true; // an errored probe leaves the result as it was
    const result: CachedResult = reply.outcome === 'failure' ? 'failure' : 'success';
    this.resultRun = this.lastOutcome === result ? this.resultRun + 1 : 1;
    this.lastOutcome = result;
    const threshold = result === 'failure' ? (this.spec.failureThreshold ?? 3) : (this.spec.successThreshold ?? 1);
    if (this.resultRun < threshold) return true;
    this.results.set(id, result, this.podUid);
    if (result === 'failure' && this.probeType !== 'readiness') {
      // The container will be killed and restarted: wait for the new one.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }

  private async runProbe(pod: Pod, containerId: string, podIP: string): Promise<ProbeReply> {
    const t0 = process.hrtime.bigint();
    let reply: ProbeReply;
    try {
      reply = await this.prober.probe({ pod, containerName: this.container.name, containerId, podIP }, this.timeoutMs);
    } catch (err) {
      reply = { outcome: 'unknown', output: errorMessage(err) };
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const labels = {
      probe_type: LABEL[this.probeType],
      container: this.container.name,
      pod: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
    };
    probeMetrics.probeTotal.inc({ ...labels, result: METRIC_RESULT[reply.outcome], pod_uid: this.podUid });
    if (reply.outcome !== 'unknown') probeMetrics.probeDuration.observe(labels, seconds);
    this.recordEvent(pod, reply);
    return reply;
  }

  /** upstream prober.recordContainerEvent: Unhealthy for failed or errored probes, ProbeWarning for warnings. */
  private recordEvent(pod: Pod, reply: ProbeReply): void {
    const r = this.ctx.recorder;
    if (!r || reply.outcome === 'success') return;
    const ref = containerEventRef(pod, this.container.name);
    const kind = LABEL[this.probeType];
    if (reply.outcome === 'warning') r.event(ref, 'Warning', 'ProbeWarning', `${kind} probe warning: ${reply.output}`);
    else if (reply.outcome === 'failure') r.event(ref, 'Warning', 'Unhealthy', `${kind} probe failed: ${reply.output}`);
    else r.event(ref, 'Warning', 'Unhealthy', `${kind} probe errored: ${reply.output}`);
  }
}
