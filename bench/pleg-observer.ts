/**
 * The runtime's own first report of each exit, observed from a worker thread
 * (bench/pleg-runtimes.ts): a ListContainers poll every POLL_MS on its own connection, and our
 * own inotify watch of each running container's cgroup.events. In the PLEG's thread these two
 * decoded a list of 50 containers every 2 ms and added their own work to the event loop whose
 * delay is being measured; here they only share the machine. Times are wall-clock ms
 * (performance.timeOrigin + performance.now(), the same clock in every thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { connectRuntime } from '../src/cri/index.js';
import { CgroupExitWatcher } from '../src/pleg/index.js';
import { hotPaths } from '../src/cmd/hot-paths.js';

export interface ObserverInput {
  endpoint: string;
  ns: string;
  root: string | undefined;
  pollMs: number;
}

/** One observation: the poll first saw the container exited, or its cgroup emptied. */
export interface Observation {
  kind: 'listed' | 'cgroup';
  id: string;
  at: number;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function observe(input: ObserverInput): Promise<void> {
  const { runtime, images } = connectRuntime(input.endpoint);
  const post = (o: Observation) => parentPort!.postMessage(o);
  const seen = new Set<string>();
  const cgroupWatch = input.root
    ? new CgroupExitWatcher({
        root: input.root,
        createFsWatcher: hotPaths().inotify.createFsWatcher,
        onExit: (_p, cid) => post({ kind: 'cgroup', id: cid, at: now() }),
      })
    : undefined;
  let polling = true;
  parentPort!.once('message', () => (polling = false));
  while (polling) {
    const cs = await runtime.listContainers().catch(() => []);
    const at = now();
    for (const c of cs) {
      if (c.labels['io.kubernetes.pod.namespace'] !== input.ns) continue;
      if (c.state === 'CONTAINER_RUNNING') void cgroupWatch?.track(c.labels['io.kubernetes.pod.uid'] ?? '', c.id);
      else if (c.state === 'CONTAINER_EXITED' && !seen.has(c.id)) {
        seen.add(c.id);
        post({ kind: 'listed', id: c.id, at });
      }
    }
    await sleep(input.pollMs);
  }
  cgroupWatch?.close();
  runtime.close();
  images.close();
}

if (parentPort) await observe(workerData as ObserverInput);
