/** The client against a fake runtime.v1 server: wire encoding, deadlines, error mapping, reply checks. */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { connectRuntime, RUNTIME_SERVICE, type CriConnection } from '../../src/cri/index.js';
import { serviceDefinition } from '../../src/cri/proto.js';
import { toBigInt } from '../../src/cri/convert.js';
import { CriError } from '../../src/errors.js';
import { GrpcStatusError, startFakeCriServer, type FakeCriServer } from './fake-cri-server.js';
import type { PodSandboxConfig } from '../../src/cri/types.js';

let server: FakeCriServer;
let cri: CriConnection;

before(async () => {
  server = await startFakeCriServer();
  cri = connectRuntime(server.endpoint, { timeoutMs: 5_000 });
});
after(async () => {
  cri.runtime.close();
  cri.images.close();
  await server.close();
});
beforeEach(() => {
  for (const k of Object.keys(server.handlers)) delete server.handlers[k];
  server.requests.length = 0;
});

const sandboxConfig: PodSandboxConfig = {
  metadata: { name: 'p', uid: 'u1', namespace: 'ns', attempt: 2 },
  hostname: 'p',
  logDirectory: '/var/log/pods/ns_p_u1',
  dnsConfig: { servers: ['10.0.0.10'], searches: ['ns.svc.cluster.local'], options: ['ndots:5'] },
  portMappings: [{ protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIp: '127.0.0.1' }],
  labels: { app: 'x' },
  annotations: { note: 'y' },
  linux: {
    cgroupParent: '/kubepods/pod-u1',
    securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' }, privileged: true },
  },
};

async function rejectsWith(p: Promise<unknown>, code: string, re?: RegExp): Promise<CriError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof CriError, `expected CriError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (re) assert.match(err.message, re);
    return err;
  }
  assert.fail(`expected ${code}`);
}

test('Version sends the kubelet API version and validates the reply', async () => {
  server.handlers.Version = () => ({
    version: '0.1.0',
    runtimeName: 'fake',
    runtimeVersion: '1.0',
    runtimeApiVersion: 'v1',
  });
  assert.deepEqual(await cri.runtime.version(), {
    version: '0.1.0',
    runtimeName: 'fake',
    runtimeVersion: '1.0',
    runtimeApiVersion: 'v1',
  });
  assert.equal(server.requests[0]!.request.version, '0.1.0');
  server.handlers.Version = () => ({ version: '0.1.0', runtimeName: 'fake' });
  await rejectsWith(cri.runtime.version(), 'KTS_ERR_CRI_REPLY', /not all fields are set/);
});

test('RunPodSandbox encodes the config (enums, maps, nested) and requires pod_sandbox_id', async () => {
  server.handlers.RunPodSandbox = () => ({ podSandboxId: 'sb-1' });
  assert.equal(await cri.runtime.runPodSandbox(sandboxConfig, 'runc'), 'sb-1');
  const req = server.requests[0]!.request;
  assert.equal(req.runtimeHandler, 'runc');
  assert.deepEqual(req.config.metadata, { name: 'p', uid: 'u1', namespace: 'ns', attempt: 2 });
  assert.equal(req.config.linux.securityContext.namespaceOptions.network, 'NODE');
  assert.equal(req.config.linux.securityContext.namespaceOptions.pid, 'CONTAINER');
  assert.equal(req.config.linux.securityContext.privileged, true);
  assert.equal(req.config.linux.cgroupParent, '/kubepods/pod-u1');
  assert.deepEqual(req.config.portMappings, [
    { protocol: 'UDP', containerPort: 53, hostPort: 5353, hostIp: '127.0.0.1' },
  ]);
  assert.deepEqual(req.config.labels, { app: 'x' });
  assert.deepEqual(req.config.dnsConfig.options, ['ndots:5']);

  server.handlers.RunPodSandbox = () => ({});
  await rejectsWith(cri.runtime.runPodSandbox(sandboxConfig), 'KTS_ERR_CRI_REPLY', /podSandboxId is not set/);
});

test('CreateContainer requires container_id; int64 resources go out as numbers', async () => {
  server.handlers.CreateContainer = () => ({ containerId: '' });
  await rejectsWith(
    cri.runtime.createContainer(
      'sb',
      {
        metadata: { name: 'c', attempt: 0 },
        image: { image: 'busybox' },
        command: ['sh'],
        args: ['-c', 'true'],
        workingDir: '/',
        envs: [{ key: 'A', value: '1' }],
        mounts: [{ containerPath: '/data', hostPath: '/tmp', readonly: true }],
        labels: {},
        annotations: {},
        logPath: 'c/0.log',
        linux: {
          resources: { cpuPeriod: 100000, cpuQuota: 50000, memoryLimitInBytes: 2 ** 40, oomScoreAdj: -997 },
          securityContext: { runAsUser: { value: 65534 } },
        },
      },
      sandboxConfig,
    ),
    'KTS_ERR_CRI_REPLY',
  );
  const req = server.requests[0]!.request;
  assert.equal(req.podSandboxId, 'sb');
  assert.equal(req.config.linux.resources.memoryLimitInBytes, String(2 ** 40));
  assert.equal(req.config.linux.resources.oomScoreAdj, '-997');
  assert.equal(req.config.linux.securityContext.runAsUser.value, '65534');
  assert.deepEqual(req.config.mounts[0].containerPath, '/data');
  assert.equal(req.config.mounts[0].readonly, true);
  assert.equal(req.sandboxConfig.metadata.uid, 'u1');
});

test('ListContainers: filter encoding, int64 → bigint, enum names; raw path decodes to the same', async () => {
  const reply = {
    containers: [
      {
        id: 'c1',
        podSandboxId: 'sb',
        metadata: { name: 'app', attempt: 1 },
        image: { image: 'busybox' },
        imageRef: 'sha256:1',
        state: 'CONTAINER_EXITED',
        createdAt: '1795322123582696886',
        labels: { k: 'v' },
        annotations: {},
      },
    ],
  };
  server.handlers.ListContainers = () => reply;
  const list = await cri.runtime.listContainers({
    podSandboxId: 'sb',
    state: 'CONTAINER_RUNNING',
    labelSelector: { k: 'v' },
  });
  assert.equal(list.length, 1);
  assert.equal(list[0]!.createdAt, 1795322123582696886n);
  assert.equal(list[0]!.state, 'CONTAINER_EXITED');
  assert.equal(list[0]!.image, 'busybox');
  const f = server.requests[0]!.request.filter;
  assert.equal(f.podSandboxId, 'sb');
  assert.equal(f.state.state, 'CONTAINER_RUNNING');
  assert.deepEqual(f.labelSelector, { k: 'v' });

  const raw = await cri.runtime.listContainersRaw();
  assert.ok(Buffer.isBuffer(raw));
  const decoded = serviceDefinition(RUNTIME_SERVICE).ListContainers!.responseDeserialize(raw) as typeof reply;
  assert.equal(decoded.containers[0]!.id, 'c1');
  // The client's definition leaves int64 as Long values (no decimal string round trip).
  assert.equal(toBigInt(decoded.containers[0]!.createdAt), 1795322123582696886n);
  // No filter: an empty filter message (or none) goes out, never a bogus one.
  assert.equal(server.requests[1]!.request.filter?.id ?? '', '');
});

test('ListPodSandbox and PodSandboxStatus', async () => {
  server.handlers.ListPodSandbox = () => ({
    items: [
      {
        id: 'sb',
        metadata: { name: 'p', uid: 'u', namespace: 'n', attempt: 0 },
        state: 'SANDBOX_NOTREADY',
        createdAt: '5',
        labels: {},
        annotations: {},
        runtimeHandler: '',
      },
    ],
  });
  const items = await cri.runtime.listPodSandbox({ state: 'SANDBOX_READY' });
  assert.equal(items[0]!.state, 'SANDBOX_NOTREADY');
  assert.equal(items[0]!.createdAt, 5n);
  assert.equal(server.requests[0]!.request.filter.state.state, 'SANDBOX_READY');

  server.handlers.PodSandboxStatus = () => ({
    status: {
      id: 'sb',
      metadata: { name: 'p', uid: 'u', namespace: 'n', attempt: 0 },
      state: 'SANDBOX_READY',
      createdAt: '7',
      network: { ip: '10.89.0.5' },
      linux: { namespaces: { options: { network: 'NODE' } } },
    },
  });
  const st = await cri.runtime.podSandboxStatus('sb');
  assert.equal(st.networkNamespaceMode, 'NODE');
  assert.equal(st.network.ip, '10.89.0.5');

  server.handlers.PodSandboxStatus = () => ({
    status: { id: 'sb', metadata: { name: 'p', uid: '', namespace: 'n' }, createdAt: '7' },
  });
  await rejectsWith(cri.runtime.podSandboxStatus('sb'), 'KTS_ERR_CRI_REPLY', /metadata/);
  server.handlers.PodSandboxStatus = () => ({});
  await rejectsWith(cri.runtime.podSandboxStatus('sb'), 'KTS_ERR_CRI_REPLY', /status is not set/);
});

test('ContainerStatus reply checks follow upstream verifyContainerStatus', async () => {
  const good = {
    id: 'c',
    metadata: { name: 'app', attempt: 0 },
    state: 'CONTAINER_RUNNING',
    createdAt: '1',
    startedAt: '2',
    image: { image: 'busybox' },
    imageRef: 'sha256:1',
  };
  server.handlers.ContainerStatus = () => ({ status: good });
  const st = await cri.runtime.containerStatus('c');
  assert.equal(st.state, 'CONTAINER_RUNNING');
  assert.equal(st.startedAt, 2n);
  assert.equal(st.finishedAt, 0n);
  for (const bad of [
    { ...good, imageRef: '' },
    { ...good, createdAt: '0' },
    { ...good, metadata: null },
    { ...good, id: '' },
  ]) {
    server.handlers.ContainerStatus = () => ({ status: bad });
    await rejectsWith(cri.runtime.containerStatus('c'), 'KTS_ERR_CRI_REPLY');
  }
});

test('gRPC status codes become typed CriErrors naming the method', async () => {
  const cases: [grpc.status, string][] = [
    [grpc.status.NOT_FOUND, 'KTS_ERR_CRI_NOT_FOUND'],
    [grpc.status.UNIMPLEMENTED, 'KTS_ERR_CRI_UNIMPLEMENTED'],
    [grpc.status.UNAVAILABLE, 'KTS_ERR_CRI_UNAVAILABLE'],
    [grpc.status.INTERNAL, 'KTS_ERR_CRI'],
    [grpc.status.ALREADY_EXISTS, 'KTS_ERR_CRI'],
  ];
  for (const [code, want] of cases) {
    server.handlers.StartContainer = () => {
      throw new GrpcStatusError(code, `boom ${code}`);
    };
    const e = await rejectsWith(cri.runtime.startContainer('c'), want, /^CRI StartContainer: /);
    assert.equal(e.grpcCode, code);
    assert.equal(e.method, 'StartContainer');
    assert.match(e.message, new RegExp(`boom ${code}$`));
  }
  // A method the server does not implement at all.
  await rejectsWith(cri.runtime.reopenContainerLog('c'), 'KTS_ERR_CRI_UNIMPLEMENTED', /ReopenContainerLog/);
});

test('deadlines: the call deadline → KTS_ERR_CRI_TIMEOUT; StopContainer is extended by its grace period', async () => {
  const slow = connectRuntime(server.endpoint, { timeoutMs: 150 });
  try {
    server.handlers.RemoveContainer = () => new Promise((r) => setTimeout(() => r({}), 600));
    const t0 = Date.now();
    await rejectsWith(slow.runtime.removeContainer('c'), 'KTS_ERR_CRI_TIMEOUT', /RemoveContainer/);
    assert.ok(Date.now() - t0 < 550, 'failed at the deadline, not at the reply');

    server.handlers.StopContainer = (req) => new Promise((r) => setTimeout(() => r({}), 400 + Number(req.timeout) * 0));
    await slow.runtime.stopContainer('c', 1); // deadline 150 ms + 1 s
    assert.equal(server.requests.at(-1)!.request.timeout, '1');
    await rejectsWith(slow.runtime.stopContainer('c', 0), 'KTS_ERR_CRI_TIMEOUT');

    // A per-call short deadline for liveness checks.
    server.handlers.Status = () => new Promise((r) => setTimeout(() => r({ status: { conditions: [] } }), 400));
    await rejectsWith(cri.runtime.status({ timeoutMs: 100 }), 'KTS_ERR_CRI_TIMEOUT', /Status/);
  } finally {
    slow.runtime.close();
    slow.images.close();
  }
});

test('ExecSync returns bytes and the exit code; its deadline covers the command timeout', async () => {
  server.handlers.ExecSync = (req) => ({
    stdout: Buffer.from(`ran ${req.cmd.join(' ')}`),
    stderr: Buffer.from([0xff, 0x00]),
    exitCode: 3,
  });
  const r = await cri.runtime.execSync('c', ['echo', 'hi'], 2);
  assert.equal(r.stdout.toString(), 'ran echo hi');
  assert.deepEqual([...r.stderr], [0xff, 0x00]);
  assert.equal(r.exitCode, 3);
  assert.equal(server.requests[0]!.request.timeout, '2');
});

test('an unreachable socket is KTS_ERR_CRI_UNAVAILABLE', async () => {
  const dead = connectRuntime('/nonexistent/kts/cri.sock', { timeoutMs: 2_000 });
  try {
    await rejectsWith(dead.runtime.version(), 'KTS_ERR_CRI_UNAVAILABLE', /^CRI Version: UNAVAILABLE/);
    await rejectsWith(dead.images.listImages(), 'KTS_ERR_CRI_UNAVAILABLE', /ListImages/);
  } finally {
    dead.runtime.close();
    dead.images.close();
  }
});

test('a closed client fails with KTS_ERR_CRI', async () => {
  const c = connectRuntime(server.endpoint);
  c.runtime.close();
  c.images.close();
  await rejectsWith(c.runtime.version(), 'KTS_ERR_CRI', /closed/);
});

test('ImageService: status of a missing image is undefined; uint64 size; pull requires image_ref', async () => {
  server.handlers.ImageStatus = (req) =>
    req.image.image === 'present'
      ? { image: { id: 'sha256:i', repoTags: ['present:latest'], size: '9007199254740993', uid: { value: '0' } } }
      : {};
  assert.equal(await cri.images.imageStatus('absent'), undefined);
  const img = await cri.images.imageStatus('present');
  assert.equal(img?.size, 9007199254740993n);
  assert.equal(img?.uid, 0n);

  server.handlers.ImageStatus = () => ({ image: { id: 'sha256:i', size: '0' } });
  await rejectsWith(cri.images.imageStatus('x'), 'KTS_ERR_CRI_REPLY');

  server.handlers.PullImage = (req) => ({ imageRef: req.auth?.username === 'u' ? 'sha256:pulled' : '' });
  assert.equal(await cri.images.pullImage('x', { username: 'u', password: 'p' }), 'sha256:pulled');
  await rejectsWith(cri.images.pullImage('x'), 'KTS_ERR_CRI_REPLY', /imageRef/);
  server.handlers.PullImage = () => {
    throw new GrpcStatusError(grpc.status.NOT_FOUND, 'failed to resolve reference');
  };
  await rejectsWith(cri.images.pullImage('x'), 'KTS_ERR_CRI_NOT_FOUND', /PullImage/);

  server.handlers.ImageFsInfo = () => ({
    imageFilesystems: [
      { timestamp: '11', fsId: { mountpoint: '/var/lib/x' }, usedBytes: { value: '100' }, inodesUsed: { value: '7' } },
    ],
  });
  assert.deepEqual(await cri.images.imageFsInfo(), [
    { timestamp: 11n, mountpoint: '/var/lib/x', usedBytes: 100n, inodesUsed: 7n },
  ]);
});

test('ContainerStats: wrapped uint64 values → bigint, unset → absent', async () => {
  server.handlers.ListContainerStats = () => ({
    stats: [
      {
        attributes: { id: 'c', metadata: { name: 'app', attempt: 0 }, labels: {}, annotations: {} },
        cpu: { timestamp: '1', usageCoreNanoSeconds: { value: '123456789012345' } },
        memory: { timestamp: '2', workingSetBytes: { value: '4096' } },
      },
    ],
  });
  const [s] = await cri.runtime.listContainerStats();
  assert.equal(s!.id, 'c');
  assert.equal(s!.cpu?.usageCoreNanoSeconds, 123456789012345n);
  assert.ok(!('usageNanoCores' in s!.cpu!));
  assert.equal(s!.memory?.workingSetBytes, 4096n);
  assert.ok(!('writableLayer' in s!));
});

test('GetContainerEvents reports UNIMPLEMENTED through onError', async () => {
  const err = await new Promise<CriError>((resolve) => {
    cri.runtime.getContainerEvents(
      () => assert.fail('no events expected'),
      (e) => resolve(e),
    );
  });
  assert.equal(err.code, 'KTS_ERR_CRI_UNIMPLEMENTED');
  assert.equal(err.method, 'GetContainerEvents');
});

test('RuntimeConfig through the client: each driver, no Linux part, and a runtime without the method', async () => {
  server.handlers.RuntimeConfig = () => ({ linux: { cgroupDriver: 'CGROUPFS' } });
  assert.deepEqual(await cri.runtime.runtimeConfig(), { cgroupDriver: 'cgroupfs' });
  // SYSTEMD is the enum's zero: on the wire, a present but empty LinuxRuntimeConfiguration.
  server.handlers.RuntimeConfig = () => ({ linux: { cgroupDriver: 'SYSTEMD' } });
  assert.deepEqual(await cri.runtime.runtimeConfig(), { cgroupDriver: 'systemd' });
  server.handlers.RuntimeConfig = () => ({});
  assert.deepEqual(await cri.runtime.runtimeConfig(), {});
  delete server.handlers.RuntimeConfig;
  await assert.rejects(
    cri.runtime.runtimeConfig(),
    (err: unknown) =>
      err instanceof CriError && err.code === 'KTS_ERR_CRI_UNIMPLEMENTED' && err.method === 'RuntimeConfig',
  );
});

test('CreateContainer and RunPodSandbox carry the whole security context (enum names, paths, SELinux)', async () => {
  server.handlers.CreateContainer = () => ({ containerId: 'c1' });
  server.handlers.RunPodSandbox = () => ({ podSandboxId: 'sb-1' });
  const selinuxOptions = { user: 'u', role: 'r', type: 't', level: 's0' };
  const securityContext = {
    runAsUsername: 'nobody',
    supplementalGroups: [2000, 3000],
    supplementalGroupsPolicy: 'Strict' as const,
    selinuxOptions,
    maskedPaths: ['/proc/kcore'],
    readonlyPaths: ['/proc/sys'],
    noNewPrivs: true,
    seccomp: { profileType: 'RuntimeDefault' as const },
  };
  const config = {
    metadata: { name: 'c', attempt: 0 },
    image: { image: 'busybox' },
    command: [],
    args: [],
    workingDir: '',
    envs: [],
    mounts: [],
    labels: {},
    annotations: {},
    logPath: 'c/0.log',
    linux: { securityContext },
  };
  const sandbox = {
    ...sandboxConfig,
    linux: {
      securityContext: {
        ...sandboxConfig.linux.securityContext,
        runAsUser: { value: 1000 },
        supplementalGroupsPolicy: 'Strict' as const,
        selinuxOptions,
        seccomp: { profileType: 'RuntimeDefault' as const },
      },
    },
  };
  await cri.runtime.createContainer('sb', config, sandbox);
  const sc = server.requests[0]!.request.config.linux.securityContext;
  assert.equal(sc.runAsUsername, 'nobody');
  assert.deepEqual(sc.supplementalGroups, ['2000', '3000']);
  assert.equal(sc.supplementalGroupsPolicy, 'Strict');
  assert.deepEqual(sc.selinuxOptions, selinuxOptions);
  assert.deepEqual([sc.maskedPaths, sc.readonlyPaths, sc.noNewPrivs], [['/proc/kcore'], ['/proc/sys'], true]);
  await cri.runtime.runPodSandbox(sandbox);
  const ssc = server.requests[1]!.request.config.linux.securityContext;
  assert.deepEqual([ssc.runAsUser.value, ssc.supplementalGroupsPolicy], ['1000', 'Strict']);
  assert.deepEqual([ssc.seccomp.profileType, ssc.selinuxOptions.type], ['RuntimeDefault', 't']);
});
