/**
 * upstream prober.Manager: workers per pod (one per container per probe kind), the three results
 * caches, and the views the status code and the runtime read.
 */
import type { ApiContainerStatus, ApiPodStatus, Container, Pod, Probe } from '../api/types.js';
import { podUID, klogRef } from '../api/pod.js';
import type { RuntimeService } from '../cri/types.js';
import type { EventRecorder } from '../events/types.js';
import { log } from '../util/log.js';
import { execProber } from './exec.js';
import { grpcProber } from './grpc.js';
import { httpProber } from './http.js';
import { ResultsCache } from './results.js';
import { tcpProber } from './tcp.js';
import type { CachedResult, Prober, ProbeManager, ProbeType, ProbeReply } from './types.js';
import { ProbeWorker, type WorkerContext } from './worker.js';

export interface ProbeManagerDeps {
  runtime: Pick<RuntimeService, 'execSync'>;
  recorder?: EventRecorder | undefined;
  now?: () => number;
}

interface PodState {
  pod: Pod;
  containers: ApiContainerStatus[];
  podIP: string;
}

const KINDS: Array<[ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe']> = [
  ['liveness', 'livenessProbe'],
  ['readiness', 'readinessProbe'],
  ['startup', 'startupProbe'],
];

/** The prober for a probe's action; a probe without a usable action is an error reply. */
function proberFor(probe: Probe, container: Container, runtime: Pick<RuntimeService, 'execSync'>): Prober {
  if (probe.exec?.command?.length) return execProber(runtime, probe.exec.command);
  if (probe.httpGet) return httpProber(probe.httpGet as Parameters<typeof httpProber>[0], container);
  if (probe.tcpSocket) return tcpProber(probe.tcpSocket as Parameters<typeof tcpProber>[0], container);
  if (probe.grpc)
    return grpcProber({
      port: probe.grpc.port,
      ...(probe.grpc.service !== undefined ? { service: probe.grpc.service } : {}),
    });
  const reply: ProbeReply = { outcome: 'unknown', output: 'missing probe handler' };
  return { probe: () => Promise.resolve(reply) };
}

function asBool(r: CachedResult | undefined): boolean | undefined {
  return r === undefined ? undefined : r === 'success';
}

class Manager implements ProbeManager, WorkerContext {
  private readonly pods = new Map<string, PodState>();
  private readonly workers = new Map<string, ProbeWorker[]>();
  private readonly caches: Record<ProbeType, ResultsCache> = {
    liveness: new ResultsCache('liveness'),
    readiness: new ResultsCache('readiness'),
    startup: new ResultsCache('startup'),
  };
  private readonly listeners: Array<(uid: string) => void> = [];
  readonly recorder: EventRecorder | undefined;

  constructor(private readonly deps: ProbeManagerDeps) {
    this.recorder = deps.recorder;
    for (const c of Object.values(this.caches))
      c.onUpdate((u) => {
        for (const l of this.listeners) l(u.podUid);
      });
  }

  now(): number {
    return (this.deps.now ?? Date.now)();
  }

  latest(podUid: string): PodState | undefined {
    return this.pods.get(podUid);
  }

  startupSucceeded(containerId: string): boolean {
    return this.caches.startup.get(containerId) === 'success';
  }

  updatePod(pod: Pod, status: ApiPodStatus, podIsTerminal: boolean): void {
    const uid = podUID(pod);
    if (podIsTerminal) {
      this.removePod(uid);
      return;
    }
    this.pods.set(uid, {
      pod,
      containers: [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])],
      podIP: status.podIP ?? '',
    });
    if (!this.workers.has(uid)) this.addPod(pod);
  }

  /** upstream AddPod: regular containers and sidecars (restartable init containers) with probes. */
  private addPod(pod: Pod): void {
    const uid = podUID(pod);
    const containers = [
      ...(pod.spec?.containers ?? []),
      ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
    ];
    const list: ProbeWorker[] = [];
    for (const c of containers) {
      for (const [kind, field] of KINDS) {
        const spec = c[field];
        if (!spec) continue;
        list.push(
          new ProbeWorker(
            this,
            { podUid: uid, container: c, probeType: kind, spec },
            proberFor(spec, c, this.deps.runtime),
            this.caches[kind],
          ),
        );
      }
    }
    this.workers.set(uid, list);
    if (list.length > 0)
      log('prober').debug({ pod: klogRef(pod.metadata), workers: list.length }, 'probe workers started');
    for (const w of list) w.start();
  }

  stopLivenessAndStartup(podUid: string): void {
    const list = this.workers.get(podUid);
    if (!list) return;
    for (const w of list) if (w.probeType !== 'readiness') w.stop();
    this.workers.set(
      podUid,
      list.filter((w) => w.probeType === 'readiness'),
    );
  }

  removePod(podUid: string): void {
    for (const w of this.workers.get(podUid) ?? []) w.stop();
    this.workers.delete(podUid);
    this.pods.delete(podUid);
  }

  cleanupPods(desired: ReadonlySet<string>): void {
    for (const uid of [...this.workers.keys()]) if (!desired.has(uid)) this.removePod(uid);
  }

  onResultChange(listener: (podUid: string) => void): void {
    this.listeners.push(listener);
  }

  readiness(containerId: string): boolean | undefined {
    return asBool(this.caches.readiness.get(containerId));
  }

  startup(containerId: string): boolean | undefined {
    return asBool(this.caches.startup.get(containerId));
  }

  probeFailure(containerId: string): 'LivenessProbe' | 'StartupProbe' | undefined {
    if (this.caches.liveness.get(containerId) === 'failure') return 'LivenessProbe';
    if (this.caches.startup.get(containerId) === 'failure') return 'StartupProbe';
    return undefined;
  }

  startupProbeSucceeded(containerId: string): boolean | undefined {
    return this.startup(containerId);
  }

  stop(): void {
    for (const uid of [...this.workers.keys()]) this.removePod(uid);
  }
}

export function createManager(deps: ProbeManagerDeps): ProbeManager {
  return new Manager(deps);
}
