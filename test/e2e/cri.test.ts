/**
 * The CRI client against the real containerd (test/support/containerd.ts): runtime and image
 * services, a sandbox on the pod network and one on the host network, a busybox container's
 * life cycle, exec, logs, and the error mapping of a real NotFound.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import type { ContainerConfig, PodSandboxConfig } from '../../src/cri/types.js';
import { CriError } from '../../src/errors.js';
import { CriEventTrigger } from '../../src/pleg/index.js';
import { removeTestPods, runtimeEndpoint, TEST_IMAGES, TEST_LABEL, uniqueName } from '../support/containerd.js';
import { testTempDir } from '../support/temp-dir.js';

const RUN = uniqueName('cri');
const LABELS = { [TEST_LABEL]: RUN };
let cri: CriConnection;
let logRoot: string;

before(async () => {
  cri = connectRuntime(await runtimeEndpoint(), { timeoutMs: 60_000 });
  logRoot = testTempDir('kts-cri-e2e-');
});

after(async () => {
  if (cri) {
    await removeTestPods(cri.runtime, { labels: LABELS });
    cri.runtime.close();
    cri.images.close();
  }
  if (logRoot) rmSync(logRoot, { recursive: true, force: true });
});

function sandboxConfig(name: string, network: 'POD' | 'NODE'): PodSandboxConfig {
  const uid = `${RUN}-${name}`;
  return {
    metadata: { name: `${RUN}-${name}`, uid, namespace: 'kts-e2e', attempt: 0 },
    hostname: network === 'NODE' ? '' : name,
    logDirectory: join(logRoot, uid),
    portMappings: [],
    labels: { ...LABELS, pod: name },
    annotations: { 'kubelet-ts.test/annotation': 'kept' },
    linux: { securityContext: { namespaceOptions: { network, pid: 'CONTAINER', ipc: 'POD' } } },
  };
}

function containerConfig(name: string, script: string): ContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image: TEST_IMAGES.busybox },
    command: ['sh', '-c', script],
    args: [],
    workingDir: '/tmp',
    envs: [{ key: 'GREETING', value: 'hello from kts' }],
    mounts: [],
    labels: { ...LABELS, container: name },
    annotations: {},
    logPath: `${name}/0.log`,
  };
}

async function expectCode(p: Promise<unknown>, code: string, method: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CriError, String(err));
    assert.equal(err.code, code, err.message);
    assert.equal(err.method, method);
    return true;
  });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('Version and Status', async () => {
  const v = await cri.runtime.version({ timeoutMs: 2_000 });
  assert.equal(v.runtimeName, 'containerd');
  assert.equal(v.runtimeApiVersion, 'v1');
  const st = await cri.runtime.status({ timeoutMs: 2_000 });
  const cond = Object.fromEntries(st.conditions.map((c) => [c.type, c.status]));
  assert.equal(cond.RuntimeReady, true);
  assert.equal(cond.NetworkReady, true);
});

test('ImageService lists the local images by their full names', async () => {
  const images = await cri.images.listImages();
  const tags = images.flatMap((i) => i.repoTags);
  assert.ok(tags.includes(TEST_IMAGES.busybox), tags.join(', '));
  assert.ok(tags.includes(TEST_IMAGES.pause), tags.join(', '));
  const bb = await cri.images.imageStatus(TEST_IMAGES.busybox);
  assert.ok(bb);
  assert.match(bb.id, /^sha256:[0-9a-f]{64}$/);
  assert.ok(bb.size > 0n);
  assert.equal(await cri.images.imageStatus('localhost/kubelet-ts/absent:latest'), undefined);
  const fs = await cri.images.imageFsInfo();
  assert.ok(fs.length >= 1 && fs[0]!.timestamp > 0n && fs[0]!.mountpoint !== '');
});

test('pod-network sandbox + busybox container: run, list, status, exec, logs, stop, remove', async () => {
  const sbConfig = sandboxConfig('podnet', 'POD');
  const sb = await cri.runtime.runPodSandbox(sbConfig);
  const sbStatus = await cri.runtime.podSandboxStatus(sb);
  assert.equal(sbStatus.state, 'SANDBOX_READY');
  assert.equal(sbStatus.networkNamespaceMode, 'POD');
  assert.match(sbStatus.network.ip, /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal(sbStatus.metadata.uid, sbConfig.metadata.uid);
  assert.equal(sbStatus.annotations['kubelet-ts.test/annotation'], 'kept');
  assert.ok(sbStatus.createdAt > 1_600_000_000_000_000_000n, 'createdAt is nanoseconds');
  const listed = await cri.runtime.listPodSandbox({ labelSelector: { ...LABELS, pod: 'podnet' } });
  assert.deepEqual(
    listed.map((s) => s.id),
    [sb],
  );

  const cid = await cri.runtime.createContainer(
    sb,
    containerConfig('app', 'echo "$GREETING"; exec sleep 1000'),
    sbConfig,
  );
  let st = await cri.runtime.containerStatus(cid);
  assert.equal(st.state, 'CONTAINER_CREATED');
  await cri.runtime.startContainer(cid);
  st = await cri.runtime.containerStatus(cid);
  assert.equal(st.state, 'CONTAINER_RUNNING');
  assert.ok(st.startedAt >= st.createdAt);
  assert.equal(st.image, TEST_IMAGES.busybox);
  assert.match(st.imageRef, /^sha256:/);
  assert.equal(st.logPath, join(sbConfig.logDirectory, 'app/0.log'));

  const running = await cri.runtime.listContainers({ podSandboxId: sb, state: 'CONTAINER_RUNNING' });
  assert.deepEqual(
    running.map((c) => c.id),
    [cid],
  );
  assert.equal(running[0]!.metadata.name, 'app');
  assert.equal(running[0]!.labels.container, 'app');
  const raw = await cri.runtime.listContainersRaw({ podSandboxId: sb });
  assert.ok(raw.includes(Buffer.from(cid)), 'the raw reply carries the container id');

  const ok = await cri.runtime.execSync(cid, ['sh', '-c', 'pwd; echo "$GREETING"; hostname'], 10);
  assert.equal(ok.exitCode, 0);
  assert.equal(ok.stdout.toString(), '/tmp\nhello from kts\npodnet\n');
  const bad = await cri.runtime.execSync(cid, ['sh', '-c', 'echo oops >&2; exit 7'], 10);
  assert.equal(bad.exitCode, 7);
  assert.equal(bad.stderr.toString(), 'oops\n');
  const ip = await cri.runtime.execSync(cid, ['ip', '-4', '-o', 'addr', 'show', 'eth0'], 10);
  assert.ok(ip.stdout.toString().includes(`${sbStatus.network.ip}/`), ip.stdout.toString());

  const log = await waitFor('container log', async () => {
    try {
      const text = readFileSync(st.logPath, 'utf8');
      return text.includes('hello from kts') ? text : undefined;
    } catch {
      return undefined;
    }
  });
  assert.match(log, /^\S+ stdout F hello from kts$/m);

  const t0 = Date.now();
  await cri.runtime.stopContainer(cid, 5);
  assert.ok(Date.now() - t0 < 4_000, 'sleep dies on SIGTERM, well before the grace period');
  st = await cri.runtime.containerStatus(cid);
  assert.equal(st.state, 'CONTAINER_EXITED');
  assert.equal(st.exitCode, 143);
  assert.ok(st.finishedAt >= st.startedAt);
  assert.equal(st.reason, 'Error');

  await cri.runtime.removeContainer(cid);
  await expectCode(cri.runtime.containerStatus(cid), 'KTS_ERR_CRI_NOT_FOUND', 'ContainerStatus');
  await cri.runtime.removeContainer(cid); // idempotent

  await cri.runtime.stopPodSandbox(sb);
  assert.equal((await cri.runtime.podSandboxStatus(sb)).state, 'SANDBOX_NOTREADY');
  await cri.runtime.stopPodSandbox(sb); // idempotent
  await cri.runtime.removePodSandbox(sb);
  await expectCode(cri.runtime.podSandboxStatus(sb), 'KTS_ERR_CRI_NOT_FOUND', 'PodSandboxStatus');
});

test('host-network sandbox reports NODE and no pod IP; its container sees the host network', async () => {
  const sbConfig = sandboxConfig('hostnet', 'NODE');
  const sb = await cri.runtime.runPodSandbox(sbConfig);
  const sbStatus = await cri.runtime.podSandboxStatus(sb);
  assert.equal(sbStatus.state, 'SANDBOX_READY');
  assert.equal(sbStatus.networkNamespaceMode, 'NODE');
  assert.equal(sbStatus.network.ip, '');

  const cid = await cri.runtime.createContainer(sb, containerConfig('host', 'exec sleep 1000'), sbConfig);
  await cri.runtime.startContainer(cid);
  const links = await cri.runtime.execSync(cid, ['cat', '/proc/net/dev'], 10);
  assert.equal(links.exitCode, 0);
  assert.ok(
    /\blo:/.test(links.stdout.toString()) && links.stdout.toString().split('\n').length > 4,
    links.stdout.toString(),
  );

  await cri.runtime.stopContainer(cid, 0);
  await cri.runtime.stopPodSandbox(sb);
  await cri.runtime.removePodSandbox(sb);
  await expectCode(cri.runtime.containerStatus(cid), 'KTS_ERR_CRI_NOT_FOUND', 'ContainerStatus');
});

test('unknown ids are KTS_ERR_CRI_NOT_FOUND', async () => {
  await expectCode(cri.runtime.containerStatus('0123456789abcdef-unknown'), 'KTS_ERR_CRI_NOT_FOUND', 'ContainerStatus');
  await expectCode(
    cri.runtime.podSandboxStatus('0123456789abcdef-unknown'),
    'KTS_ERR_CRI_NOT_FOUND',
    'PodSandboxStatus',
  );
  await expectCode(cri.runtime.startContainer('0123456789abcdef-unknown'), 'KTS_ERR_CRI_NOT_FOUND', 'StartContainer');
});

/** containerd 1.7 and later implement GetContainerEvents; 1.6 answers Unimplemented. */
async function hasContainerEvents(): Promise<boolean> {
  const m = /^v?(\d+)\.(\d+)/.exec((await cri.runtime.version()).runtimeVersion);
  return !!m && (Number(m[1]) > 1 || Number(m[2]) >= 7);
}

test("GetContainerEvents: UNIMPLEMENTED on containerd 1.6; on 1.7 and 2.x a stream of the runtime's container events", async () => {
  if (!(await hasContainerEvents())) {
    const err = await new Promise<CriError>((resolve) => cri.runtime.getContainerEvents(() => {}, resolve));
    assert.equal(err.code, 'KTS_ERR_CRI_UNIMPLEMENTED');
    return;
  }
  const seen: string[] = [];
  const sub = cri.runtime.getContainerEvents(
    (e) => seen.push(`${e.containerId}:${e.type}`),
    (err) => seen.push(`error:${err.message}`),
  );
  try {
    await new Promise((r) => setTimeout(r, 200)); // subscribed before the events happen
    const sbConfig = sandboxConfig('events', 'NODE');
    const sb = await cri.runtime.runPodSandbox(sbConfig);
    const cid = await cri.runtime.createContainer(sb, containerConfig('ev', 'exit 0'), sbConfig);
    await cri.runtime.startContainer(cid);
    const end = Date.now() + 10_000;
    while (!seen.some((s) => s.startsWith(`${cid}:`) && /STOPPED/.test(s)) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20));
    const mine = seen.filter((s) => s.startsWith(`${cid}:`)).map((s) => s.split(':')[1]);
    assert.ok(
      mine.includes('CONTAINER_CREATED_EVENT') &&
        mine.includes('CONTAINER_STARTED_EVENT') &&
        mine.includes('CONTAINER_STOPPED_EVENT'),
      `events of ${cid}: ${JSON.stringify(seen)}`,
    );
  } finally {
    sub.cancel();
  }
});

test("the PLEG's CRI events trigger: active on containerd 1.7 and 2.x, off for good on 1.6 (Unimplemented)", async () => {
  const expected = (await hasContainerEvents()) ? 'active' : 'unsupported';
  const trigger = new CriEventTrigger(
    (onEvent, onError) => cri.runtime.getContainerEvents(onEvent, onError),
    () => {},
  );
  trigger.start();
  if (expected === 'active') {
    // The first event proves the stream (there is no "subscribed" message): make one.
    await new Promise((r) => setTimeout(r, 200));
    const sbConfig = sandboxConfig('trigger', 'NODE');
    const sb = await cri.runtime.runPodSandbox(sbConfig);
    await cri.runtime.createContainer(sb, containerConfig('tr', 'exit 0'), sbConfig);
  }
  const end = Date.now() + 10_000;
  while (trigger.state() !== expected && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  const state = trigger.state();
  trigger.stop();
  assert.equal(state, expected);
});
