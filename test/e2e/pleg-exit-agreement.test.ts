/**
 * The PLEG as the agent runs it (periodic relist + cgroup.events trigger + CRI events where the
 * runtime has them) against the real runtime: every ContainerDied comes only once the runtime
 * itself reports the container exited, the cache holds that same exit when the event is
 * delivered, still lists every container of the pod (a stop event's statuses are written into the
 * cached status: docs/perf-log.md, "Events write the cache"), and no exit is missed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import {
  createGenericPLEG,
  createPodStatusCache,
  criRawSource,
  CgroupExitWatcher,
  findUnifiedRoot,
} from '../../src/pleg/index.js';
import { hotPaths } from '../../src/cmd/hot-paths.js';
import { ENDPOINT_ENV, removeTestPods, runtimeEndpoint, TEST_IMAGES, uniqueName } from '../support/containerd.js';
import { testTempDir } from '../support/temp-dir.js';

const skip = process.env[ENDPOINT_ENV] ? false : `${ENDPOINT_ENV} not set`;
const NS = uniqueName('pleg-agree');
let cri: CriConnection | undefined;
let dir = '';

before(async () => {
  if (skip) return;
  cri = connectRuntime(await runtimeEndpoint(), { timeoutMs: 60_000 });
  dir = testTempDir('kts-pleg-agree-');
});

after(async () => {
  if (cri) {
    await removeTestPods(cri.runtime, { namespace: NS });
    cri.runtime.close();
    cri.images.close();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('ContainerDied only when the runtime reports the exit, with the cache agreeing', { skip }, async () => {
  const { runtime, images } = cri!;
  const volumes = createVolumeManager({ rootDir: join(dir, 'root') });
  const manager = createRuntimeManager({
    runtime,
    imageManager: createImageManager({ images }),
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes,
    nodeName: 'e2e',
    hostIP: '127.0.0.1',
  });
  const root = findUnifiedRoot();
  const cache = createPodStatusCache();
  const pleg = createGenericPLEG({
    runtime: manager,
    cache,
    source: criRawSource(runtime),
    differ: hotPaths().pleg.createRelistDiffer(),
    createExitWatcher: root
      ? (onExit) => new CgroupExitWatcher({ root, createFsWatcher: hotPaths().inotify.createFsWatcher, onExit })
      : undefined,
    subscribeContainerEvents: (onEvent, onError) => runtime.getContainerEvents(onEvent, onError),
  });
  const checks: Promise<string | undefined>[] = [];
  // The exits start once the PLEG's cache lists all six running (the test writes /sync/go then):
  // on a slow runtime the first sleep could otherwise end before the last containers exist, or
  // (1.6, no CRI events) before a relist has seen the last one start, and the cache would rightly
  // list fewer than six.
  const syncDir = join(dir, 'sync');
  mkdirSync(syncDir);
  const containers = Array.from({ length: 6 }, (_, i) => ({
    name: `c${i}`,
    image: TEST_IMAGES.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `until [ -e /sync/go ]; do sleep 0.05; done; sleep ${(0.2 + i * 0.37).toFixed(2)}`],
    volumeMounts: [{ name: 'sync', mountPath: '/sync', readOnly: true }],
  }));
  const pod = {
    metadata: { name: 'agree', namespace: NS, uid: `${NS}-uid` },
    spec: {
      hostNetwork: true,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      containers,
      volumes: [{ name: 'sync', hostPath: { path: syncDir, type: 'Directory' } }],
    },
  } as Pod;
  pleg.watch((e) => {
    // The PLEG relists the whole runtime: containers other tests left behind are not ours to count.
    if (e.type !== 'ContainerDied' || e.id !== pod.metadata!.uid) return;
    // Taken synchronously at delivery: what the kubelet would act on.
    const statuses = cache.get(e.id)?.status?.containerStatuses ?? [];
    const cached = statuses.find((c) => c.id === e.data)?.state;
    checks.push(
      runtime.containerStatus(e.data).then(
        (s) => {
          if (cached !== 'exited') return `${e.data}: cache says ${cached} at ContainerDied`;
          if (statuses.length !== containers.length) return `${e.data}: cache lists ${statuses.length} containers`;
          if (s.state !== 'CONTAINER_EXITED') return `${e.data}: runtime says ${s.state} after ContainerDied`;
          return undefined;
        },
        (err: Error) => `${e.data}: ContainerStatus after ContainerDied failed: ${err.message}`,
      ),
    );
  });
  pleg.start();
  try {
    await volumes.mountPodVolumes(pod);
    const r = await manager.syncPod(pod, await manager.getPodStatus(pod.metadata!.uid!, 'agree', NS));
    assert.equal(r.error, undefined);
    const running = () =>
      (cache.get(pod.metadata!.uid!)?.status?.containerStatuses ?? []).filter((c) => c.state === 'running').length;
    const seen = Date.now() + 30_000;
    while (running() < containers.length && Date.now() < seen) await new Promise((res) => setTimeout(res, 20));
    assert.equal(running(), containers.length, 'the PLEG cache lists every container running before the exits');
    writeFileSync(join(syncDir, 'go'), '');
    const end = Date.now() + 60_000;
    while (checks.length < containers.length && Date.now() < end) await new Promise((res) => setTimeout(res, 100));
    assert.equal(checks.length, containers.length, 'one ContainerDied per exit');
    assert.deepEqual((await Promise.all(checks)).filter(Boolean), []);
  } finally {
    pleg.stop();
  }
});
