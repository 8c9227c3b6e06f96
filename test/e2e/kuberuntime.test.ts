/**
 * The runtime manager against real containerd (the shared test daemon): pods reach running via
 * syncPod, restarts and image changes, killPod within the grace period, adoption by labels from a
 * fresh manager, and garbage collection.
 *
 * The daemon is shared with other test files, so every manager here sees the runtime through
 * `scoped()`: only sandboxes and containers of this test's namespace. That keeps garbageCollect
 * from touching anyone else's pods.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import type { RuntimeService } from '../../src/cri/types.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import type { PodRuntimeStatus, Runtime } from '../../src/kuberuntime/types.js';
import { TEST_IMAGES, removeTestPods, runtimeEndpoint, uniqueName } from '../support/containerd.js';
import { testTempDir } from '../support/temp-dir.js';

const NS = uniqueName('kts-kuberuntime');
const TIMEOUT = { timeout: 90_000 };

let conn: CriConnection;
let scopedRuntime: RuntimeService;
let dir: string;
let rt: Runtime;

/** The runtime as seen by this test: lists return only objects of our namespace. */
function scoped(runtime: RuntimeService): RuntimeService {
  const ours = (labels: Record<string, string>) => labels['io.kubernetes.pod.namespace'] === NS;
  return new Proxy(runtime, {
    get(target, prop, receiver) {
      if (prop === 'listPodSandbox')
        return async (f?: Parameters<RuntimeService['listPodSandbox']>[0]) =>
          (await target.listPodSandbox(f)).filter((s) => ours(s.labels));
      if (prop === 'listContainers')
        return async (f?: Parameters<RuntimeService['listContainers']>[0]) =>
          (await target.listContainers(f)).filter((c) => ours(c.labels));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function manager(): Runtime {
  return createRuntimeManager({
    runtime: scopedRuntime,
    imageManager: createImageManager({ images: conn.images }),
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
    nodeName: 'e2e-node',
    hostIP: '127.0.0.1',
  });
}

function busybox(name: string, script: string, extra: Partial<Container> = {}): Container {
  return { name, image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script], ...extra };
}

/** Exits at once on SIGTERM, so a graceful stop is fast. */
const SLEEPER = "trap 'exit 0' TERM; while true; do sleep 1 & wait; done";

function makePod(name: string, containers: Container[], spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name, namespace: NS, uid: randomUUID(), labels: { test: 'kuberuntime' } },
    spec: { containers, restartPolicy: 'Always', terminationGracePeriodSeconds: 5, ...spec },
  };
}

function status(pod: Pod, r: Runtime = rt): Promise<PodRuntimeStatus> {
  return r.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, NS);
}

async function sync(pod: Pod, r: Runtime = rt) {
  const result = await r.syncPod(pod, await status(pod, r));
  assert.equal(result.error, undefined, `sync error: ${result.error?.message}`);
  return result;
}

/** Polls until check returns a value (not undefined) or the deadline passes. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function newest(st: PodRuntimeStatus, name: string) {
  return st.containerStatuses.find((c) => c.name === name);
}

async function allRunning(pod: Pod): Promise<PodRuntimeStatus | undefined> {
  const st = await status(pod);
  const names = pod.spec!.containers.map((c) => c.name);
  return names.every((n) => newest(st, n)?.state === 'running') ? st : undefined;
}

before(async () => {
  conn = connectRuntime(await runtimeEndpoint());
  scopedRuntime = scoped(conn.runtime);
  dir = testTempDir('kts-kuberuntime-e2e-');
  rt = manager();
  assert.ok(await conn.images.imageStatus(TEST_IMAGES.busybox), 'the local busybox image is imported');
});

after(async () => {
  await removeTestPods(conn.runtime, { namespace: NS }).catch((err) => console.error('cleanup failed', err));
  conn.runtime.close();
  conn.images.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kuberuntime against containerd', () => {
  const hostPod = makePod('host', [busybox('main', SLEEPER)], { hostNetwork: true });
  const netPod = makePod('pair', [
    busybox('a', SLEEPER),
    busybox('b', `echo "hello $(WHO) from $POD_IP"; ${SLEEPER}`, {
      env: [
        { name: 'WHO', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      ],
    }),
  ]);

  it('a hostNetwork busybox pod reaches running', TIMEOUT, async () => {
    const result = await sync(hostPod);
    assert.deepEqual([...result.waiting], []);
    const st = await waitFor('host pod running', () => allRunning(hostPod));
    assert.equal(st.sandboxStatuses.length, 1);
    assert.equal(st.sandboxStatuses[0]!.ready, true);
    assert.equal(st.sandboxStatuses[0]!.hostNetwork, true);
    assert.equal(newest(st, 'main')!.restartCount, 0);
  });

  it('a pod-network two-container pod reaches running with an IP and its env', TIMEOUT, async () => {
    const result = await sync(netPod);
    assert.deepEqual([...result.waiting], []);
    const st = await waitFor('pair running', () => allRunning(netPod));
    assert.equal(st.ips.length, 1);
    assert.match(st.ips[0]!, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(st.sandboxStatuses[0]!.hostNetwork, false);
    assert.deepEqual(st.containerStatuses.map((c) => c.name).sort(), ['a', 'b']);
    // The log file containerd writes shows the expanded env and the downward API.
    const logFile = join(dir, 'logs', `${NS}_pair_${netPod.metadata!.uid}`, 'b', '0.log');
    const text = await waitFor('log line', async () => {
      const { readFile } = await import('node:fs/promises');
      const t = await readFile(logFile, 'utf8').catch(() => '');
      return t.includes('hello') ? t : undefined;
    });
    assert.match(text, new RegExp(`hello pair from ${st.ips[0]!.replace(/\./g, '\\.')}`));
  });

  it('a container that exits under Always is restarted with restartCount 1 by the next syncPod', TIMEOUT, async () => {
    const pod = makePod('crasher', [busybox('c', 'sleep 1; exit 3')], { terminationGracePeriodSeconds: 2 });
    await sync(pod);
    const exited = await waitFor('first exit', async () => {
      const c = newest(await status(pod), 'c');
      return c?.state === 'exited' ? c : undefined;
    });
    assert.equal(exited.exitCode, 3);
    assert.equal(exited.restartCount, 0);
    const result = await sync(pod);
    assert.deepEqual([...result.waiting], [], 'the first restart is immediate');
    const st = await status(pod);
    const c = newest(st, 'c')!;
    assert.equal(c.restartCount, 1);
    assert.notEqual(c.id, exited.id);
    // It exits again at once: the next sync reports CrashLoopBackOff instead of restarting.
    await waitFor('second exit', async () => (newest(await status(pod), 'c')?.state === 'exited' ? true : undefined));
    const again = await sync(pod);
    assert.equal(again.waiting.get('c')?.reason, 'CrashLoopBackOff');
    assert.match(
      again.waiting.get('c')!.message,
      new RegExp(`^back-off 10s restarting failed container=c pod=crasher_${NS}\\(`),
    );
  });

  it('an image change restarts the container', TIMEOUT, async () => {
    const before = newest(await status(netPod), 'a')!;
    // The same image by another reference (no tag: latest): a new image, so a new spec hash.
    netPod.spec!.containers[0] = { ...busybox('a', SLEEPER), image: TEST_IMAGES.busybox.replace(/:latest$/, '') };
    await sync(netPod);
    const st = await waitFor('new a running', async () => {
      const s = await status(netPod);
      const a = newest(s, 'a');
      return a && a.id !== before.id && a.state === 'running' ? s : undefined;
    });
    assert.notEqual(newest(st, 'a')!.hash, before.hash);
    assert.equal(newest(st, 'a')!.restartCount, 1);
    assert.equal(st.containerStatuses.find((c) => c.id === before.id)?.state, 'exited');
    assert.equal(newest(st, 'b')!.restartCount, 0, 'the other container is untouched');
  });

  it('a fresh manager adopts the pods by their labels', TIMEOUT, async () => {
    const fresh = manager();
    const pods = await fresh.getPods(false);
    const found = pods.find((p) => p.uid === netPod.metadata!.uid);
    assert.ok(found, 'pair found by a new manager');
    assert.equal(found.name, 'pair');
    assert.equal(found.namespace, NS);
    assert.deepEqual(found.containers.map((c) => c.name).sort(), ['a', 'b']);
    const ids = found.containers.map((c) => c.id).sort();
    // Same spec: the new manager changes nothing.
    const result = await sync(netPod, fresh);
    assert.deepEqual([...result.waiting], []);
    const after = (await fresh.getPods(false)).find((p) => p.uid === netPod.metadata!.uid)!;
    assert.deepEqual(after.containers.map((c) => c.id).sort(), ids);
  });

  it('killPod stops everything within the grace period', TIMEOUT, async () => {
    // One container leaves on SIGTERM, one (sleep as PID 1) ignores it and needs the SIGKILL.
    const pod = makePod(
      'stubborn',
      [
        busybox('polite', SLEEPER),
        { name: 'deaf', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] },
      ],
      { terminationGracePeriodSeconds: 3 },
    );
    await sync(pod);
    await waitFor('stubborn running', () => allRunning(pod));
    const running = (await rt.getPods(false)).find((p) => p.uid === pod.metadata!.uid)!;
    const t0 = Date.now();
    await rt.killPod(pod, running);
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 3000 + 5000, `killPod took ${elapsed} ms`);
    const st = await status(pod);
    assert.ok(st.containerStatuses.every((c) => c.state === 'exited'));
    assert.ok(st.sandboxStatuses.every((s) => !s.ready));
    for (const p of [hostPod]) {
      const r = (await rt.getPods(false)).find((x) => x.uid === p.metadata!.uid)!;
      await rt.killPod(p, r);
    }
  });

  it('garbageCollect removes dead pods and keeps live ones', TIMEOUT, async () => {
    const uids = [hostPod, netPod].map((p) => p.metadata!.uid!);
    // hostPod and "stubborn" were killed; "crasher" is still wanted; pair is live.
    const active = new Set([netPod.metadata!.uid!]);
    const crasher = (await rt.getPods(true)).find((p) => p.name === 'crasher')!;
    active.add(crasher.uid);
    await rt.garbageCollect(active);
    const all = await rt.getPods(true);
    assert.equal(
      all.find((p) => p.uid === uids[0]),
      undefined,
      'killed host pod removed',
    );
    assert.equal(
      all.find((p) => p.name === 'stubborn'),
      undefined,
      'killed pod removed',
    );
    const pair = all.find((p) => p.uid === netPod.metadata!.uid)!;
    assert.deepEqual(
      pair.containers
        .filter((c) => c.state === 'running')
        .map((c) => c.name)
        .sort(),
      ['a', 'b'],
    );
    assert.equal(pair.containers.filter((c) => c.state === 'exited').length, 1, 'one dead instance kept for logs');
    assert.ok(
      all.find((p) => p.uid === crasher.uid),
      'active crashing pod kept',
    );
    assert.equal(existsSync(join(dir, 'logs', `${NS}_host_${uids[0]}`)), false, 'log dir of the removed pod is gone');
    // Finally everything goes once no pod is active and all are stopped.
    for (const p of await rt.getPods(false)) await rt.killPod(undefined, p, 0);
    await rt.garbageCollect(new Set());
    assert.deepEqual(await rt.getPods(true), []);
  });
});
