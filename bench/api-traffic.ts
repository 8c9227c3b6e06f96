/**
 * API traffic per node (issue 30, item 4): the real agent in API server mode against the test
 * apiserver (test/support/test-apiserver.ts, which counts every request by client, verb and
 * resource, and follows open watches) and real containerd. Reports
 *   (a) idle, no pods: requests per minute by verb/resource over the idle window, open watches;
 *   (b) N hostNetwork busybox pods created through the API, all using the same ConfigMap
 *       (volume), Secret (env) and Services (env vars), then deleted gracefully: pod status writes
 *       per pod from creation to Ready (no probes) and over the pod's life, event writes, requests
 *       by verb/resource during the start and during the delete, watch restarts and relists, open
 *       watches at N pods vs 0 pods.
 * Goals: idle <= 12 requests per minute; the same watches at N pods as at 0; <= 3 status writes
 * per pod from creation to Ready. Only the agent's requests are counted (its User-Agent); the
 * bench's own calls have another.
 *
 *   node dist/bench/api-traffic.js --endpoint unix:///…/containerd.sock [--idle-seconds 120] [--pods 100]
 */
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRuntime } from '../src/cri/index.js';
import { removeTestPods } from '../test/support/containerd.js';
import { getPods, makeKubeletDirs, startKubelet, stopKubelet, waitFor } from '../test/support/kubelet-process.js';
import { startTestApiserver, type TestApiserver } from '../test/support/test-apiserver.js';
import { trafficBetween, type TrafficSnapshot } from '../test/support/apiserver-traffic.js';
import type { Obj } from '../test/support/apiserver-store.js';
import { startRun, writeResult } from './results.js';
import { percentile } from './stats.js';

const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node'; // startKubelet's --hostname-override
const NS = 'bench-traffic';
const AGENT = 'kubelet-ts/'; // the agent's User-Agent prefix
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

export interface ApiTrafficResult {
  idle: {
    seconds: number;
    requests_per_minute: number;
    by_kind_per_minute: Record<string, number>;
    open_watches: string[];
    watch_restarts: number;
    /** From the watches' server-side timeouts (random 5–10 min): open watches × 60 / 450 s. */
    watch_restarts_expected_per_minute: number;
    load_avg_1m: number;
  };
  pods: {
    count: number;
    shared_objects: string[];
    start: PhaseTraffic & { all_ready_s: number };
    delete: PhaseTraffic & { all_gone_s: number };
    status_writes_to_ready: { p50: number; max: number; mean: number };
    status_writes_per_pod_lifetime: { p50: number; max: number; mean: number };
    event_writes: { start: number; delete: number; per_pod_start: number; per_pod_delete: number };
    /** The namespace's Events by reason (sum of their counts) after the start and after the delete. */
    events_by_reason: { start: Record<string, number>; delete: Record<string, number> };
    open_watches_at_pods: string[];
    open_watches_after_delete: string[];
    peak_open_watches: number;
  };
  /**
   * watches_independent_of_pods: the watches opened for the pods are at most one per distinct
   * object they share (the ConfigMap and the Secret; Services come from the one informer).
   */
  goals: { idle_max_per_minute: 12; status_writes_to_ready_max: 3; met: Record<string, boolean> };
}

interface PhaseTraffic {
  requests: Record<string, number>;
  total: number;
  watch_restarts: number;
  relists: number;
  load_avg_1m: number;
}

function podBody(name: string): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      terminationGracePeriodSeconds: 30,
      volumes: [{ name: 'conf', configMap: { name: 'shared-conf' } }],
      containers: [
        {
          name: 'c',
          image: IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', 'trap "exit 0" TERM; sleep 100000 & wait'],
          env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'shared-secret', key: 'token' } } }],
          volumeMounts: [{ name: 'conf', mountPath: '/conf' }],
        },
      ],
    },
  };
}

async function mustCall(api: TestApiserver, method: string, path: string, body?: unknown): Promise<void> {
  const r = await api.call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
}

/** The ConfigMap, Secret and Service every pod uses (a Service of the namespace is in every pod's env). */
async function sharedObjects(api: TestApiserver): Promise<string[]> {
  await mustCall(api, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
    metadata: { name: 'shared-conf' },
    data: { 'app.conf': 'x=1\n' },
  });
  await mustCall(api, 'POST', `/api/v1/namespaces/${NS}/secrets`, {
    metadata: { name: 'shared-secret' },
    data: { token: Buffer.from('s3cret').toString('base64') },
  });
  await mustCall(api, 'POST', `/api/v1/namespaces/${NS}/services`, {
    metadata: { name: 'shared-svc' },
    spec: { ports: [{ name: 'http', port: 80 }] },
  });
  return ['configmaps/shared-conf (volume)', 'secrets/shared-secret (env)', 'services/shared-svc (env vars)'];
}

/** Objects of SHARED the pods may each need a watch for: the ConfigMap and the Secret. */
const WATCHABLE_SHARED = 2;

/** Events of the namespace by reason, each counted `count` times (a repeat is a count patch). */
function eventsByReason(api: TestApiserver, minus: Record<string, number> = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of api.store.list('events', NS)) {
    const reason = String(e.reason);
    out[reason] = (out[reason] ?? 0) + Number(e.count ?? 1);
  }
  for (const [k, n] of Object.entries(minus)) out[k] = (out[k] ?? 0) - n;
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n > 0));
}

const isReady = (p: Obj) =>
  ((p.status as Obj | undefined)?.conditions as { type: string; status: string }[] | undefined)?.some(
    (c) => c.type === 'Ready' && c.status === 'True',
  ) ?? false;

function phase(before: TrafficSnapshot, after: TrafficSnapshot, load: number): PhaseTraffic {
  const d = trafficBetween(before, after);
  return {
    requests: d.requests,
    total: d.total,
    watch_restarts: d.watchRestarts,
    relists: d.relists,
    load_avg_1m: round((load + loadavg()[0]!) / 2),
  };
}

const summary = (xs: number[]) => ({
  p50: percentile(xs, 50),
  max: Math.max(...xs),
  mean: round(xs.reduce((a, b) => a + b, 0) / xs.length),
});

async function idlePhase(api: TestApiserver, seconds: number): Promise<ApiTrafficResult['idle']> {
  const load = loadavg()[0]!;
  const before = api.traffic.snapshot(AGENT);
  await sleep(seconds * 1000);
  const after = api.traffic.snapshot(AGENT);
  const d = trafficBetween(before, after);
  const perMin = (n: number) => round((n * 60) / d.seconds);
  return {
    seconds: round(d.seconds, 1),
    requests_per_minute: perMin(d.total),
    by_kind_per_minute: Object.fromEntries(Object.entries(d.requests).map(([k, n]) => [k, perMin(n)])),
    open_watches: after.openWatches,
    watch_restarts: d.watchRestarts,
    watch_restarts_expected_per_minute: round((after.openWatches.length * 60) / 450),
    load_avg_1m: round((load + loadavg()[0]!) / 2),
  };
}

/** Status PATCHes of each pod (by name), from the apiserver's request log, up to `until(name)`. */
function statusWrites(api: TestApiserver, names: string[], until: (name: string) => number): number[] {
  const counts = new Map(names.map((n) => [n, 0]));
  const re = new RegExp(`^/api/v1/namespaces/${NS}/pods/([^/]+)/status$`);
  for (const r of api.requests) {
    const name = r.method === 'PATCH' ? re.exec(r.path)?.[1] : undefined;
    if (name && counts.has(name) && r.at <= until(name)) counts.set(name, counts.get(name)! + 1);
  }
  return [...counts.values()];
}

async function podsPhase(api: TestApiserver, pods: number): Promise<ApiTrafficResult['pods']> {
  const shared = await sharedObjects(api);
  const names = Array.from({ length: pods }, (_, i) => `tr${i}`);
  const readyAt = new Map<string, number>();
  const unsubscribe = api.store.subscribe((c) => {
    const name = c.object.metadata?.name as string;
    if (c.plural === 'pods' && c.type !== 'DELETED' && !readyAt.has(name) && isReady(c.object))
      readyAt.set(name, Date.now());
  });
  let load = loadavg()[0]!;
  const t0 = Date.now();
  const s0 = api.traffic.snapshot(AGENT);
  for (const n of names) await mustCall(api, 'POST', `/api/v1/namespaces/${NS}/pods`, podBody(n));
  await waitFor(`${pods} pods Ready`, 10 * 60_000, () => (readyAt.size >= pods ? true : undefined), 200);
  const allReady = (Date.now() - t0) / 1000;
  await sleep(10_000); // the follow-up writes of the start belong to it
  unsubscribe();
  const s1 = api.traffic.snapshot(AGENT);
  const start = { ...phase(s0, s1, load), all_ready_s: round(allReady, 1) };
  const startEvents = eventsByReason(api);
  load = loadavg()[0]!;
  const t1 = Date.now();
  for (const n of names)
    await mustCall(api, 'DELETE', `/api/v1/namespaces/${NS}/pods/${n}`, { kind: 'DeleteOptions', apiVersion: 'v1' });
  await waitFor(
    'pods gone from the API',
    10 * 60_000,
    () => (api.store.list('pods', NS).length === 0 ? true : undefined),
    200,
  );
  const allGone = (Date.now() - t1) / 1000;
  await sleep(10_000);
  const s2 = api.traffic.snapshot(AGENT);
  const del = { ...phase(s1, s2, load), all_gone_s: round(allGone, 1) };
  const events = (p: PhaseTraffic) => (p.requests['create events'] ?? 0) + (p.requests['patch events'] ?? 0);
  return {
    count: pods,
    shared_objects: shared,
    start,
    delete: del,
    status_writes_to_ready: summary(statusWrites(api, names, (n) => readyAt.get(n)!)),
    status_writes_per_pod_lifetime: summary(statusWrites(api, names, () => Infinity)),
    event_writes: {
      start: events(start),
      delete: events(del),
      per_pod_start: round(events(start) / pods),
      per_pod_delete: round(events(del) / pods),
    },
    events_by_reason: { start: startEvents, delete: eventsByReason(api, startEvents) },
    open_watches_at_pods: s1.openWatches,
    open_watches_after_delete: s2.openWatches,
    peak_open_watches: s2.peakOpenWatches,
  };
}

async function cleanRuntime(endpoint: string): Promise<void> {
  const { runtime, images } = connectRuntime(endpoint);
  try {
    await removeTestPods(runtime, { namespace: NS }, endpoint);
  } finally {
    runtime.close();
    images.close();
  }
}

const nodeReady = (api: TestApiserver) =>
  (
    ((api.store.get('nodes', undefined, NODE)?.status as Obj | undefined)?.conditions as
      { type: string; status: string }[] | undefined) ?? []
  ).some((c) => c.type === 'Ready' && c.status === 'True');

export async function runApiTraffic(
  endpoint: string,
  opts: { idleSeconds: number; pods: number },
): Promise<ApiTrafficResult> {
  await cleanRuntime(endpoint);
  const dirs = makeKubeletDirs();
  const api = await startTestApiserver();
  const k = startKubelet({
    ...dirs,
    endpoint,
    logLevel: 'info',
    extraArgs: [`--kubeconfig=${api.kubeconfig(dirs.dir)}`],
  });
  try {
    await waitFor('node Ready', 120_000, () => (nodeReady(api) ? true : undefined), 200);
    await waitFor('agent serving /pods', 60_000, async () => ((await getPods(k)) ? true : undefined), 200);
    await sleep(15_000); // the start-up writes (first statuses, events) are not idle traffic
    const idle = await idlePhase(api, opts.idleSeconds);
    const pods = await podsPhase(api, opts.pods);
    const met = {
      idle: idle.requests_per_minute <= 12,
      watches_independent_of_pods:
        pods.open_watches_at_pods.length - idle.open_watches.length <= WATCHABLE_SHARED &&
        pods.peak_open_watches - idle.open_watches.length <= WATCHABLE_SHARED,
      status_writes_to_ready: pods.status_writes_to_ready.max <= 3,
    };
    return { idle, pods, goals: { idle_max_per_minute: 12, status_writes_to_ready_max: 3, met } };
  } finally {
    await stopKubelet(k);
    await api.stop();
    rmSync(dirs.dir, { recursive: true, force: true });
    await cleanRuntime(endpoint);
  }
}

export function printApiTraffic(r: ApiTrafficResult): void {
  const kinds = (m: Record<string, number>) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  const i = r.idle;
  console.log(`\n(api) API traffic per node (agent's requests to the test apiserver)`);
  console.log(`idle ${i.seconds} s, no pods: ${i.requests_per_minute} requests/min (${kinds(i.by_kind_per_minute)})`);
  console.log(`  open watches ${i.open_watches.length}: ${i.open_watches.join(' ')}`);
  const p = r.pods;
  console.log(`${p.count} pods: all Ready in ${p.start.all_ready_s} s, gone in ${p.delete.all_gone_s} s`);
  console.log(
    `  status writes per pod to Ready: p50 ${p.status_writes_to_ready.p50} max ${p.status_writes_to_ready.max}; whole life p50 ${p.status_writes_per_pod_lifetime.p50} max ${p.status_writes_per_pod_lifetime.max}`,
  );
  console.log(`  event writes: start ${p.event_writes.start}, delete ${p.event_writes.delete}`);
  console.log(
    `  events by reason: start ${kinds(p.events_by_reason.start)}; delete ${kinds(p.events_by_reason.delete)}`,
  );
  console.log(`  start: ${p.start.total} requests (${kinds(p.start.requests)})`);
  console.log(`  delete: ${p.delete.total} requests (${kinds(p.delete.requests)})`);
  console.log(
    `  watch restarts ${p.start.watch_restarts + p.delete.watch_restarts}; open watches at ${p.count} pods ${p.open_watches_at_pods.length}, after delete ${p.open_watches_after_delete.length}`,
  );
  console.log(`  goals met: ${JSON.stringify(r.goals.met)}`);
}

const argOf = (argv: string[], name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
};

/** Run by bench/index.ts (full run) or alone; writes bench/results/api-traffic.json. */
export async function main(endpoint: string, opts: { idleSeconds?: number; pods?: number } = {}): Promise<void> {
  const idleSeconds = opts.idleSeconds ?? 120;
  const pods = opts.pods ?? 100;
  const run = startRun(
    `node dist/bench/api-traffic.js --endpoint ${endpoint} --idle-seconds ${idleSeconds} --pods ${pods}`,
  );
  const result = await runApiTraffic(endpoint, { idleSeconds, pods });
  printApiTraffic(result);
  console.log(`wrote ${writeResult('api-traffic.json', run.finish(), result)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const endpoint = argOf(argv, 'endpoint');
  if (!endpoint) {
    process.stderr.write(
      'usage: node dist/bench/api-traffic.js --endpoint unix:///path/containerd.sock [--idle-seconds 120] [--pods 100]\n',
    );
    process.exit(2);
  }
  await main(endpoint, {
    idleSeconds: Number(argOf(argv, 'idle-seconds') ?? 120),
    pods: Number(argOf(argv, 'pods') ?? 100),
  });
  process.exit(0);
}
