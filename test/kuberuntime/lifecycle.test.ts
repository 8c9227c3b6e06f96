/**
 * Lifecycle hooks and termination on the CRI fake: runHandler's three handlers and their errors,
 * preStop within the grace period and the remaining grace for StopContainer, pod-less kills
 * restoring the hook from annotations, sidecar termination order, and postStart failures.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, runningPodFromStatus } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import { HookError, runHandler } from '../../src/kuberuntime/lifecycle-hooks.js';
import type { Runtime } from '../../src/kuberuntime/types.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
let fake: FakeRuntimeService;
let rt: Runtime;

before(async () => {
  dir = testTempDir('kuberuntime-lifecycle-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  rt = createRuntimeManager({
    runtime: fake,
    imageManager: createImageManager({ images: fake }),
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
    nodeName: 'node-1',
    hostIP: '192.168.1.10',
    resolvConf: '',
    cgroupsPerQOS: false,
  });
});

async function sync(pod: Pod) {
  return rt.syncPod(pod, await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!));
}

async function running(pod: Pod) {
  return runningPodFromStatus(await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runHandler', () => {
  const pod = makePod();
  it('exec: success, and a failure with upstream message and output', async () => {
    await sync(makePod({ containers: [container('a')] }));
    const id = fake.containersNamed('a')[0]!.id;
    await runHandler(
      { exec: { command: ['true'] } },
      { runtime: fake, pod, container: container('a'), containerId: id, podIPs: async () => [], timeoutMs: 5000 },
    );
    fake.execHandler = async () => ({ stdout: Buffer.from('out'), stderr: Buffer.from('err'), exitCode: 3 });
    await assert.rejects(
      runHandler(
        { exec: { command: ['sh', '-c', 'exit 3'] } },
        { runtime: fake, pod, container: container('a'), containerId: id, podIPs: async () => [], timeoutMs: 5000 },
      ),
      (e: unknown) =>
        e instanceof HookError &&
        /^Exec lifecycle hook \(\["sh","-c","exit 3"\]\) for Container "a" in Pod "web_default\(uid-1234\)" failed - error: .*exited with 3.*message: "outerr"$/.test(
          (e as Error).message,
        ),
    );
  });

  it('httpGet without a host goes to the first pod IP; no IP is an error', async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(500);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const ctx = { runtime: fake, pod, container: container('a'), containerId: 'x', timeoutMs: 5000 };
      await runHandler({ httpGet: { port, path: '/stop' } }, { ...ctx, podIPs: async () => ['127.0.0.1', '::1'] });
      assert.deepEqual(hits, ['/stop'], 'an HTTP 500 still counts as the hook having run');
      await assert.rejects(
        runHandler({ httpGet: { port, path: '/stop' } }, { ...ctx, podIPs: async () => [] }),
        /HTTP lifecycle hook \(\/stop\) .* failed - error: failed to find networking container/,
      );
    } finally {
      server.close();
    }
  });

  it('sleep waits; an abort cuts it short; tcpSocket is not a lifecycle handler', async () => {
    const ctx = {
      runtime: fake,
      pod,
      container: container('a'),
      containerId: 'x',
      podIPs: async () => [],
      timeoutMs: 5000,
    };
    const t0 = Date.now();
    await runHandler({ sleep: { seconds: 0.2 } }, ctx);
    assert.ok(Date.now() - t0 >= 190);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(
      runHandler({ sleep: { seconds: 10 } }, { ...ctx, signal: ac.signal }),
      /terminated before sleep hook finished/,
    );
    await assert.rejects(runHandler({ tcpSocket: { port: 80 } }, ctx), /invalid handler/);
  });
});

describe('preStop and the grace period', () => {
  it('runs the preStop hook first; StopContainer gets the grace left (whole seconds)', async () => {
    const pod = makePod({ containers: [container('a', { lifecycle: { preStop: { exec: { command: ['drain'] } } } })] });
    pod.spec!.terminationGracePeriodSeconds = 5;
    await sync(pod);
    fake.execHandler = async () => {
      await sleep(1100);
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
    };
    await rt.killPod(pod, await running(pod));
    assert.deepEqual(
      fake.execs.map((e) => e.cmd),
      [['drain']],
    );
    assert.deepEqual(
      fake.stopped.map((s) => s.grace),
      [4],
    );
    assert.ok(fake.calls.indexOf('execSync') < fake.calls.indexOf('stopContainer'));
  });

  it('a hook longer than the grace period is cut off and the container still gets 2 s', async () => {
    const pod = makePod({ containers: [container('a', { lifecycle: { preStop: { exec: { command: ['hang'] } } } })] });
    pod.spec!.terminationGracePeriodSeconds = 1;
    await sync(pod);
    fake.execHandler = () =>
      new Promise((resolve) =>
        setTimeout(() => resolve({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 }), 3000).unref(),
      );
    const t0 = Date.now();
    await rt.killPod(pod, await running(pod));
    const took = Date.now() - t0;
    assert.ok(took >= 950 && took < 2000, `bounded by the 1 s grace: ${took} ms`);
    assert.deepEqual(
      fake.stopped.map((s) => s.grace),
      [2],
    );
  });

  it('a failing hook does not stop the kill; an override of 0 skips the hook', async () => {
    const pod = makePod({
      containers: [
        container('a', { lifecycle: { preStop: { exec: { command: ['fail'] } } } }),
        container('b', { lifecycle: { preStop: { exec: { command: ['x'] } } } }),
      ],
    });
    await sync(pod);
    fake.execHandler = async () => ({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 1 });
    const r = await running(pod);
    await rt.killPod(pod, { ...r, containers: r.containers.filter((c) => c.name === 'a') });
    assert.equal(fake.stopped.length, 1);
    await rt.killPod(pod, { ...r, containers: r.containers.filter((c) => c.name === 'b') }, 0);
    assert.deepEqual(
      fake.execs.map((e) => e.cmd[0]),
      ['fail'],
      'no hook with a zero grace period',
    );
    assert.equal(fake.stopped[1]!.grace, 0);
  });

  it('without the pod, the grace period and the preStop hook come from the annotations', async () => {
    const pod = makePod({
      containers: [container('a', { lifecycle: { preStop: { exec: { command: ['from-annotation'] } } } })],
    });
    pod.spec!.terminationGracePeriodSeconds = 7;
    await sync(pod);
    await rt.killPod(undefined, await running(pod));
    assert.deepEqual(
      fake.execs.map((e) => e.cmd),
      [['from-annotation']],
    );
    assert.deepEqual(
      fake.stopped.map((s) => s.grace),
      [7],
    );
  });
});

describe('sidecar termination order', () => {
  it('regular containers stop first, then the sidecars in reverse order', async () => {
    const pod = makePod({
      containers: [container('app', { lifecycle: { preStop: { exec: { command: ['slow'] } } } })],
      initContainers: [
        container('log-shipper', { restartPolicy: 'Always' }),
        container('proxy', { restartPolicy: 'Always' }),
      ],
    });
    pod.spec!.terminationGracePeriodSeconds = 10;
    for (let i = 0; i < 3; i++) await sync(pod);
    assert.deepEqual(
      [...fake.containers.values()].map((c) => c.config.metadata.name),
      ['log-shipper', 'proxy', 'app'],
    );
    fake.execHandler = async () => {
      await sleep(300);
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
    };
    await rt.killPod(pod, await running(pod));
    assert.deepEqual(
      fake.stopped.map((s) => s.name),
      ['app', 'proxy', 'log-shipper'],
    );
  });
});

describe('postStart', () => {
  it('a failed hook kills the container (PostStartHookError); the next sync restarts it', async () => {
    const pod = makePod({
      containers: [container('a', { lifecycle: { postStart: { exec: { command: ['warmup'] } } } })],
    });
    pod.spec!.terminationGracePeriodSeconds = 3;
    fake.execHandler = async () => ({ stdout: Buffer.from('no'), stderr: Buffer.alloc(0), exitCode: 2 });
    const r = await sync(pod);
    assert.equal(r.waiting.get('a')?.reason, 'PostStartHookError');
    assert.match(r.waiting.get('a')!.message, /Exec lifecycle hook \(\["warmup"\]\)/);
    const [first] = fake.containersNamed('a');
    assert.equal(first!.state, 'CONTAINER_EXITED');
    assert.equal(first!.stoppedWithGrace, 3);
    fake.execHandler = undefined;
    const again = await sync(pod);
    assert.deepEqual([...again.waiting], []);
    assert.equal(fake.containersNamed('a').at(-1)!.state, 'CONTAINER_RUNNING');
    assert.equal(fake.containersNamed('a').at(-1)!.config.annotations['io.kubernetes.container.restartCount'], '1');
  });
});
