/**
 * The runtime's own first report of each exit, observed from a worker thread
 * (bench/pleg-runtimes.ts). In the PLEG's thread this work added itself to the event loop whose
 * delay is being measured; here it only shares the machine. Times are wall-clock ms
 * (performance.timeOrigin + performance.now(), the same clock in every thread).
 *
 * Two ways to find the first report, both polling the runtime every `pollMs` on their own
 * connection, so both define it to the same resolution:
 *  - 'on-exit' (default): our own inotify watch of each running container's cgroup.events; once
 *    the cgroup empties (the process is gone, so the runtime cannot report the exit earlier) a
 *    ListContainers filtered to just that container until it says EXITED. An unfiltered
 *    ListContainers every DISCOVER_MS finds the containers to watch and catches any exit the
 *    watch missed (counted as a fallback: such a report may be late, which would flatter the
 *    PLEG).
 *  - 'list': a ListContainers poll of the whole runtime every `pollMs`, all the time (the
 *    observer of issues 15–30). It costs 30–45 % of a core and ~500 requests a second to
 *    containerd on a 2-core machine, competing with the path it measures.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { connectRuntime } from '../src/cri/index.js';
import type { RuntimeService } from '../src/cri/index.js';
import { CgroupExitWatcher } from '../src/pleg/index.js';
import { hotPaths } from '../src/cmd/hot-paths.js';

export type ObserverKind = 'on-exit' | 'list';

export interface ObserverInput {
  endpoint: string;
  ns: string;
  root: string | undefined;
  /** The pods' cgroup root (the kubelet's --cgroup-root) under the hierarchy root. */
  cgroupRoot: string;
  pollMs: number;
  observer: ObserverKind;
}

/**
 * One observation: the runtime first reported the container exited ('listed'; `fallback` when
 * only the slow discovery list saw it), or its cgroup emptied ('cgroup').
 */
export interface Observation {
  kind: 'listed' | 'cgroup';
  id: string;
  at: number;
  fallback?: boolean;
}

/** How often the 'on-exit' observer lists containers to find new ones (they live ≥ 9 s). */
const DISCOVER_MS = 50;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Observer {
  private readonly seen = new Set<string>();
  private readonly polling = new Set<string>();
  private readonly cgroupWatch: CgroupExitWatcher | undefined;
  running = true;

  constructor(
    private readonly input: ObserverInput,
    private readonly runtime: RuntimeService,
  ) {
    this.cgroupWatch = input.root
      ? new CgroupExitWatcher({
          root: input.root,
          cgroupRoot: input.cgroupRoot,
          createFsWatcher: hotPaths().inotify.createFsWatcher,
          onExit: (_p, cid) => this.onCgroupEmpty(cid),
        })
      : undefined;
  }

  get kind(): ObserverKind {
    return this.cgroupWatch ? this.input.observer : 'list';
  }

  /** One ListContainers: watch what runs, report what exited and was not reported yet. */
  async list(fallback: boolean): Promise<void> {
    const cs = await this.runtime.listContainers().catch(() => []);
    const at = now();
    for (const c of cs) {
      if (c.labels['io.kubernetes.pod.namespace'] !== this.input.ns) continue;
      if (c.state === 'CONTAINER_RUNNING') void this.cgroupWatch?.track(c.labels['io.kubernetes.pod.uid'] ?? '', c.id);
      // A list that sees an exit before that container's own poll does is as early a report;
      // only an exit no poll was waiting for (its cgroup watch never fired) may be seen late.
      else if (c.state === 'CONTAINER_EXITED') this.report(c.id, at, fallback && !this.polling.has(c.id));
    }
  }

  close(): void {
    this.cgroupWatch?.close();
  }

  private report(id: string, at: number, fallback: boolean): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    parentPort!.postMessage({ kind: 'listed', id, at, ...(fallback ? { fallback } : {}) } satisfies Observation);
  }

  private onCgroupEmpty(id: string): void {
    parentPort!.postMessage({ kind: 'cgroup', id, at: now() } satisfies Observation);
    if (this.kind === 'on-exit') void this.pollExited(id);
  }

  /**
   * ListContainers of one container every pollMs until the runtime says it exited: the same call,
   * and the same store read, as the unfiltered list, so the report is as early.
   */
  private async pollExited(id: string): Promise<void> {
    if (this.polling.has(id)) return;
    this.polling.add(id);
    while (this.running && !this.seen.has(id)) {
      const [c] = await this.runtime.listContainers({ id }).catch(() => []);
      if (c?.state === 'CONTAINER_EXITED') this.report(id, now(), false);
      else await sleep(this.input.pollMs);
    }
    this.polling.delete(id);
  }
}

async function observe(input: ObserverInput): Promise<void> {
  const { runtime, images } = connectRuntime(input.endpoint);
  const o = new Observer(input, runtime);
  parentPort!.once('message', () => (o.running = false));
  const interval = o.kind === 'on-exit' ? DISCOVER_MS : input.pollMs;
  while (o.running) {
    await o.list(o.kind === 'on-exit');
    await sleep(interval);
  }
  o.close();
  runtime.close();
  images.close();
}

if (parentPort) await observe(workerData as ObserverInput);
