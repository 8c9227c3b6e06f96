/**
 * The runtime manager against the in-memory CRI fake: SyncPod's order and results, restarts and
 * back-off, image pull policies, config errors, KillPod grace periods, getPods/getPodStatus
 * adoption by labels, and garbage collection.
 */
import { hostHugePageSizes, hugePageSizeName } from '../../src/node/hugepages.js';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { CriError, KubeletError } from '../../src/errors.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, type RuntimeManagerDeps } from '../../src/kuberuntime/index.js';
import { hashContainer } from '../../src/kuberuntime/hash.js';
import { createVolumeManager, type VolumeManager } from '../../src/volume/index.js';
import { createRecorder, type Recorder } from '../../src/events/index.js';
import type { Runtime } from '../../src/kuberuntime/types.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { FakeClock, container, fakeRuntimeManager, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
let fake: FakeRuntimeService;
let clock: FakeClock;
let rt: Runtime;
let volumes: VolumeManager;
let recorder: Recorder;

function manager(extra: Partial<RuntimeManagerDeps> = {}): Runtime {
  volumes = createVolumeManager({ rootDir: join(dir, 'root'), nodeName: 'node-1', hostIP: '192.168.1.10' });
  const imageManager = createImageManager({ images: fake, clock, recorder });
  return fakeRuntimeManager(fake, dir, recorder, { ...extra, imageManager, clock, volumes });
}

/** As the kubelet: the pod's volumes first, then the runtime's sync. */
async function sync(pod: Pod) {
  await volumes.mountPodVolumes(pod);
  const status = await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!);
  return rt.syncPod(pod, status);
}

before(async () => {
  dir = testTempDir('kuberuntime-test-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  clock = new FakeClock(1_700_000_000_000);
  recorder = createRecorder();
  rt = manager();
});

describe('syncPod', () => {
  it('pull secrets (upstream getPullSecretsForPod, once per SyncPod): read once, their credentials reach PullImage', async () => {
    let reads = 0;
    const auths: Array<string | undefined> = [];
    const pullImage = fake.pullImage.bind(fake);
    fake.pullImage = (image, auth, sb) => (auths.push(auth?.username), pullImage(image, auth, sb));
    const cfg = { auths: { 'reg.example': { username: 'pod-user', password: 'p' } } };
    const secret = {
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') },
    };
    rt = createRuntimeManager({
      runtime: fake,
      imageManager: createImageManager({ images: fake, clock }),
      clock,
      podLogsDir: join(dir, 'logs'),
      rootDir: join(dir, 'root'),
      nodeName: 'node-1',
      resolvConf: '',
      cgroupsPerQOS: false,
      volumes,
      pullSecretsFor: async () => (reads++, [secret]),
    });
    const image = 'reg.example/app:1';
    const pod = makePod({ containers: [container('a', { image }), container('b', { image })] });
    const result = await sync(pod);
    assert.equal(result.error, undefined);
    assert.equal(reads, 1);
    assert.deepEqual(auths, ['pod-user']);
  });

  it('creates the sandbox then starts every container, in upstream order', async () => {
    const result = await sync(makePod());
    assert.equal(result.error, undefined);
    assert.deepEqual([...result.waiting], []);
    const order = fake.calls.filter((c) =>
      ['runPodSandbox', 'podSandboxStatus', 'createContainer', 'startContainer'].includes(c),
    );
    assert.deepEqual(order, [
      'runPodSandbox',
      'podSandboxStatus',
      'createContainer',
      'startContainer',
      'createContainer',
      'startContainer',
    ]);
    const status = await rt.getPodStatus('uid-1234', 'web', 'default');
    assert.deepEqual(status.ips, ['10.0.0.2']);
    assert.deepEqual(status.containerStatuses.map((c) => [c.name, c.state, c.restartCount]).sort(), [
      ['a', 'running', 0],
      ['b', 'running', 0],
    ]);
    assert.ok(existsSync(join(dir, 'logs', 'default_web_uid-1234', 'a')), 'container log directory created');
  });

  it('passes the container config: env expansion, downward API, log path, resources, labels', async () => {
    const c = container('a', {
      command: ['sh', '-c', 'echo $(GREETING)'],
      env: [
        { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'GREETING', value: 'hi $(NAME) on $(NODE)' },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      ],
      resources: { limits: { cpu: '250m', memory: '64Mi' } },
      workingDir: '/tmp',
    });
    await sync(makePod({ containers: [c] }));
    const cfg = fake.containersNamed('a')[0]!.config;
    assert.deepEqual(cfg.command, ['sh', '-c', 'echo hi web on $(NODE)']);
    assert.deepEqual(cfg.envs, [
      { key: 'NAME', value: 'web' },
      { key: 'GREETING', value: 'hi web on $(NODE)' },
      { key: 'NODE', value: 'node-1' },
      { key: 'IP', value: '10.0.0.2' },
    ]);
    assert.equal(cfg.logPath, 'a/0.log');
    assert.equal(cfg.workingDir, '/tmp');
    assert.equal(cfg.metadata.attempt, 0);
    assert.deepEqual(cfg.linux?.resources, {
      cpuShares: 256,
      cpuPeriod: 100000,
      cpuQuota: 25000,
      memoryLimitInBytes: 67108864,
      oomScoreAdj: -997,
      hugepageLimits: hostHugePageSizes().map((size) => ({ pageSize: hugePageSizeName(size), limit: 0 })),
    });
    assert.equal(cfg.labels['io.kubernetes.container.name'], 'a');
    assert.equal(cfg.image.image, fake.images.get('busybox:1.36')!.id, 'created from the resolved image ID');
  });

  it('restarts an exited container under Always with restartCount+1, then backs off', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    const first = fake.containersNamed('a')[0]!;
    fake.exitContainer(first.id, 1);
    clock.advance(1000);
    let r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    const second = fake.containersNamed('a')[1]!;
    assert.equal(second.config.annotations['io.kubernetes.container.restartCount'], '1');
    assert.equal(second.config.logPath, 'a/1.log');
    // Crash again right away: CrashLoopBackOff, no new container.
    fake.exitContainer(second.id, 1);
    clock.advance(1000);
    r = await sync(pod);
    assert.deepEqual(r.waiting.get('a'), {
      reason: 'CrashLoopBackOff',
      message: 'back-off 10s restarting failed container=a pod=web_default(uid-1234)',
    });
    assert.equal(fake.containersNamed('a').length, 2);
    // Once the delay since the exit has passed, it restarts and the next delay doubles.
    clock.advance(10_000);
    r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    const third = fake.containersNamed('a')[2]!;
    assert.equal(third.config.annotations['io.kubernetes.container.restartCount'], '2');
    fake.exitContainer(third.id, 1);
    clock.advance(1000);
    r = await sync(pod);
    assert.match(r.waiting.get('a')!.message, /^back-off 20s /);
  });

  it('an image change kills the old container with the pod grace period and starts the new spec', async () => {
    const pod = makePod({ containers: [container('a')] });
    pod.spec!.terminationGracePeriodSeconds = 7;
    await sync(pod);
    const old = fake.containersNamed('a')[0]!;
    pod.spec!.containers[0]!.image = 'busybox:1.37';
    await sync(pod);
    assert.equal(old.state, 'CONTAINER_EXITED');
    assert.equal(old.stoppedWithGrace, 7);
    const fresh = fake.containersNamed('a')[1]!;
    assert.equal(fresh.config.annotations['io.kubernetes.container.hash'], hashContainer(pod.spec!.containers[0]!));
    assert.equal(fresh.state, 'CONTAINER_RUNNING');
  });

  it('image policies: Never absent → ErrImageNeverPull; IfNotPresent absent → pull; Always → pull', async () => {
    const pod = makePod({
      containers: [
        container('never', { image: 'absent:1', imagePullPolicy: 'Never' }),
        container('ifnp', { image: 'other:1', imagePullPolicy: 'IfNotPresent' }),
        container('always', { image: 'busybox:1.36', imagePullPolicy: 'Always' }),
        container('present', { image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent' }),
      ],
    });
    const r = await sync(pod);
    assert.deepEqual(r.waiting.get('never'), {
      reason: 'ErrImageNeverPull',
      message: 'Container image "absent:1" is not present with pull policy of Never',
    });
    assert.equal(r.waiting.size, 1, 'the other containers still start');
    assert.equal(fake.calls.filter((c) => c === 'pullImage').length, 2);
    assert.equal(fake.containersNamed('present')[0]!.state, 'CONTAINER_RUNNING');
  });

  it('pull failure: ErrImagePull, then ImagePullBackOff within the back-off, then a retry', async () => {
    const pod = makePod({ containers: [container('a', { image: 'registry.invalid/x:1' })] });
    fake.alwaysFail.set(
      'pullImage',
      new CriError('KTS_ERR_CRI', 'PullImage', 'failed to resolve reference "registry.invalid/x:1"', { grpcCode: 2 }),
    );
    let r = await sync(pod);
    assert.equal(r.waiting.get('a')!.reason, 'ErrImagePull');
    assert.equal(
      r.waiting.get('a')!.message,
      'Failed to pull image "registry.invalid/x:1": failed to resolve reference "registry.invalid/x:1"',
    );
    clock.advance(5_000);
    r = await sync(pod);
    assert.deepEqual(r.waiting.get('a'), {
      reason: 'ImagePullBackOff',
      message: 'Back-off pulling image "registry.invalid/x:1"',
    });
    assert.equal(fake.calls.filter((c) => c === 'pullImage').length, 1);
    clock.advance(5_000);
    fake.alwaysFail.delete('pullImage');
    r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    assert.equal(fake.containersNamed('a')[0]!.state, 'CONTAINER_RUNNING');
  });

  it('config, create and start failures map to their waiting reasons', async () => {
    const pod = makePod({
      containers: [
        container('cfg', { env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }),
        container('create'),
        container('run'),
      ],
    });
    fake.failNext('createContainer', new CriError('KTS_ERR_CRI', 'CreateContainer', 'no space left', { grpcCode: 13 }));
    fake.failNext(
      'startContainer',
      new CriError('KTS_ERR_CRI', 'StartContainer', 'exec: "nope": not found', { grpcCode: 2 }),
    );
    const r = await sync(pod);
    assert.equal(r.waiting.get('cfg')!.reason, 'CreateContainerConfigError');
    assert.match(r.waiting.get('cfg')!.message, /secret references need API server mode/);
    assert.deepEqual(r.waiting.get('create'), { reason: 'CreateContainerError', message: 'no space left' });
    assert.deepEqual(r.waiting.get('run'), { reason: 'RunContainerError', message: 'exec: "nope": not found' });
  });

  it('a sandbox failure is the sync error and nothing starts', async () => {
    fake.failNext('runPodSandbox', new CriError('KTS_ERR_CRI', 'RunPodSandbox', 'cni failed', { grpcCode: 2 }));
    const r = await sync(makePod());
    assert.match(r.error!.message, /Failed to create pod sandbox: cni failed/);
    assert.equal(fake.calls.includes('createContainer'), false);
  });

  it('init containers run one per sync, in order, before the regular containers', async () => {
    const pod = makePod({
      containers: [container('a')],
      initContainers: [container('i1', { command: ['true'] }), container('i2', { command: ['true'] })],
    });
    await sync(pod);
    assert.deepEqual(
      [...fake.containers.values()].map((c) => c.config.metadata.name),
      ['i1'],
    );
    fake.exitContainer(fake.containersNamed('i1')[0]!.id, 0);
    await sync(pod);
    assert.deepEqual(fake.containersNamed('i2').length, 1);
    assert.equal(fake.containersNamed('a').length, 0);
    fake.exitContainer(fake.containersNamed('i2')[0]!.id, 0);
    await sync(pod);
    assert.equal(fake.containersNamed('a')[0]!.state, 'CONTAINER_RUNNING');
  });

  it('a dead sandbox is replaced with the next attempt and the containers restart in it', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    const [sb1] = [...fake.sandboxes.values()];
    await fake.stopPodSandbox(sb1!.id);
    clock.advance(1000);
    await sync(pod);
    const sandboxes = [...fake.sandboxes.values()];
    assert.equal(sandboxes.length, 2);
    assert.equal(sandboxes[1]!.config.metadata.attempt, 1);
    const newest = fake.containersNamed('a').at(-1)!;
    assert.equal(newest.podSandboxId, sandboxes[1]!.id);
    assert.equal(newest.config.annotations['io.kubernetes.container.restartCount'], '1');
  });

  it('emptyDir volumes are created and bind-mounted', async () => {
    const pod = makePod({
      containers: [container('a', { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] })],
    });
    pod.spec!.volumes = [{ name: 'scratch', emptyDir: {} }];
    const r = await sync(pod);
    assert.deepEqual([...r.waiting], []);
    const hostPath = join(dir, 'root', 'pods', 'uid-1234', 'volumes', 'kubernetes.io~empty-dir', 'scratch');
    // The kubelet-managed /etc/hosts comes last, as upstream makeMounts (the pod has an IP).
    assert.deepEqual(fake.containersNamed('a')[0]!.config.mounts, [
      { containerPath: '/scratch', hostPath, readonly: false },
      { containerPath: '/etc/hosts', hostPath: join(dir, 'root', 'pods', 'uid-1234', 'etc-hosts'), readonly: false },
    ]);
    assert.ok(existsSync(hostPath));
  });
});

describe('ephemeral containers (upstream EphemeralContainersToStart, getTargetID, namespacesForPod)', () => {
  const withDebug = (pod: Pod, debug: Record<string, unknown>): Pod => ({
    ...pod,
    spec: { ...pod.spec!, ephemeralContainers: [{ name: 'debug', image: 'busybox:1.36', ...debug }] },
  });

  it("a pod update adds one: it starts in the target container's pid namespace, once", async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    const target = fake.containersNamed('a')[0]!;
    const updated = withDebug(pod, { targetContainerName: 'a', command: ['sh'] });
    const result = await sync(updated);
    assert.deepEqual([...result.waiting], []);
    const [debug, ...more] = fake.containersNamed('debug');
    assert.equal(more.length, 0);
    assert.equal(debug!.podSandboxId, target.podSandboxId, 'in the running sandbox');
    assert.deepEqual(debug!.config.linux?.securityContext?.namespaceOptions, {
      network: 'POD',
      pid: 'TARGET',
      ipc: 'POD',
      targetId: target.id,
    });
    assert.equal(debug!.config.annotations['io.kubernetes.container.type'], 'ephemeral');
    fake.exitContainer(debug!.id, 1);
    await sync(updated);
    await sync(updated);
    assert.equal(fake.containersNamed('debug').length, 1, 'an exited ephemeral container is never restarted');
    assert.equal(fake.containersNamed('a').length, 1, 'the pod is left alone');
  });

  it("without a target, or in a pod sharing its process namespace, the pod's pid mode", async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    await sync(withDebug(pod, {}));
    assert.equal(fake.containersNamed('debug')[0]!.config.linux?.securityContext?.namespaceOptions?.pid, 'CONTAINER');
    const shared = { ...pod, spec: { ...pod.spec!, shareProcessNamespace: true } };
    fake = new FakeRuntimeService();
    fake.addImage('busybox:1.36');
    rt = manager();
    await sync(shared);
    await sync(withDebug(shared, { targetContainerName: 'a' }));
    const ns = fake.containersNamed('debug')[0]!.config.linux?.securityContext?.namespaceOptions;
    assert.equal(ns?.pid, 'POD');
    assert.equal(ns?.targetId, undefined);
  });

  it('a target with no instance yet: CreateContainerConfigError, retried on the next sync', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    const result = await sync(withDebug(pod, { targetContainerName: 'nope' }));
    assert.deepEqual(result.waiting.get('debug'), {
      reason: 'CreateContainerConfigError',
      message: 'unable to find target container nope',
    });
    assert.equal(fake.containersNamed('debug').length, 0);
    assert.equal(fake.containersNamed('a')[0]!.state, 'CONTAINER_RUNNING', 'the pod runs on');
  });

  it('a refused field: not created, CreateContainerConfigError naming it', async () => {
    rt = manager({
      ephemeralRefusal: (_pod, idx) => (idx === 0 ? 'spec.ephemeralContainers[0].x is not supported' : undefined),
    });
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    const result = await sync(withDebug(pod, {}));
    assert.equal(result.waiting.get('debug')?.reason, 'CreateContainerConfigError');
    assert.equal(result.waiting.get('debug')?.message, 'spec.ephemeralContainers[0].x is not supported');
    assert.equal(fake.containersNamed('debug').length, 0);
  });

  it('killPod stops it with the pod', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    await sync(withDebug(pod, {}));
    const [running] = await rt.getPods(false);
    await rt.killPod(pod, running!);
    assert.equal(fake.containersNamed('debug')[0]!.state, 'CONTAINER_EXITED');
  });
});

describe('killPod', () => {
  it('stops every container with the pod grace period (minimum 2 s), then the sandbox', async () => {
    const pod = makePod();
    pod.spec!.terminationGracePeriodSeconds = 1;
    await sync(pod);
    const [running] = await rt.getPods(false);
    await rt.killPod(pod, running!);
    for (const c of fake.containers.values()) {
      assert.equal(c.state, 'CONTAINER_EXITED');
      assert.equal(c.stoppedWithGrace, 2);
    }
    assert.equal([...fake.sandboxes.values()][0]!.state, 'SANDBOX_NOTREADY');
    assert.equal(fake.calls.lastIndexOf('stopPodSandbox') > fake.calls.lastIndexOf('stopContainer'), true);
  });

  it('an override wins; without the pod the annotation recorded grace is used', async () => {
    const pod = makePod();
    pod.spec!.terminationGracePeriodSeconds = 45;
    await sync(pod);
    let [running] = await rt.getPods(false);
    assert.equal(running!.containers[0]!.terminationGracePeriodSeconds, 45);
    await rt.killPod(undefined, running!);
    assert.deepEqual(
      [...fake.containers.values()].map((c) => c.stoppedWithGrace),
      [45, 45],
    );
    const pod2 = makePod({ name: 'other' });
    pod2.metadata!.uid = 'uid-2';
    await sync(pod2);
    [running] = (await rt.getPods(false)).filter((p) => p.uid === 'uid-2');
    await rt.killPod(pod2, running!, 0);
    assert.deepEqual(
      fake
        .containersNamed('a')
        .filter((c) => c.config.labels['io.kubernetes.pod.uid'] === 'uid-2')
        .map((c) => c.stoppedWithGrace),
      [0],
    );
  });

  it('containers and sandboxes already gone are not errors; other failures are reported together', async () => {
    await sync(makePod());
    const [running] = await rt.getPods(false);
    fake.containers.delete(running!.containers[0]!.id);
    await rt.killPod(undefined, running!);
    await sync(makePod());
    const [again] = await rt.getPods(false);
    fake.alwaysFail.set('stopContainer', new CriError('KTS_ERR_CRI', 'StopContainer', 'boom', { grpcCode: 2 }));
    await assert.rejects(rt.killPod(undefined, again!), (err: Error) => {
      assert.match(err.message, /^failed to kill pod default\/web: /);
      assert.match(err.message, /container a \(\w+\): CRI StopContainer: boom/);
      assert.match(err.message, /container b \(\w+\): CRI StopContainer: boom/);
      return true;
    });
  });
});

describe('getPods / getPodStatus', () => {
  it('a fresh manager adopts the pods by their labels; foreign objects are ignored', async () => {
    await sync(makePod());
    // A foreign sandbox and container (no labels of ours).
    const sb = await fake.runPodSandbox({
      metadata: { name: 'x', namespace: 'y', uid: 'z', attempt: 0 },
      hostname: '',
      logDirectory: '',
      portMappings: [],
      labels: {},
      annotations: {},
      linux: { securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    });
    await fake.createContainer(
      sb,
      {
        metadata: { name: 'foreign', attempt: 0 },
        image: { image: 'i' },
        command: [],
        args: [],
        workingDir: '',
        envs: [],
        mounts: [],
        labels: { other: '1' },
        annotations: {},
        logPath: '',
      },
      {} as never,
    );
    const fresh = manager();
    const pods = await fresh.getPods(true);
    assert.equal(pods.length, 1);
    assert.deepEqual(
      { uid: pods[0]!.uid, name: pods[0]!.name, namespace: pods[0]!.namespace },
      { uid: 'uid-1234', name: 'web', namespace: 'default' },
    );
    assert.deepEqual(pods[0]!.containers.map((c) => c.name).sort(), ['a', 'b']);
    assert.equal(pods[0]!.containers[0]!.hash, hashContainer(container(pods[0]!.containers[0]!.name)));
    // Nothing to do for the same spec after adoption.
    const before = fake.calls.length;
    const r = await fresh.syncPod(makePod(), await fresh.getPodStatus('uid-1234', 'web', 'default'));
    assert.deepEqual([...r.waiting], []);
    assert.equal(fake.calls.slice(before).filter((c) => c === 'createContainer' || c === 'stopContainer').length, 0);
  });

  it('a container removed between list and status is skipped, not an error', async () => {
    await sync(makePod());
    const orig = fake.containerStatus.bind(fake);
    let first = true;
    fake.containerStatus = async (id: string) => {
      if (first) {
        first = false;
        fake.containers.delete(id);
      }
      return orig(id);
    };
    const status = await rt.getPodStatus('uid-1234', 'web', 'default');
    assert.equal(status.containerStatuses.length, 1);
  });

  it('statuses are newest first with exit details', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    fake.exitContainer(fake.containersNamed('a')[0]!.id, 3);
    await sync(pod);
    const st = await rt.getPodStatus('uid-1234', 'web', 'default');
    assert.deepEqual(
      st.containerStatuses.map((c) => [c.state, c.restartCount, c.exitCode]),
      [
        ['running', 1, 0],
        ['exited', 0, 3],
      ],
    );
    assert.equal(st.containerStatuses[1]!.reason, 'Error');
    assert.ok(st.containerStatuses[1]!.finishedAt instanceof Date);
  });

  /** A PLEG pod relist passes the cached status: the same answer, one round trip fewer. */
  it('with the previous status, its statuses are asked for beside the lists and the answer is the same', async () => {
    await sync(makePod());
    const previous = await rt.getPodStatus('uid-1234', 'web', 'default');
    fake.exitContainer(fake.containersNamed('a')[0]!.id, 1);
    const before = fake.calls.length;
    const early = await rt.getPodStatus('uid-1234', 'web', 'default', previous);
    const calls = fake.calls.slice(before);
    assert.ok(calls.lastIndexOf('containerStatus') < calls.indexOf('listContainers'), calls.join(' '));
    assert.ok(calls.lastIndexOf('podSandboxStatus') < calls.indexOf('listPodSandbox'), calls.join(' '));
    const plain = await rt.getPodStatus('uid-1234', 'web', 'default');
    assert.deepEqual({ ...early, timestamp: 0 }, { ...plain, timestamp: 0 });
    assert.equal(early.containerStatuses.find((c) => c.name === 'a')?.state, 'exited');
  });

  it('what the previous status knew and the runtime removed is dropped; what it did not know is still read', async () => {
    await sync(makePod());
    const previous = await rt.getPodStatus('uid-1234', 'web', 'default');
    const [a, b] = ['a', 'b'].map((n) => fake.containersNamed(n)[0]!.id);
    fake.containers.delete(a!);
    const st = await rt.getPodStatus('uid-1234', 'web', 'default', {
      sandboxStatuses: previous.sandboxStatuses,
      containerStatuses: [...previous.containerStatuses.filter((c) => c.id !== b), { id: 'gone' } as never],
    });
    assert.deepEqual(
      st.containerStatuses.map((c) => c.id),
      [b],
    );
  });
});

describe('garbageCollect', () => {
  it('keeps the newest dead instance per container of an active pod', async () => {
    const pod = makePod({ containers: [container('a')] });
    for (let i = 0; i < 3; i++) {
      await sync(pod);
      fake.exitContainer(fake.containersNamed('a').at(-1)!.id, 0);
      clock.advance(400_000); // past any back-off
    }
    await sync(pod);
    assert.equal(fake.containersNamed('a').length, 4);
    await rt.garbageCollect(new Set(['uid-1234']));
    const left = fake.containersNamed('a');
    assert.deepEqual(
      left.map((c) => c.state),
      ['CONTAINER_EXITED', 'CONTAINER_RUNNING'],
    );
    assert.equal(left[0]!.config.annotations['io.kubernetes.container.restartCount'], '2');
  });

  it('termination messages: a file per instance bound last, read on exit, removed with its container', async () => {
    const pod = makePod({
      containers: [
        container('a', { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }),
      ],
    });
    const messages: string[] = [];
    for (let i = 0; i < 3; i++) {
      await sync(pod);
      const newest = fake.containersNamed('a').at(-1)!;
      const mounts = newest.config.mounts;
      assert.deepEqual(
        mounts.map((m) => m.containerPath),
        ['/etc/hosts', '/dev/termination-log'],
        'after /etc/hosts, as upstream makeMounts',
      );
      await writeFile(mounts[1]!.hostPath, `exit ${i}`);
      fake.exitContainer(newest.id, 1);
      const st = await rt.getPodStatus('uid-1234', 'web', 'default');
      messages.push(st.containerStatuses.find((c) => c.id === newest.id)!.message);
      clock.advance(400_000); // past any back-off
    }
    assert.deepEqual(messages, ['exit 0', 'exit 1', 'exit 2'], 'each instance reads its own file');
    const files = () => readdirSync(join(dir, 'root', 'pods', 'uid-1234', 'containers', 'a'));
    assert.equal(files().length, 3);
    await rt.garbageCollect(new Set(['uid-1234']));
    assert.equal(fake.containersNamed('a').length, 1, 'the newest dead instance is kept');
    assert.deepEqual(
      files(),
      [basename(fake.containersNamed('a')[0]!.config.mounts[1]!.hostPath)],
      'with its file only',
    );
  });

  it('removes everything of a pod that is gone once it is stopped, including its log dir and emptyDirs', async () => {
    const pod = makePod({ containers: [container('a', { volumeMounts: [{ name: 'v', mountPath: '/v' }] })] });
    pod.spec!.volumes = [{ name: 'v', emptyDir: {} }];
    await sync(pod);
    await rt.garbageCollect(new Set());
    assert.equal(fake.containers.size, 1, 'running containers are never collected');
    const [running] = await rt.getPods(false);
    await rt.killPod(pod, running!);
    await rt.garbageCollect(new Set());
    assert.equal(fake.containers.size, 0);
    assert.equal(fake.sandboxes.size, 0);
    assert.equal(existsSync(join(dir, 'logs', 'default_web_uid-1234')), false);
    // The volumes go here; the pod directory itself (etc-hosts, containers/) goes with the
    // kubelet's housekeeping (cleanupOrphanedPodDirs), as upstream.
    assert.equal(existsSync(join(dir, 'root', 'pods', 'uid-1234', 'volumes')), false);
  });

  it("runs the volume plugins' orphan sweep after the pods that are gone (CSI global mounts)", async () => {
    const order: string[] = [];
    const sweeping: RuntimeManagerDeps['volumes'] = {
      getMountedVolumesForPod: (uid) => volumes.getMountedVolumesForPod(uid),
      prepareSubPath: (m) => volumes.prepareSubPath(m),
      unmountPodVolumes: async (uid) => void order.push(`unmount ${uid}`),
      cleanupOrphanedVolumes: async () => void order.push('sweep'),
    };
    await mkdir(join(dir, 'root', 'pods', 'uid-gone'), { recursive: true });
    const imageManager = createImageManager({ images: fake, clock, recorder });
    const gc = fakeRuntimeManager(fake, dir, recorder, { imageManager, clock, volumes: sweeping });
    await gc.garbageCollect(new Set());
    assert.ok(order.includes('unmount uid-gone'));
    assert.equal(order.at(-1), 'sweep', 'the sweep runs once, after the pods');
    assert.equal(order.filter((o) => o === 'sweep').length, 1);
  });

  it('removes old dead sandboxes of an active pod but keeps the newest', async () => {
    const pod = makePod({ containers: [container('a')] });
    await sync(pod);
    await fake.stopPodSandbox([...fake.sandboxes.keys()][0]!);
    clock.advance(1000);
    await sync(pod);
    assert.equal(fake.sandboxes.size, 2);
    await rt.garbageCollect(new Set(['uid-1234']));
    // The old sandbox still held the dead container instance kept for logs: that container
    // goes only once a newer dead instance exists, so the sandbox stays with it.
    assert.equal(fake.sandboxes.size, 2);
    fake.exitContainer(fake.containersNamed('a').at(-1)!.id, 0);
    await rt.garbageCollect(new Set(['uid-1234']));
    assert.equal(fake.sandboxes.size, 1);
  });

  it("a failed step does not stop the others: one CRI error names every failed step, the runtime's errors its cause (upstream aggregate)", async () => {
    const down = new CriError('KTS_ERR_CRI_UNAVAILABLE', 'ListContainers', 'down');
    fake.alwaysFail.set('listContainers', down);
    const calls = () => fake.calls.filter((c) => c === 'listContainers' || c === 'listPodSandbox').length;
    const before = calls();
    const err = await rt.garbageCollect(new Set()).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof KubeletError, String(err));
    assert.equal(err.code, 'KTS_ERR_CRI');
    assert.ok(err.cause instanceof AggregateError);
    assert.deepEqual(err.cause.errors, [down, down, down]);
    assert.equal(
      err.message,
      [
        'garbage collection of containers failed: CRI ListContainers: down',
        'garbage collection of sandboxes failed: CRI ListContainers: down',
        'garbage collection of pod directories failed: CRI ListContainers: down',
      ].join('; '),
    );
    assert.ok(calls() - before >= 3, 'each step asked the runtime');
  });

  it('leaves foreign log directories alone', async () => {
    await mkdir(join(dir, 'logs', 'not-ours'), { recursive: true });
    await writeFile(join(dir, 'logs', 'not-ours', 'f'), 'x');
    await rt.garbageCollect(new Set());
    assert.ok(existsSync(join(dir, 'logs', 'not-ours', 'f')));
  });
});

describe('container events', () => {
  it('Pulled, Created, Started on start; FailedMount for a volume; Killing on kill', async () => {
    const pod = makePod({
      containers: [container('a'), container('m', { volumeMounts: [{ name: 'nope', mountPath: '/x' }] })],
    });
    await sync(pod);
    const reasons = (c: string) =>
      recorder
        .recent()
        .filter((e) => e.involvedObject.fieldPath === `spec.containers{${c}}`)
        .map((e) => e.reason);
    assert.deepEqual(reasons('a'), ['Pulled', 'Created', 'Started']);
    assert.ok(reasons('m').includes('FailedMount'), reasons('m').join(','));
    const running = (await rt.getPods(false)).find((p) => p.uid === pod.metadata!.uid)!;
    await rt.killPod(pod, running, 0);
    assert.ok(reasons('a').includes('Killing'));
    // upstream killContainer: the message once, not "Stopping container a: Stopping container a"
    const killing = recorder
      .recent()
      .find((e) => e.reason === 'Killing' && e.involvedObject.fieldPath === 'spec.containers{a}');
    assert.equal(killing?.message, 'Stopping container a');
  });
});
