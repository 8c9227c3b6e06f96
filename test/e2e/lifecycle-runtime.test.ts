/**
 * Pod lifecycle rules of the runtime manager against real containerd (the shared test daemon):
 * lifecycle hooks, crash-loop and image-pull back-off, init and sidecar containers, resources and
 * QoS down to the cgroup files and oom_score_adj, pod cgroups, volumes (tmpfs emptyDir, hostPath,
 * downward API), garbage collection policy and orphans made directly through the CRI.
 *
 * Isolation: every manager sees only this file's namespace (`scoped()`), pod cgroups live under a
 * cgroup root of their own, and `after()` removes pods, mounts, cgroups and directories. Every wait
 * is bounded.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { Cgroupfs, detectCgroupMounts } from '../../src/cm/index.js';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import type { ContainerConfig, PodSandboxConfig, RuntimeService } from '../../src/cri/types.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, runningPodFromStatus, type RuntimeManagerDeps } from '../../src/kuberuntime/index.js';
import { createVolumeManager, type VolumeManager } from '../../src/volume/index.js';
import { mountsUnder, unmount } from '../../src/volume/mount.js';
import type { PodRuntimeStatus, PodSyncResult, Runtime } from '../../src/kuberuntime/types.js';
import { TEST_IMAGES, TEST_STATE_DIR, removeTestPods, runtimeEndpoint, uniqueName } from '../support/containerd.js';
import { testTempDir } from '../support/temp-dir.js';

const NS = uniqueName('kts-lr');
const CGROUP_ROOT = `/${uniqueName('kts-lr-cg')}`;
const GiB = 2 ** 30;
const MiB = 2 ** 20;
const T = { timeout: 60_000 };

let conn: CriConnection;
let runtime: RuntimeService;
let dir: string;
let rt: Runtime;
/** containerd's own oom_score_adj: with restrict_oom_score_adj no container goes below it. */
let daemonOomScoreAdj = 0;
const stops: Array<{ id: string; timeout: number; at: number }> = [];
const mounts = detectCgroupMounts();
const cgroupfs = new Cgroupfs(mounts);

/** The runtime as seen by this file: lists return only objects of our namespace; StopContainer calls are recorded. */
function scoped(target: RuntimeService): RuntimeService {
  const ours = (labels: Record<string, string>) => labels['io.kubernetes.pod.namespace'] === NS;
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === 'listPodSandbox')
        return async (f?: Parameters<RuntimeService['listPodSandbox']>[0]) =>
          (await t.listPodSandbox(f)).filter((s) => ours(s.labels));
      if (prop === 'listContainers')
        return async (f?: Parameters<RuntimeService['listContainers']>[0]) =>
          (await t.listContainers(f)).filter((c) => ours(c.labels));
      if (prop === 'stopContainer') {
        return (id: string, timeout: number) => {
          stops.push({ id, timeout, at: Date.now() });
          return t.stopContainer(id, timeout);
        };
      }
      const v = Reflect.get(t, prop, receiver);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/** The volume manager every runtime manager of this file shares, as main.ts wires them. */
let volumes: VolumeManager | undefined;

function manager(extra: Partial<RuntimeManagerDeps> = {}): Runtime {
  volumes ??= createVolumeManager({
    rootDir: join(dir, 'root'),
    nodeName: 'e2e-node',
    hostIP: '127.0.0.1',
    allocatable: { cpu: 3000, memory: 4 * GiB },
  });
  return createRuntimeManager({
    runtime,
    imageManager: createImageManager({ images: conn.images, pullBackOff: { initialMs: 1000, maxMs: 60_000 } }),
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    nodeName: 'e2e-node',
    hostIP: '127.0.0.1',
    memoryCapacity: 4 * GiB,
    nodeAllocatable: { cpuMilli: 3000 },
    cgroupRoot: CGROUP_ROOT,
    crashLoopBackOff: { initialMs: 1000, maxMs: 60_000 },
    volumes,
    ...extra,
  });
}

function busybox(name: string, script: string, extra: Partial<Container> = {}): Container {
  return { name, image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra };
}

/** Exits at once on SIGTERM. */
const SLEEPER = "trap 'exit 0' TERM; while true; do sleep 1 & wait; done";

function makePod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: randomUUID(),
      labels: { app: name, tier: 'e2e' },
      annotations: { note: 'lifecycle' },
    },
    spec: { containers, restartPolicy: 'Always', terminationGracePeriodSeconds: 5, ...spec },
  };
}

function status(pod: Pod, r: Runtime = rt): Promise<PodRuntimeStatus> {
  return r.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, NS);
}

/** As the kubelet: the pod's volumes, then the runtime's sync. */
async function syncOnce(pod: Pod, r: Runtime): Promise<PodSyncResult> {
  await volumes!.mountPodVolumes(pod);
  return r.syncPod(pod, await status(pod, r));
}

async function sync(pod: Pod, r: Runtime = rt): Promise<PodSyncResult> {
  const result = await syncOnce(pod, r);
  assert.equal(result.error, undefined, `sync error: ${result.error?.message}`);
  return result;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Polls until check returns a value (not undefined) or the deadline passes. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  everyMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Syncs the pod repeatedly (as the pod worker would) until check passes. */
async function syncUntil<T>(
  what: string,
  pod: Pod,
  check: (st: PodRuntimeStatus, last: PodSyncResult) => T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  return waitFor(
    what,
    async () => {
      const result = await syncOnce(pod, rt);
      assert.equal(result.error, undefined, `sync error: ${result.error?.message}`);
      return check(await status(pod, rt), result);
    },
    timeoutMs,
  );
}

function newest(st: PodRuntimeStatus, name: string) {
  return st.containerStatuses.find((c) => c.name === name);
}

function running(pod: Pod, names = pod.spec!.containers.map((c) => c.name)) {
  return (st: PodRuntimeStatus) => (names.every((n) => newest(st, n)?.state === 'running') ? st : undefined);
}

async function exec(containerId: string, script: string): Promise<string> {
  const r = await conn.runtime.execSync(containerId, ['sh', '-c', script], 10);
  assert.equal(r.exitCode, 0, `exec ${script}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function killAndCollect(pod: Pod, r: Runtime = rt): Promise<void> {
  const st = await status(pod, r);
  await r.killPod(pod, runningPodFromStatus(st), 0);
}

function emptyDirOnHost(pod: Pod, volume: string): string {
  return join(dir, 'root', 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', volume);
}

function dataVolume(name = 'data'): { volumes: NonNullable<Pod['spec']>['volumes'] } {
  return { volumes: [{ name, emptyDir: {} }] };
}

const dataMount = [{ name: 'data', mountPath: '/data' }];

before(async () => {
  conn = connectRuntime(await runtimeEndpoint());
  runtime = scoped(conn.runtime);
  dir = testTempDir('kts-lifecycle-e2e-');
  rt = manager();
  assert.ok(await conn.images.imageStatus(TEST_IMAGES.busybox), 'the local busybox image is imported');
  const pid = (await readFile(join(TEST_STATE_DIR, 'containerd.pid'), 'utf8').catch(() => '')).trim();
  if (pid) daemonOomScoreAdj = Number((await readFile(`/proc/${pid}/oom_score_adj`, 'utf8').catch(() => '0')).trim());
});

after(async () => {
  await removeTestPods(conn.runtime, { namespace: NS }).catch((err) => console.error('pod cleanup failed', err));
  for (const m of await mountsUnder(dir)) await unmount(m).catch((err) => console.error('unmount failed', err));
  await cgroupfs.destroy(CGROUP_ROOT).catch((err) => console.error('cgroup cleanup failed', err));
  conn.runtime.close();
  conn.images.close();
  await rm(dir, { recursive: true, force: true });
});

describe('lifecycle hooks', () => {
  it(
    'postStart exec runs right after start; postStart httpGet sends path, headers and follows a same-host redirect',
    T,
    async () => {
      const hits: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
      const server = http.createServer((req, res) => {
        hits.push({ url: req.url ?? '', headers: req.headers });
        if (req.url?.startsWith('/hook')) {
          res.writeHead(302, { Location: '/final' });
          res.end();
        } else {
          res.end('x'.repeat(100_000));
        }
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      try {
        const pod = makePod('poststart', [
          busybox('exec', SLEEPER, {
            lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo started > /tmp/poststart'] } } },
          }),
          busybox('http', SLEEPER, {
            lifecycle: {
              postStart: {
                httpGet: { host: '127.0.0.1', port, path: '/hook?x=1', httpHeaders: [{ name: 'X-Test', value: 'v' }] },
              },
            },
          }),
        ]);
        const result = await sync(pod);
        assert.deepEqual([...result.waiting], []);
        const st = await waitFor('poststart running', async () => running(pod)(await status(pod)));
        assert.equal((await exec(newest(st, 'exec')!.id, 'cat /tmp/poststart')).trim(), 'started');
        assert.deepEqual(
          hits.map((h) => h.url),
          ['/hook?x=1', '/final'],
        );
        assert.equal(hits[0]!.headers['x-test'], 'v');
        assert.match(hits[0]!.headers['user-agent'] ?? '', /^kube-lifecycle\//);
        assert.equal(hits[0]!.headers.accept, '*/*');
        await killAndCollect(pod);
      } finally {
        server.close();
      }
    },
  );

  it('a failed postStart kills the container (PostStartHookError) and it is restarted per policy', T, async () => {
    const pod = makePod('poststart-fail', [
      busybox('main', SLEEPER, {
        lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo nope >&2; exit 7'] } } },
      }),
    ]);
    const result = await sync(pod);
    const waiting = result.waiting.get('main');
    assert.equal(waiting?.reason, 'PostStartHookError');
    assert.match(waiting!.message, /Exec lifecycle hook .* failed - error: .*exited with 7/);
    const first = newest(await status(pod), 'main')!;
    assert.equal(first.state, 'exited', 'the container was killed');
    // The next sync restarts it (the first restart is not delayed) and it fails the same way.
    const again = await sync(pod);
    assert.equal(again.waiting.get('main')?.reason, 'PostStartHookError');
    assert.equal(newest(await status(pod), 'main')!.restartCount, 1);
    await killAndCollect(pod);
  });

  it('preStop exec runs before SIGTERM; StopContainer gets the grace period left after the hook', T, async () => {
    const pod = makePod(
      'prestop',
      [
        busybox('main', "trap 'echo term >> /data/events; exit 0' TERM; while true; do sleep 1 & wait; done", {
          volumeMounts: dataMount,
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /data/events; sleep 2'] } } },
        }),
      ],
      { terminationGracePeriodSeconds: 6, ...dataVolume() },
    );
    await sync(pod);
    const st = await waitFor('prestop running', async () => running(pod)(await status(pod)));
    const t0 = Date.now();
    await rt.killPod(pod, runningPodFromStatus(st));
    const elapsed = Date.now() - t0;
    const stop = stops.filter((s) => s.id === newest(st, 'main')!.id).pop()!;
    assert.ok(stop.at - t0 >= 2000, `StopContainer came ${stop.at - t0} ms after the kill began: after the hook`);
    assert.ok(stop.timeout === 4 || stop.timeout === 3, `StopContainer grace ${stop.timeout} = 6 - time in preStop`);
    assert.ok(elapsed < 6000, `the whole kill took ${elapsed} ms`);
    assert.equal(await readFile(join(emptyDirOnHost(pod, 'data'), 'events'), 'utf8'), 'prestop\nterm\n');
  });

  it(
    'a preStop hook that outlasts the grace period is cut off; the container then gets 2 s, then SIGKILL',
    T,
    async () => {
      const pod = makePod(
        'prestop-slow',
        [
          {
            name: 'deaf',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sleep', '3600'],
            lifecycle: { preStop: { exec: { command: ['sleep', '30'] } } },
          },
        ],
        { terminationGracePeriodSeconds: 3 },
      );
      await sync(pod);
      const st = await waitFor('deaf running', async () => running(pod)(await status(pod)));
      const t0 = Date.now();
      await rt.killPod(pod, runningPodFromStatus(st));
      const elapsed = Date.now() - t0;
      const stop = stops.filter((s) => s.id === newest(st, 'deaf')!.id).pop()!;
      assert.equal(stop.timeout, 2, 'the minimum grace after the hook used it all');
      assert.ok(elapsed >= 4500 && elapsed < 9000, `3 s of hook + 2 s before SIGKILL, took ${elapsed} ms`);
      const after = newest(await status(pod), 'deaf')!;
      assert.equal(after.state, 'exited');
      assert.equal(after.exitCode, 137, 'killed by SIGKILL');
    },
  );

  it('preStop httpGet goes to the pod IP on a named port', T, async () => {
    const cgi = '#!/bin/sh\\necho prestop-http >> /data/events\\necho "Content-Type: text/plain"\\necho\\necho ok\\n';
    const pod = makePod(
      'prestop-http',
      [
        busybox(
          'web',
          `mkdir -p /www/cgi-bin && printf '${cgi}' > /www/cgi-bin/stop && chmod +x /www/cgi-bin/stop && httpd -p 8080 -h /www && touch /data/ready; trap 'echo term >> /data/events; exit 0' TERM; while true; do sleep 1 & wait; done`,
          {
            ports: [{ name: 'web', containerPort: 8080 }],
            volumeMounts: dataMount,
            lifecycle: { preStop: { httpGet: { port: 'web', path: '/cgi-bin/stop' } } },
          },
        ),
      ],
      dataVolume(),
    );
    await sync(pod);
    const st = await waitFor('web running', async () => running(pod)(await status(pod)));
    assert.equal(st.ips.length, 1);
    // httpd listens once it has returned (it binds before going to the background).
    await waitFor(
      'httpd listening',
      async () => (existsSync(join(emptyDirOnHost(pod, 'data'), 'ready')) ? true : undefined),
      10_000,
    );
    await rt.killPod(pod, runningPodFromStatus(st));
    assert.equal(await readFile(join(emptyDirOnHost(pod, 'data'), 'events'), 'utf8'), 'prestop-http\nterm\n');
  });
});

describe('back-off', () => {
  it('CrashLoopBackOff doubles from the configured base: immediate, 1 s, 2 s, 4 s', T, async () => {
    const pod = makePod('crashloop', [busybox('c', 'exit 1')]);
    const starts: number[] = [];
    const finishes: number[] = [];
    const messages = new Set<string>();
    const seen = new Set<string>();
    await syncUntil(
      'four restarts',
      pod,
      (st, result) => {
        const w = result.waiting.get('c');
        if (w?.reason === 'CrashLoopBackOff') messages.add(w.message.split(' ')[1]!);
        for (const c of [...st.containerStatuses].reverse()) {
          if (c.name !== 'c' || seen.has(c.id) || c.state !== 'exited') continue;
          seen.add(c.id);
          starts.push(c.startedAt!.getTime());
          finishes.push(c.finishedAt!.getTime());
        }
        return seen.size >= 5 ? true : undefined;
      },
      30_000,
    );
    const delays = starts.slice(1).map((s, i) => s - finishes[i]!);
    const [d0, d1, d2, d3] = delays as [number, number, number, number];
    assert.ok(d0 < 1000, `first restart immediate: ${d0} ms`);
    assert.ok(d1 >= 1000 && d1 < 2500, `second after 1 s: ${d1} ms`);
    assert.ok(d2 >= 2000 && d2 < 3500, `third after 2 s: ${d2} ms`);
    assert.ok(d3 >= 4000 && d3 < 5500, `fourth after 4 s: ${d3} ms`);
    for (const m of ['1s', '2s', '4s'])
      assert.ok(messages.has(m), `waiting message "back-off ${m}" seen (${[...messages]})`);
    // GC keeps one dead instance per container of an active pod.
    await rt.garbageCollect(new Set([pod.metadata!.uid!]));
    assert.ok((await status(pod)).containerStatuses.filter((c) => c.state === 'exited').length <= 1);
    await killAndCollect(pod);
  });

  it('with the real defaults the first back-off step is 10 s', T, async () => {
    const real = manager({ crashLoopBackOff: undefined });
    const pod = makePod('crashloop-default', [busybox('c', 'exit 1')]);
    await sync(pod, real);
    await waitFor('first exit', async () => (newest(await status(pod), 'c')?.state === 'exited' ? true : undefined));
    await sync(pod, real);
    await waitFor('second exit', async () =>
      newest(await status(pod), 'c')?.restartCount === 1 && newest(await status(pod), 'c')?.state === 'exited'
        ? true
        : undefined,
    );
    const r = await sync(pod, real);
    assert.equal(r.waiting.get('c')?.reason, 'CrashLoopBackOff');
    assert.match(r.waiting.get('c')!.message, /^back-off 10s restarting failed container=c /);
    await killAndCollect(pod, real);
  });

  it('ErrImagePull then ImagePullBackOff with the same doubling back-off', T, async () => {
    const pod = makePod('imagepull', [
      { name: 'ghost', image: '127.0.0.1:1/kubelet-ts/missing:latest', imagePullPolicy: 'Always', command: ['true'] },
    ]);
    const reason = async () => (await sync(pod)).waiting.get('ghost')?.reason;
    assert.equal(await reason(), 'ErrImagePull');
    assert.equal(await reason(), 'ImagePullBackOff');
    await sleep(1100);
    assert.equal(await reason(), 'ErrImagePull', 'retried after 1 s');
    assert.equal(await reason(), 'ImagePullBackOff');
    await sleep(1100);
    assert.equal(await reason(), 'ImagePullBackOff', 'the delay is now 2 s');
    await sleep(1000);
    assert.equal(await reason(), 'ErrImagePull');
    await killAndCollect(pod);
  });
});

describe('init containers', () => {
  it('run one by one, each exiting 0 before the next, then the app', T, async () => {
    const pod = makePod('init-order', [busybox('app', `cat /data/order; ${SLEEPER}`, { volumeMounts: dataMount })], {
      initContainers: [
        busybox('init1', 'sleep 1; echo 1 >> /data/order', { volumeMounts: dataMount }),
        busybox('init2', 'echo 2 >> /data/order', { volumeMounts: dataMount }),
      ],
      ...dataVolume(),
    });
    const st = await syncUntil('app running', pod, running(pod));
    const i1 = newest(st, 'init1')!;
    const i2 = newest(st, 'init2')!;
    assert.equal(i1.exitCode, 0);
    assert.equal(i2.exitCode, 0);
    assert.ok(i2.startedAt!.getTime() >= i1.finishedAt!.getTime(), 'init2 started after init1 finished');
    assert.ok(newest(st, 'app')!.startedAt!.getTime() >= i2.finishedAt!.getTime(), 'app started after init2 finished');
    assert.equal(await readFile(join(emptyDirOnHost(pod, 'data'), 'order'), 'utf8'), '1\n2\n');
    await killAndCollect(pod);
  });

  it('a failed init container under restartPolicy Never fails the pod: killed, the app never created', T, async () => {
    const pod = makePod('init-never', [busybox('app', SLEEPER)], {
      restartPolicy: 'Never',
      initContainers: [busybox('init', 'exit 3')],
    });
    const st = await syncUntil('pod killed', pod, (s) =>
      newest(s, 'init')?.state === 'exited' && s.sandboxStatuses.every((x) => !x.ready) ? s : undefined,
    );
    assert.equal(newest(st, 'init')!.exitCode, 3);
    assert.equal(newest(st, 'init')!.restartCount, 0, 'not retried');
    assert.equal(newest(st, 'app'), undefined);
    // Further syncs start nothing.
    await sync(pod);
    assert.equal(newest(await status(pod), 'app'), undefined);
  });

  it('a failed init container under Always is retried with back-off', T, async () => {
    const pod = makePod('init-retry', [busybox('app', SLEEPER)], { initContainers: [busybox('init', 'exit 3')] });
    const reasons = new Set<string>();
    const st = await syncUntil('init retried twice', pod, (s, r) => {
      const w = r.waiting.get('init');
      if (w) reasons.add(w.reason);
      return newest(s, 'init')!.restartCount >= 2 && newest(s, 'init')!.state === 'exited' ? s : undefined;
    });
    assert.ok(reasons.has('CrashLoopBackOff'), 'waited in back-off between retries');
    assert.equal(newest(st, 'app'), undefined);
    await killAndCollect(pod);
  });

  it(
    'a sidecar starts before the next init container, runs beside the app, restarts, and stops after the app',
    T,
    async () => {
      const pod = makePod(
        'sidecar',
        [
          busybox('app', "trap 'sleep 1; echo app >> /data/events; exit 0' TERM; while true; do sleep 1 & wait; done", {
            volumeMounts: dataMount,
          }),
        ],
        {
          terminationGracePeriodSeconds: 10,
          initContainers: [
            busybox(
              'sidecar',
              "touch /data/up; trap 'echo sidecar >> /data/events; exit 0' TERM; while true; do sleep 1 & wait; done",
              { restartPolicy: 'Always', volumeMounts: dataMount },
            ),
            busybox('wait-sidecar', 'for i in $(seq 50); do test -f /data/up && exit 0; sleep 0.1; done; exit 1', {
              volumeMounts: dataMount,
            }),
          ],
          ...dataVolume(),
        },
      );
      const st = await syncUntil('app running', pod, running(pod));
      assert.equal(newest(st, 'sidecar')!.state, 'running', 'the sidecar runs beside the app');
      assert.equal(newest(st, 'wait-sidecar')!.exitCode, 0, 'the next init container found the sidecar started');
      assert.ok(newest(st, 'wait-sidecar')!.startedAt!.getTime() >= newest(st, 'sidecar')!.startedAt!.getTime());
      // The sidecar dies: it is restarted while the app keeps running.
      await conn.runtime.stopContainer(newest(st, 'sidecar')!.id, 0);
      const st2 = await syncUntil('sidecar restarted', pod, (s) =>
        newest(s, 'sidecar')?.restartCount === 1 && newest(s, 'sidecar')?.state === 'running' ? s : undefined,
      );
      assert.equal(newest(st2, 'app')!.id, newest(st, 'app')!.id, 'the app was not touched');
      await writeFile(join(emptyDirOnHost(pod, 'data'), 'events'), '');
      await rt.killPod(pod, runningPodFromStatus(st2));
      assert.equal(
        await readFile(join(emptyDirOnHost(pod, 'data'), 'events'), 'utf8'),
        'app\nsidecar\n',
        'regular containers first, then the sidecar',
      );
      const end = await status(pod);
      assert.ok(newest(end, 'sidecar')!.finishedAt!.getTime() >= newest(end, 'app')!.finishedAt!.getTime());
    },
  );
});

/** The container's cgroup path (v1) for a controller, from /proc/1/cgroup inside it. */
async function cgroupOf(containerId: string, controller: string): Promise<string> {
  const text = await exec(containerId, 'cat /proc/1/cgroup');
  for (const line of text.split('\n')) {
    const [, ctrls, path] = line.split(':');
    if (ctrls?.split(',').includes(controller)) return path!;
  }
  throw new Error(`no ${controller} cgroup in ${text}`);
}

function v1File(controller: string, cgroup: string, file: string): Promise<string> {
  const mount = [...mounts.v1].find(([, c]) => c.includes(controller))![0];
  return readFile(join(mount, cgroup, file), 'utf8').then((s) => s.trim());
}

describe('resources, QoS and pod cgroups', () => {
  const hasV1 =
    [...mounts.v1.values()].some((c) => c.includes('cpu')) && [...mounts.v1.values()].some((c) => c.includes('memory'));

  it(
    'oom_score_adj, cpu shares/quota/period and memory limit reach each container; pods sit in kubepods/<qos>/pod<uid>',
    { ...T, skip: hasV1 ? false : 'no cgroup v1 cpu/memory hierarchy' },
    async () => {
      const guaranteed = makePod('qos-guaranteed', [
        busybox('main', SLEEPER, { resources: { limits: { cpu: '200m', memory: '64Mi' } } }),
      ]);
      const burstable = makePod('qos-burstable', [
        busybox('main', SLEEPER, {
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
        }),
      ]);
      const besteffort = makePod('qos-besteffort', [busybox('main', SLEEPER)]);
      const want = {
        guaranteed: {
          parent: `${CGROUP_ROOT}/kubepods/pod${guaranteed.metadata!.uid}`,
          oom: -997,
          shares: '204',
          quota: '20000',
          memory: String(64 * MiB),
        },
        burstable: {
          parent: `${CGROUP_ROOT}/kubepods/burstable/pod${burstable.metadata!.uid}`,
          oom: 1000 - Math.trunc((1000 * 256 * MiB) / (4 * GiB)),
          shares: '256',
          quota: '50000',
          memory: String(512 * MiB),
        },
        besteffort: {
          parent: `${CGROUP_ROOT}/kubepods/besteffort/pod${besteffort.metadata!.uid}`,
          oom: 1000,
          shares: '2',
          quota: '-1',
          memory: undefined,
        },
      };
      const pods = { guaranteed, burstable, besteffort };
      for (const pod of Object.values(pods)) await sync(pod);
      for (const [qos, pod] of Object.entries(pods) as Array<[keyof typeof want, Pod]>) {
        const st = await waitFor(`${qos} running`, async () => running(pod)(await status(pod)));
        const id = newest(st, 'main')!.id;
        const w = want[qos];
        const oom = Number((await exec(id, 'cat /proc/1/oom_score_adj')).trim());
        assert.equal(
          oom,
          Math.max(w.oom, daemonOomScoreAdj),
          `${qos} oom_score_adj (containerd restricts it to ≥ ${daemonOomScoreAdj})`,
        );
        const cpuCg = await cgroupOf(id, 'cpu');
        const memCg = await cgroupOf(id, 'memory');
        assert.ok(cpuCg.startsWith(`${w.parent}/`), `${qos} container cgroup ${cpuCg} under ${w.parent}`);
        assert.ok(memCg.startsWith(`${w.parent}/`), `${qos} memory cgroup ${memCg}`);
        assert.equal(await v1File('cpu', cpuCg, 'cpu.shares'), w.shares, `${qos} cpu.shares`);
        assert.equal(await v1File('cpu', cpuCg, 'cpu.cfs_quota_us'), w.quota, `${qos} cfs quota`);
        assert.equal(await v1File('cpu', cpuCg, 'cpu.cfs_period_us'), '100000', `${qos} cfs period`);
        const limit = await v1File('memory', memCg, 'memory.limit_in_bytes');
        if (w.memory) assert.equal(limit, w.memory, `${qos} memory limit`);
        else assert.ok(Number(limit) > 2 ** 60, `${qos} unlimited memory (${limit})`);
        // The pod cgroup carries the pod-level values.
        assert.equal(await v1File('cpu', w.parent, 'cpu.shares'), w.shares, `${qos} pod cgroup cpu.shares`);
        if (qos !== 'besteffort') {
          assert.equal(await v1File('cpu', w.parent, 'cpu.cfs_quota_us'), w.quota, `${qos} pod cgroup quota`);
          assert.equal(
            await v1File('memory', w.parent, 'memory.limit_in_bytes'),
            w.memory,
            `${qos} pod cgroup memory limit`,
          );
        }
        if (mounts.unified)
          assert.ok(existsSync(join(mounts.unified, w.parent)), `${qos} pod cgroup in the unified tree too`);
      }
      // QoS cgroups: BestEffort gets the minimum shares, Burstable the sum of its pods' requests.
      assert.equal(await v1File('cpu', `${CGROUP_ROOT}/kubepods/besteffort`, 'cpu.shares'), '2');
      assert.equal(await v1File('cpu', `${CGROUP_ROOT}/kubepods/burstable`, 'cpu.shares'), '256');
      assert.equal(await v1File('cpu', `${CGROUP_ROOT}/kubepods`, 'cpu.shares'), '3072', 'node allocatable 3 CPUs');
      // Gone pods lose their cgroups (after their containers) at the next housekeeping pass.
      for (const pod of Object.values(pods)) await killAndCollect(pod);
      await rt.cleanupOrphanedPodCgroups(async () => false);
      for (const w of Object.values(want)) {
        for (const p of cgroupfs.paths(w.parent)) assert.equal(existsSync(p), false, `${p} removed`);
      }
    },
  );

  it('cgroupsPerQOS false leaves the cgroups to the runtime', T, async () => {
    const flat = manager({ cgroupsPerQOS: false });
    const pod = makePod('no-pod-cgroup', [busybox('main', SLEEPER)]);
    await sync(pod, flat);
    const st = await waitFor('running', async () => running(pod)(await status(pod, flat)));
    if (hasV1) assert.ok(!(await cgroupOf(newest(st, 'main')!.id, 'cpu')).includes('kubepods'));
    await killAndCollect(pod, flat);
  });
});

describe('security context', () => {
  it(
    'capabilities, readOnlyRootFilesystem, allowPrivilegeEscalation false, seccomp RuntimeDefault and sysctls reach the container',
    T,
    async () => {
      const pod = makePod(
        'hardened',
        [
          busybox('main', SLEEPER, {
            securityContext: {
              capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
            },
          }),
          busybox('plain', SLEEPER, { securityContext: { appArmorProfile: { type: 'Unconfined' } } }),
        ],
        {
          securityContext: {
            seccompProfile: { type: 'RuntimeDefault' },
            sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '20000 30000' }],
          },
        },
      );
      assert.deepEqual([...(await sync(pod)).waiting], []);
      const st = await waitFor('hardened running', async () => running(pod)(await status(pod)));
      const procStatus = (name: string) => exec(newest(st, name)!.id, 'cat /proc/self/status');
      const hardened = await procStatus('main');
      // CAP_NET_BIND_SERVICE is bit 10 alone; NoNewPrivs 1; Seccomp 2 is a filter.
      assert.match(hardened, /^CapEff:\s+0000000000000400$/m);
      assert.match(hardened, /^NoNewPrivs:\s+1$/m);
      assert.match(hardened, /^Seccomp:\s+2$/m);
      const r = await conn.runtime.execSync(newest(st, 'main')!.id, ['sh', '-c', 'touch /rootfs-write'], 10);
      assert.notEqual(r.exitCode, 0, 'the root filesystem is read-only');
      const plain = await procStatus('plain');
      assert.match(plain, /^NoNewPrivs:\s+0$/m);
      assert.match(plain, /^Seccomp:\s+2$/m, "the pod's seccomp profile applies to every container");
      await exec(newest(st, 'plain')!.id, 'touch /rootfs-write');
      const range = await exec(newest(st, 'plain')!.id, 'cat /proc/sys/net/ipv4/ip_local_port_range');
      assert.equal(range.trim().split(/\s+/).join(' '), '20000 30000', 'the pod sysctl is set in its sandbox');
      await killAndCollect(pod);
    },
  );

  it(
    "runAsNonRoot against the image's user: uid 1000 runs; root and a named user are CreateContainerConfigError, the others run on",
    T,
    async () => {
      const nonRoot = { securityContext: { runAsNonRoot: true } };
      const pod = makePod('nonroot', [
        busybox('uid1000', SLEEPER, { image: TEST_IMAGES.busyboxUid1000, ...nonRoot }),
        busybox('uidgid', SLEEPER, { image: TEST_IMAGES.busyboxUid1000Gid1000, ...nonRoot }),
        busybox('named', SLEEPER, { image: TEST_IMAGES.busyboxNobody }),
        busybox('root', SLEEPER, nonRoot),
        busybox('nobody', SLEEPER, { image: TEST_IMAGES.busyboxNobody, ...nonRoot }),
      ]);
      const who = (c: string) => `(pod: "nonroot_${NS}(${pod.metadata!.uid})", container: ${c})`;
      const result = await syncOnce(pod, rt);
      assert.deepEqual(Object.fromEntries(result.waiting), {
        root: {
          reason: 'CreateContainerConfigError',
          message: `container has runAsNonRoot and image will run as root ${who('root')}`,
        },
        nobody: {
          reason: 'CreateContainerConfigError',
          message: `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root ${who('nobody')}`,
        },
      });
      const st = await waitFor('the allowed ones running', async () =>
        running(pod, ['uid1000', 'uidgid', 'named'])(await status(pod)),
      );
      const ids = async (name: string) => (await exec(newest(st, name)!.id, 'echo $(id -u) $(id -g)')).trim();
      assert.equal(await ids('uid1000'), '1000 0', "the image's uid, as run_as_user (no passwd entry: gid 0)");
      // upstream sends only the uid of "1000:1000" (containerd's ImageStatus cuts the group off).
      assert.equal(await ids('uidgid'), '1000 0');
      assert.equal(await ids('named'), '65534 65534', 'run_as_username: the runtime resolves it in the image');
      assert.equal(newest(st, 'root'), undefined, 'never created');
      await killAndCollect(pod);
    },
  );

  it(
    "identity and /proc: upstream's masked and read-only paths, the pod's groups, SELinux options, the user the runtime reports",
    T,
    async () => {
      // containerd 2.x implements supplementalGroupsPolicy and reports the identity (CRI
      // ContainerStatus.user); 1.6 and 1.7 do neither (admission refuses Strict there).
      const strict = (await conn.runtime.status()).features?.supplementalGroupsPolicy === true;
      const pod = makePod('identity', [busybox('main', SLEEPER, { securityContext: { runAsGroup: 3000 } })], {
        securityContext: {
          runAsUser: 1000,
          fsGroup: 2000,
          supplementalGroups: [4000],
          ...(strict ? { supplementalGroupsPolicy: 'Strict' } : {}),
          // No SELinux here: the runtime takes the label and does nothing with it, as for upstream.
          seLinuxOptions: { level: 's0:c1,c2' },
        },
      });
      assert.deepEqual([...(await sync(pod)).waiting], []);
      const st = await waitFor('identity running', async () => running(pod)(await status(pod)));
      const main = newest(st, 'main')!;
      const probe = [
        'id',
        'test -c /proc/keys && echo keys-masked',
        'echo interrupts=$(wc -c < /proc/interrupts)',
        "grep ' /proc/sys ' /proc/mounts | cut -d' ' -f4 | cut -d, -f1",
      ];
      const [id, keys, interrupts, sysMode] = (await exec(main.id, probe.join('; '))).trim().split('\n');
      assert.match(id!, /^uid=1000 gid=3000 groups=/);
      const groups = id!
        .replace(/^.*groups=/, '')
        .split(',')
        .map((g) => Number.parseInt(g, 10));
      for (const g of [2000, 4000]) assert.ok(groups.includes(g), `fsGroup and supplementalGroups in ${id}`);
      assert.equal(keys, 'keys-masked', '/proc/keys is /dev/null (this kernel has no /proc/kcore)');
      assert.equal(interrupts, 'interrupts=0', '/proc/interrupts masked (upstream 1.33+ list, not containerd 1.x)');
      assert.equal(sysMode, 'ro', '/proc/sys read-only');
      if (strict) {
        const user = main.user?.linux;
        assert.deepEqual([user?.uid, user?.gid], [1000, 3000]);
        for (const g of [2000, 4000]) assert.ok(user!.supplementalGroups.includes(g), `user ${g}`);
        assert.ok(
          user!.supplementalGroups.every((g) => [2000, 3000, 4000].includes(g)),
          `Strict: only the pod's groups (${user!.supplementalGroups})`,
        );
      } else assert.equal(main.user, undefined);
      await killAndCollect(pod);
    },
  );

  it(
    'termination messages (upstream conformance "on terminated container" cases): the file, the log tail, the 4096-byte cap; the files go with the containers',
    T,
    async () => {
      const TL = '/dev/termination-log';
      const file = { terminationMessagePath: TL, terminationMessagePolicy: 'File' };
      const fallback = { terminationMessagePath: TL, terminationMessagePolicy: 'FallbackToLogsOnError' };
      // name, container, expected message: the rows of test/e2e/common/node/runtime.go, plus ours.
      const rows: Array<[string, Container, string]> = [
        ['set', busybox('set', `echo -n DONE > ${TL}; exit 1`, file), 'DONE'],
        [
          'as non-root user and at a non-default path',
          busybox('nonroot', 'echo -n DONE > /dev/termination-custom-log', {
            terminationMessagePath: '/dev/termination-custom-log',
            securityContext: { runAsUser: 1000, readOnlyRootFilesystem: true },
          }),
          'DONE',
        ],
        ['from log output with FallbackToLogsOnError', busybox('fromlog', 'echo -n DONE; exit 1', fallback), 'DONE'],
        ['empty when the pod succeeds with FallbackToLogsOnError', busybox('empty', 'echo -n DONE', fallback), ''],
        [
          'from file when the pod succeeds with FallbackToLogsOnError',
          busybox('fromfile', `echo -n OK > ${TL}; echo DONE`, fallback),
          'OK',
        ],
        ['policy File reads no log', busybox('nolog', 'echo quiet; exit 4', file), ''],
        [
          'more than 4096 bytes: the last 4096',
          busybox('big', `head -c 5000 /dev/zero | tr '\\0' x > ${TL}; echo -n END >> ${TL}; exit 1`, file),
          `${'x'.repeat(4093)}END`,
        ],
      ];
      const pod = makePod(
        'tmsg',
        rows.map(([, c]) => c),
        { restartPolicy: 'Never' },
      );
      const names = rows.map(([, c]) => c.name);
      const st = await syncUntil('all exited', pod, (s) =>
        names.every((n) => newest(s, n)?.state === 'exited') ? s : undefined,
      );
      for (const [what, c, want] of rows) assert.equal(newest(st, c.name)!.message, want, what);
      const containersDir = join(dir, 'root', 'pods', pod.metadata!.uid!, 'containers');
      for (const n of names) assert.equal((await readdir(join(containersDir, n))).length, 1, `one file for ${n}`);
      await killAndCollect(pod);
      await rt.garbageCollect(new Set());
      for (const n of names)
        assert.deepEqual(await readdir(join(containersDir, n)).catch(() => []), [], `${n}: its file went with it`);
    },
  );
});

describe('volumes', () => {
  it(
    'memory emptyDir is a tmpfs of sizeLimit (or the pod memory limit); hostPath types are checked; all cleaned up',
    T,
    async () => {
      const hostDir = join(dir, 'host-data');
      await mkdir(hostDir, { recursive: true });
      await writeFile(join(hostDir, 'hello'), 'from host\n');
      const pod = makePod(
        'volumes',
        [
          busybox('main', SLEEPER, {
            resources: { limits: { cpu: '300m', memory: '32Mi' } },
            volumeMounts: [
              { name: 'mem-sized', mountPath: '/mem1' },
              { name: 'mem', mountPath: '/mem2' },
              { name: 'disk', mountPath: '/disk' },
              { name: 'host', mountPath: '/host', readOnly: true },
              { name: 'created', mountPath: '/created' },
            ],
          }),
        ],
        {
          volumes: [
            { name: 'mem-sized', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
            { name: 'mem', emptyDir: { medium: 'Memory' } },
            { name: 'disk', emptyDir: {} },
            { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
            { name: 'created', hostPath: { path: join(dir, 'made-by-kubelet'), type: 'DirectoryOrCreate' } },
          ],
        },
      );
      const result = await sync(pod);
      assert.deepEqual([...result.waiting], []);
      const st = await waitFor('volumes running', async () => running(pod)(await status(pod)));
      const id = newest(st, 'main')!.id;
      const procMounts = await exec(id, 'cat /proc/mounts');
      assert.match(procMounts, /^tmpfs \/mem1 tmpfs [^ ]*size=16384k/m);
      assert.match(
        procMounts,
        /^tmpfs \/mem2 tmpfs [^ ]*size=32768k/m,
        'the pod memory limit bounds a memory emptyDir without sizeLimit',
      );
      const df = await exec(id, 'df -k /mem1 | tail -1');
      assert.equal(df.trim().split(/\s+/)[1], '16384');
      assert.equal(await exec(id, 'cat /host/hello'), 'from host\n');
      await exec(id, 'echo x > /disk/f && echo y > /mem1/f && echo z > /created/f');
      assert.equal(await readFile(join(emptyDirOnHost(pod, 'disk'), 'f'), 'utf8'), 'x\n');
      assert.equal(await readFile(join(dir, 'made-by-kubelet', 'f'), 'utf8'), 'z\n');
      // A hostPath that does not match its type keeps the container from being created.
      const bad = makePod(
        'volumes-bad',
        [busybox('main', SLEEPER, { volumeMounts: [{ name: 'f', mountPath: '/f' }] })],
        {
          volumes: [{ name: 'f', hostPath: { path: join(dir, 'no-such-file'), type: 'File' } }],
        },
      );
      const badResult = await sync(bad);
      assert.equal(badResult.waiting.get('main')?.reason, 'CreateContainerConfigError');
      assert.match(badResult.waiting.get('main')!.message, /is not a File/);
      // Gone: tmpfs unmounted and the volume directories removed.
      const podDir = join(dir, 'root', 'pods', pod.metadata!.uid!);
      assert.equal((await mountsUnder(podDir)).length, 2);
      await killAndCollect(pod);
      await killAndCollect(bad);
      await rt.garbageCollect(new Set());
      assert.deepEqual(await mountsUnder(podDir), []);
      // The pod directory itself (etc-hosts, containers/) is the kubelet's housekeeping's to
      // remove (cleanupOrphanedPodDirs), once nothing is left under volumes/.
      assert.equal(existsSync(join(podDir, 'volumes')), false);
      assert.equal(existsSync(join(hostDir, 'hello')), true, 'hostPath data is left alone');
    },
  );

  it(
    'downwardAPI volume files and env (fieldRef, resourceFieldRef with divisor, allocatable defaults)',
    T,
    async () => {
      const pod = makePod(
        'downward',
        [
          busybox('main', SLEEPER, {
            resources: { limits: { cpu: '300m', memory: '32Mi' } },
            volumeMounts: [{ name: 'podinfo', mountPath: '/etc/podinfo' }],
            env: [
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
              { name: 'CPU_REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
              { name: 'MEM_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
            ],
          }),
          busybox('side', SLEEPER, {
            env: [
              { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
              { name: 'MEM_LIMIT_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
              {
                name: 'MAIN_CPU',
                valueFrom: { resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' } },
              },
            ],
          }),
        ],
        {
          serviceAccountName: 'builder',
          volumes: [
            {
              name: 'podinfo',
              downwardAPI: {
                items: [
                  { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
                  { path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } },
                  { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
                  { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                  { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
                  {
                    path: 'limits/cpu',
                    resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' },
                  },
                  {
                    path: 'limits/memory',
                    resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' },
                  },
                ],
              },
            },
          ],
        },
      );
      await sync(pod);
      const st = await waitFor('downward running', async () => running(pod)(await status(pod)));
      const main = newest(st, 'main')!.id;
      const files = await exec(
        main,
        'cd /etc/podinfo && for f in name namespace uid labels annotations limits/cpu limits/memory; do echo "$f=$(cat $f)"; done',
      );
      assert.equal(
        files,
        [
          'name=downward',
          `namespace=${NS}`,
          `uid=${pod.metadata!.uid}`,
          'labels=app="downward"',
          'tier="e2e"',
          'annotations=note="lifecycle"',
          'limits/cpu=300',
          'limits/memory=32',
          '',
        ].join('\n'),
      );
      assert.match(await exec(main, 'grep " /etc/podinfo " /proc/mounts'), / ro[, ]/, 'mounted read-only');
      const env = await exec(main, 'echo "$POD_IP|$HOST_IP|$NODE|$SA|$CPU_REQ|$MEM_LIMIT"');
      assert.equal(env.trim(), `${st.ips[0]}|127.0.0.1|e2e-node|builder|300|${32 * MiB}`);
      const sideEnv = await exec(newest(st, 'side')!.id, 'echo "$CPU_LIMIT|$MEM_LIMIT_MI|$MAIN_CPU"');
      assert.equal(sideEnv.trim(), `3|${4 * 1024}|300`, 'missing limits are the node allocatable (3 CPUs, 4 GiB)');
      // A label change reaches the file at the next sync.
      pod.metadata!.labels = { app: 'downward', tier: 'changed' };
      await sync(pod);
      assert.equal(await exec(main, 'cat /etc/podinfo/labels'), 'app="downward"\ntier="changed"');
      await killAndCollect(pod);
    },
  );
});

describe('garbage collection and orphans', () => {
  it('minimum age protects young dead containers; maxContainers evicts the oldest first', T, async () => {
    const pod = makePod('gc-policy', [busybox('a', 'exit 0'), busybox('b', 'exit 0'), busybox('c', 'exit 0')], {
      restartPolicy: 'Never',
    });
    await sync(pod);
    await waitFor('all exited', async () =>
      (await status(pod)).containerStatuses.filter((c) => c.state === 'exited').length === 3 ? true : undefined,
    );
    await manager({ gcPolicy: { minAgeMs: 10 * 60_000 } }).garbageCollect(new Set());
    assert.equal(
      (await status(pod)).containerStatuses.length,
      3,
      'younger than the minimum age: kept even though the pod is gone',
    );
    await manager({ gcPolicy: { maxContainers: 1 } }).garbageCollect(new Set([pod.metadata!.uid!]));
    const left = (await status(pod)).containerStatuses;
    assert.deepEqual(
      left.map((c) => c.name),
      ['c'],
      'only the newest dead container is left',
    );
    await killAndCollect(pod);
    await rt.garbageCollect(new Set());
    assert.equal((await status(pod)).containerStatuses.length, 0);
  });

  it('an orphan made directly through the CRI is killed with grace 1 s and removed', T, async () => {
    const uid = randomUUID();
    const labels = {
      'io.kubernetes.pod.name': 'orphan',
      'io.kubernetes.pod.namespace': NS,
      'io.kubernetes.pod.uid': uid,
    };
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'orphan', uid, namespace: NS, attempt: 0 },
      hostname: '',
      logDirectory: join(dir, 'orphan-logs'),
      portMappings: [],
      labels,
      annotations: {},
      linux: { securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    await mkdir(sandboxConfig.logDirectory, { recursive: true });
    const sandboxId = await conn.runtime.runPodSandbox(sandboxConfig);
    const containerConfig: ContainerConfig = {
      metadata: { name: 'stray', attempt: 0 },
      image: { image: TEST_IMAGES.busybox },
      command: ['sleep', '3600'],
      args: [],
      workingDir: '',
      envs: [],
      mounts: [],
      labels: { ...labels, 'io.kubernetes.container.name': 'stray' },
      annotations: {},
      logPath: 'stray.log',
    };
    const id = await conn.runtime.createContainer(sandboxId, containerConfig, sandboxConfig);
    await conn.runtime.startContainer(id);
    const orphan = (await rt.getPods(false)).find((p) => p.uid === uid);
    assert.ok(orphan, 'found by its labels');
    const t0 = Date.now();
    await rt.killPod(undefined, orphan, 1);
    assert.equal(stops.filter((s) => s.id === id).pop()?.timeout, 1);
    assert.ok(Date.now() - t0 < 5000);
    await rt.garbageCollect(new Set());
    assert.equal(
      (await rt.getPods(true)).find((p) => p.uid === uid),
      undefined,
      'container and sandbox removed',
    );
  });
});
