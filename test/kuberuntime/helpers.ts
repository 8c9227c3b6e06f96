/** Builders for pods and runtime statuses shared by the kuberuntime unit tests. */
import type { Container, Pod } from '../../src/api/types.js';
import { hashContainer } from '../../src/kuberuntime/hash.js';
import type {
  ContainerRuntimeStatus,
  PodRuntimeStatus,
  RuntimeContainerState,
  SandboxRuntimeStatus,
} from '../../src/kuberuntime/types.js';
import type { Clock } from '../../src/util/clock.js';
import type { ImageUser } from '../../src/kuberuntime/run-as-non-root.js';
import type { Recorder } from '../../src/events/index.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager, type RuntimeManagerDeps } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import { join } from 'node:path';
import type { FakeRuntimeService } from '../fakes/fake-runtime-service.js';

export const UID = 'uid-1234';

export function container(name: string, extra: Partial<Container> = {}): Container {
  return { name, image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...extra };
}

export function makePod(
  opts: {
    containers?: Container[];
    initContainers?: Container[];
    restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    hostNetwork?: boolean;
    deleting?: boolean;
    name?: string;
  } = {},
): Pod {
  return {
    metadata: {
      name: opts.name ?? 'web',
      namespace: 'default',
      uid: UID,
      labels: { app: 'web' },
      annotations: { note: 'x' },
      ...(opts.deleting ? { deletionTimestamp: new Date(0) } : {}),
    },
    spec: {
      containers: opts.containers ?? [container('a'), container('b')],
      ...(opts.initContainers ? { initContainers: opts.initContainers } : {}),
      restartPolicy: opts.restartPolicy ?? 'Always',
      ...(opts.hostNetwork ? { hostNetwork: true } : {}),
    },
  };
}

export function sandbox(id: string, opts: Partial<SandboxRuntimeStatus> = {}): SandboxRuntimeStatus {
  return { id, ready: true, attempt: 0, createdAt: 1n, ip: '10.0.0.5', additionalIps: [], hostNetwork: false, ...opts };
}

let seq = 0;

/** A container status; `spec` sets a matching hash (pass hash: 'stale' for a changed spec). */
export function cstatus(
  name: string,
  state: RuntimeContainerState,
  opts: {
    spec?: Container;
    exitCode?: number;
    hash?: string;
    id?: string;
    restartCount?: number;
    finishedAt?: number;
    reason?: string;
  } = {},
): ContainerRuntimeStatus {
  const s: ContainerRuntimeStatus = {
    id: opts.id ?? `c${++seq}`,
    name,
    state,
    createdAt: new Date(1000),
    exitCode: opts.exitCode ?? 0,
    image: 'busybox:1.36',
    imageRef: 'sha256:abc',
    restartCount: opts.restartCount ?? 0,
    reason: opts.reason ?? '',
    message: '',
    hash: opts.hash ?? (opts.spec ? hashContainer(opts.spec) : hashContainer(container(name))),
    podSandboxId: 'sb1',
  };
  if (state !== 'created') s.startedAt = new Date(1000);
  if (state === 'exited') s.finishedAt = new Date(opts.finishedAt ?? 2000);
  return s;
}

export function podStatus(sandboxes: SandboxRuntimeStatus[], containers: ContainerRuntimeStatus[]): PodRuntimeStatus {
  const newest = sandboxes[0];
  return {
    uid: UID,
    name: 'web',
    namespace: 'default',
    ips: newest?.ready && newest.ip ? [newest.ip] : [],
    sandboxStatuses: sandboxes,
    containerStatuses: containers,
    timestamp: new Date(0),
  };
}

/** A clock the test moves by hand. */
export class FakeClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  setTimeout(_fn: () => void, _ms: number): { cancel(): void } {
    return { cancel() {} };
  }
}

/** A runtime manager over the in-memory CRI fake, logs and root dir under `dir`, no cgroups. */
export function fakeRuntimeManager(
  fake: FakeRuntimeService,
  dir: string,
  recorder: Recorder,
  extra: Partial<RuntimeManagerDeps> = {},
) {
  return createRuntimeManager({
    runtime: fake,
    imageManager: createImageManager({ images: fake, recorder }),
    clock: new FakeClock(1_700_000_000_000),
    podLogsDir: join(dir, 'logs'),
    rootDir: join(dir, 'root'),
    volumes: createVolumeManager({ rootDir: join(dir, 'root') }),
    nodeName: 'node-1',
    hostIP: '192.168.1.10',
    resolvConf: '',
    memoryCapacity: 8 * 2 ** 30,
    // Never the host's cgroups from a unit test.
    cgroupsPerQOS: false,
    recorder,
    ...extra,
  });
}

/**
 * generateContainerConfig's input for `c` of `pod` with nothing else around (no volumes, no
 * subPaths); `imageUser` absent: the image's user is not known.
 */
export function configInput(pod: Pod, c: Container, imageUser?: ImageUser) {
  return {
    pod,
    container: c,
    restartCount: 0,
    imageRef: 'sha256:x',
    ...(imageUser ? { imageUser } : {}),
    env: { nodeName: 'n', hostIP: '10.0.0.1', podIP: '10.1.0.2', podIPs: ['10.1.0.2'] },
    memoryCapacity: 2 ** 30,
    allocatable: { cpu: 1000, memory: 2 ** 30 },
    volumes: { mounted: new Map(), errors: new Map() },
    subPaths: { prepareSubPath: () => Promise.reject(new Error('no subPaths here')) },
  };
}
