/**
 * Upstream's computePodActions tables, case for case, against our computePodActions: the same
 * base pod and runtime status, the same mutation per case, and the whole expected action set
 * compared (killPod, createSandbox, sandbox ID, attempt, init containers to start, containers to
 * start, containers to kill by ID and name; kill messages and reasons are not compared, as
 * upstream's verifyActions clears them).
 *
 * What does not apply, and why:
 *  - TestComputePodActionsWithInitContainersWithLegacySidecarContainers (LegacySidecarContainers
 *    gate, NextInitContainerToStart): we only have the SidecarContainers path upstream uses by
 *    default, which the WithInitContainers table covers;
 *  - TestComputePodActionsForPodResize: no in-place resize in kubelet-ts;
 *  - TestSyncPodWithSandboxAndDeletedPod is a SyncPod test (a sandbox that fails to be created for
 *    a pod whose termination was requested is not an error); it has no computePodActions part.
 *    TestSyncPodWithInitContainers's four steps are mirrored below as computePodActions calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod } from '../../src/api/types.js';
import { hashContainer } from '../../src/kuberuntime/hash.js';
import { computePodActions, type PodActions, type PodActionsOptions } from '../../src/kuberuntime/pod-actions.js';
import type { ContainerRuntimeStatus, PodRuntimeStatus, SandboxRuntimeStatus } from '../../src/kuberuntime/types.js';

const SANDBOX = 'sandboxID';

/** upstream podActions, reduced to what our PodActions carries; omitted fields are zero values. */
interface Want {
  killPod?: boolean;
  createSandbox?: boolean;
  sandboxId?: string;
  attempt?: number;
  init?: number[];
  start?: number[];
  /** `id:name` of each container to kill. */
  kill?: string[];
  /** upstream EphemeralContainersToStart. */
  ephemeral?: number[];
}

type ProbeResult = 'success' | 'failure' | 'unknown';

/** The liveness and startup results managers, by container ID (absent: the probe has not run). */
interface Probes {
  liveness: Map<string, ProbeResult>;
  startup: Map<string, ProbeResult>;
}

interface Case {
  name: string;
  pod?: (pod: Pod) => void;
  status?: (status: PodRuntimeStatus, pod: Pod) => void;
  probes?: (p: Probes) => void;
  want: Want;
  /** Why the case cannot run here; it is registered as skipped with this reason. */
  unsupported?: string;
}

function spec(name: string, extra: Partial<Container> = {}): Container {
  return { name, image: 'busybox', ...extra };
}

function running(id: string, c: Container): ContainerRuntimeStatus {
  return {
    id,
    name: c.name,
    state: 'running',
    createdAt: new Date(1000),
    startedAt: new Date(1000),
    exitCode: 0,
    image: c.image ?? '',
    imageRef: '',
    restartCount: 0,
    reason: '',
    message: '',
    hash: hashContainer(c),
    podSandboxId: SANDBOX,
  };
}

function exited(id: string, c: Container, exitCode = 0): ContainerRuntimeStatus {
  return { ...running(id, c), state: 'exited', exitCode, finishedAt: new Date(2000) };
}

function readySandbox(opts: Partial<SandboxRuntimeStatus> = {}): SandboxRuntimeStatus {
  return {
    id: SANDBOX,
    ready: true,
    attempt: 0,
    createdAt: 1n,
    ip: '10.0.0.1',
    additionalIps: [],
    hostNetwork: false,
    ...opts,
  };
}

/** upstream makeBasePodAndStatus: foo1..foo3 running in a ready sandbox with an IP. */
function basePodAndStatus(): { pod: Pod; status: PodRuntimeStatus } {
  const containers = [spec('foo1'), spec('foo2'), spec('foo3')];
  const pod: Pod = { metadata: { uid: '12345678', name: 'foo', namespace: 'foo-ns' }, spec: { containers } };
  const status: PodRuntimeStatus = {
    uid: '12345678',
    name: 'foo',
    namespace: 'foo-ns',
    ips: ['10.0.0.1'],
    sandboxStatuses: [readySandbox()],
    containerStatuses: containers.map((c, i) => running(`id${i + 1}`, c)),
    timestamp: new Date(0),
  };
  return { pod, status };
}

/** upstream makeBasePodAndStatusWithInitContainers: init1..init3 exited 0, no regular statuses. */
function withInitContainers(): { pod: Pod; status: PodRuntimeStatus } {
  const { pod, status } = basePodAndStatus();
  pod.spec!.initContainers = [
    spec('init1', { image: 'bar-image' }),
    spec('init2', { image: 'bar-image' }),
    spec('init3', { image: 'bar-image' }),
  ];
  status.containerStatuses = pod.spec!.initContainers.map((c, i) => exited(`initid${i + 1}`, c));
  return { pod, status };
}

/** upstream makeBasePodAndStatusWithRestartableInitContainers: three sidecars running. */
function withRestartableInitContainers(): { pod: Pod; status: PodRuntimeStatus } {
  const { pod, status } = basePodAndStatus();
  const probed = { livenessProbe: {}, startupProbe: {} };
  pod.spec!.initContainers = [
    spec('restartable-init-1', { image: 'bar-image', restartPolicy: 'Always' }),
    spec('restartable-init-2', { image: 'bar-image', restartPolicy: 'Always', ...probed }),
    spec('restartable-init-3', { image: 'bar-image', restartPolicy: 'Always', ...probed }),
  ];
  status.containerStatuses = pod.spec!.initContainers.map((c, i) => running(`initid${i + 1}`, c));
  return { pod, status };
}

/** upstream makeBasePodAndStatusWithInitAndEphemeralContainers. */
function withInitAndEphemeralContainers(): { pod: Pod; status: PodRuntimeStatus } {
  const { pod, status } = basePodAndStatus();
  pod.spec!.initContainers = [spec('init1', { image: 'bar-image' })];
  pod.spec!.ephemeralContainers = [{ name: 'debug', image: 'busybox' }];
  status.containerStatuses.push(exited('initid1', pod.spec!.initContainers[0]!), running('debug1', spec('debug')));
  return { pod, status };
}

/** Our views of upstream's livenessManager and startupManager. */
function probeOptions(p: Probes): PodActionsOptions {
  return {
    probeFailure: (id) =>
      p.liveness.get(id) === 'failure' ? 'LivenessProbe' : p.startup.get(id) === 'failure' ? 'StartupProbe' : undefined,
    startupProbeSucceeded: (id) => (p.startup.has(id) ? p.startup.get(id) === 'success' : undefined),
  };
}

/** Mutates a container status in place (upstream's tests poke fields of the base status). */
function set(s: ContainerRuntimeStatus, state: ContainerRuntimeStatus['state'], exitCode = s.exitCode): void {
  s.state = state;
  s.exitCode = exitCode;
}

function actual(a: PodActions): Required<Want> {
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    sandboxId: a.sandboxId,
    attempt: a.attempt,
    init: a.initContainersToStart,
    start: a.containersToStart,
    kill: a.containersToKill.map((k) => `${k.id}:${k.name}`).sort(),
    ephemeral: a.ephemeralContainersToStart,
  };
}

function expected(w: Want): Required<Want> {
  return {
    killPod: w.killPod ?? false,
    createSandbox: w.createSandbox ?? false,
    sandboxId: w.sandboxId ?? '',
    attempt: w.attempt ?? 0,
    init: w.init ?? [],
    start: w.start ?? [],
    kill: [...(w.kill ?? [])].sort(),
    ephemeral: w.ephemeral ?? [],
  };
}

function runTable(
  base: () => { pod: Pod; status: PodRuntimeStatus },
  cases: Case[],
  defaultProbes?: (p: Probes) => void,
): void {
  for (const c of cases) {
    if (c.unsupported) {
      it(c.name, { skip: c.unsupported }, () => {});
      continue;
    }
    it(c.name, () => {
      const { pod, status } = base();
      const probes: Probes = { liveness: new Map(), startup: new Map() };
      defaultProbes?.(probes);
      c.pod?.(pod);
      c.status?.(status, pod);
      c.probes?.(probes);
      assert.deepEqual(actual(computePodActions(pod, status, probeOptions(probes))), expected(c.want));
    });
  }
}

const noAction: Want = { sandboxId: SANDBOX };
const always = (pod: Pod) => void (pod.spec!.restartPolicy = 'Always');
const onFailure = (pod: Pod) => void (pod.spec!.restartPolicy = 'OnFailure');
const never = (pod: Pod) => void (pod.spec!.restartPolicy = 'Never');
const deadSandbox = (s: PodRuntimeStatus) => void (s.sandboxStatuses[0]!.ready = false);
const deadSandboxNothingRan = (s: PodRuntimeStatus) => {
  deadSandbox(s);
  s.containerStatuses = [];
};
/** The sandbox (attempt 1) is dead and every container exited 0. */
const deadSandboxAllSucceeded = (s: PodRuntimeStatus) => {
  deadSandbox(s);
  s.sandboxStatuses[0]!.attempt = 1;
  for (const c of s.containerStatuses) set(c, 'exited', 0);
};
/** The sandbox is replaced (attempt 1) and initialization starts over at the first init container. */
const newSandboxFromFirstInit: Want = { killPod: true, createSandbox: true, sandboxId: SANDBOX, attempt: 1, init: [0] };
/** The sandbox is dead and must not be replaced: only the kill. */
const killOnly: Want = { killPod: true, createSandbox: false, sandboxId: SANDBOX, attempt: 1 };

// upstream pkg/kubelet/kuberuntime/kuberuntime_manager_test.go TestComputePodActions
const computePodActionsCases: Case[] = [
  { name: 'everything is good; do nothing', want: noAction },
  {
    name: 'start pod sandbox and all containers for a new pod',
    status: (s) => {
      s.sandboxStatuses = [];
      s.containerStatuses = [];
    },
    want: { killPod: true, createSandbox: true, attempt: 0, start: [0, 1, 2] },
  },
  {
    name: 'restart exited containers if RestartPolicy == Always',
    pod: always,
    status: (s) => {
      set(s.containerStatuses[0]!, 'exited', 0);
      set(s.containerStatuses[1]!, 'exited', 111);
    },
    want: { sandboxId: SANDBOX, start: [0, 1] },
  },
  {
    name: 'restart failed containers if RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => {
      set(s.containerStatuses[0]!, 'exited', 0);
      set(s.containerStatuses[1]!, 'exited', 111);
    },
    want: { sandboxId: SANDBOX, start: [1] },
  },
  {
    name: 'restart created but not started containers if RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => {
      set(s.containerStatuses[0]!, 'exited', 0);
      set(s.containerStatuses[1]!, 'created');
    },
    want: { sandboxId: SANDBOX, start: [1] },
  },
  {
    name: "don't restart containers if RestartPolicy == Never",
    pod: never,
    status: (s) => {
      set(s.containerStatuses[0]!, 'exited', 0);
      set(s.containerStatuses[1]!, 'exited', 111);
    },
    want: noAction,
  },
  {
    name: 'Kill pod and recreate everything if the pod sandbox is dead, and RestartPolicy == Always',
    pod: always,
    status: deadSandbox,
    want: { killPod: true, createSandbox: true, sandboxId: SANDBOX, attempt: 1, start: [0, 1, 2] },
  },
  {
    name: 'Kill pod and recreate all containers (except for the succeeded one) if the pod sandbox is dead, and RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => {
      deadSandbox(s);
      set(s.containerStatuses[1]!, 'exited', 0);
    },
    want: { killPod: true, createSandbox: true, sandboxId: SANDBOX, attempt: 1, start: [0, 2] },
  },
  {
    name: 'Kill pod and recreate all containers if the PodSandbox does not have an IP',
    status: (s) => void (s.sandboxStatuses[0]!.ip = ''),
    want: { killPod: true, createSandbox: true, sandboxId: SANDBOX, attempt: 1, start: [0, 1, 2] },
  },
  {
    name: "Kill and recreate the container if the container's spec changed",
    pod: always,
    status: (s) => void (s.containerStatuses[1]!.hash = '432423432'),
    want: { sandboxId: SANDBOX, kill: ['id2:foo2'], start: [1] },
  },
  {
    name: 'Kill and recreate the container if the liveness check has failed',
    pod: always,
    probes: (p) => void p.liveness.set('id2', 'failure'),
    want: { sandboxId: SANDBOX, kill: ['id2:foo2'], start: [1] },
  },
  {
    name: 'Kill and recreate the container if the startup check has failed',
    pod: always,
    probes: (p) => void p.startup.set('id2', 'failure'),
    want: { sandboxId: SANDBOX, kill: ['id2:foo2'], start: [1] },
  },
  {
    name: 'Verify we do not create a pod sandbox if no ready sandbox for pod with RestartPolicy=Never and all containers exited',
    pod: never,
    status: deadSandboxAllSucceeded,
    want: { killPod: true, createSandbox: false, sandboxId: SANDBOX, attempt: 2 },
  },
  {
    name: 'Verify we do not create a pod sandbox if no ready sandbox for pod with RestartPolicy=OnFailure and all containers succeeded',
    pod: onFailure,
    status: deadSandboxAllSucceeded,
    want: { killPod: true, createSandbox: false, sandboxId: SANDBOX, attempt: 2 },
  },
  {
    name: 'Verify we create a pod sandbox if no ready sandbox for pod with RestartPolicy=Never and no containers have ever been created',
    pod: never,
    status: (s) => {
      deadSandbox(s);
      s.sandboxStatuses[0]!.attempt = 2;
      s.containerStatuses = [];
    },
    want: { killPod: true, createSandbox: true, sandboxId: SANDBOX, attempt: 3, start: [0, 1, 2] },
  },
  {
    name: 'Kill and recreate the container if the container is in unknown state',
    pod: never,
    status: (s) => set(s.containerStatuses[1]!, 'unknown'),
    want: { sandboxId: SANDBOX, kill: ['id2:foo2'], start: [1] },
  },
  {
    name: 'Restart the container if the container is in created state',
    pod: never,
    status: (s) => set(s.containerStatuses[1]!, 'created'),
    want: { sandboxId: SANDBOX, start: [1] },
  },
];

// upstream pkg/kubelet/kuberuntime/kuberuntime_manager_test.go TestComputePodActionsWithInitContainers
const initContainerCases: Case[] = [
  { name: 'initialization completed; start all containers', want: { sandboxId: SANDBOX, start: [0, 1, 2] } },
  {
    name: 'no init containers have been started; start the first one',
    status: (s) => void (s.containerStatuses = []),
    want: { sandboxId: SANDBOX, init: [0] },
  },
  {
    name: 'initialization in progress; do nothing',
    pod: always,
    status: (s) => set(s.containerStatuses[2]!, 'running'),
    want: noAction,
  },
  {
    name: 'Kill pod and restart the first init container if the pod sandbox is dead',
    pod: always,
    status: deadSandbox,
    want: newSandboxFromFirstInit,
  },
  {
    name: 'initialization failed; restart the last init container if RestartPolicy == Always',
    pod: always,
    status: (s) => void (s.containerStatuses[2]!.exitCode = 137),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'initialization failed; restart the last init container if RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => void (s.containerStatuses[2]!.exitCode = 137),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'initialization failed; kill pod if RestartPolicy == Never',
    pod: never,
    status: (s) => void (s.containerStatuses[2]!.exitCode = 137),
    want: { killPod: true, sandboxId: SANDBOX },
  },
  {
    name: 'init container state unknown; kill and recreate the last init container if RestartPolicy == Always',
    pod: always,
    status: (s) => set(s.containerStatuses[2]!, 'unknown'),
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:init3'] },
  },
  {
    name: 'init container state unknown; kill and recreate the last init container if RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => set(s.containerStatuses[2]!, 'unknown'),
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:init3'] },
  },
  {
    name: 'init container state unknown; kill pod if RestartPolicy == Never',
    pod: never,
    status: (s) => set(s.containerStatuses[2]!, 'unknown'),
    want: { killPod: true, sandboxId: SANDBOX },
  },
  {
    name: 'Pod sandbox not ready, init container failed, but RestartPolicy == Never; kill pod only',
    pod: never,
    status: deadSandbox,
    want: killOnly,
  },
  {
    name: 'Pod sandbox not ready, and RestartPolicy == Never, but no visible init containers;  create a new pod sandbox',
    pod: never,
    status: deadSandboxNothingRan,
    want: newSandboxFromFirstInit,
  },
  {
    name: 'Pod sandbox not ready, init container failed, and RestartPolicy == OnFailure; create a new pod sandbox',
    pod: onFailure,
    status: (s) => {
      deadSandbox(s);
      s.containerStatuses[2]!.exitCode = 137;
    },
    want: newSandboxFromFirstInit,
  },
  {
    name: "some of the init container statuses are missing but the last init container is running, don't restart preceding ones",
    pod: always,
    status: (s) => {
      set(s.containerStatuses[2]!, 'running');
      s.containerStatuses = s.containerStatuses.slice(2);
    },
    want: { sandboxId: SANDBOX },
  },
  {
    name: 'an init container is in the created state due to an unknown error when starting container; restart it',
    pod: always,
    status: (s) => set(s.containerStatuses[2]!, 'created'),
    want: { sandboxId: SANDBOX, init: [2] },
  },
];

/** Regular containers foo1..foo3 added to a status, in one state, with matching hashes. */
function addRegular(s: PodRuntimeStatus, pod: Pod, state: 'running' | 'exited'): void {
  pod.spec!.containers.forEach((c, i) =>
    s.containerStatuses.push(state === 'running' ? running(`id${i + 1}`, c) : exited(`id${i + 1}`, c, 0)),
  );
}

/** The sandbox is dead and the last (restartable) init container exited 137. */
function deadSandboxLastInitFailed(s: PodRuntimeStatus): void {
  deadSandbox(s);
  set(s.containerStatuses[2]!, 'exited', 137);
}

/** upstream sets liveness and startup Success for the two probed sidecars before each case. */
function sidecarProbesPass(p: Probes): void {
  for (const id of ['initid2', 'initid3']) {
    p.liveness.set(id, 'success');
    p.startup.set(id, 'success');
  }
}

// upstream pkg/kubelet/kuberuntime/kuberuntime_manager_test.go TestComputePodActionsWithRestartableInitContainers
const sidecarCases: Case[] = [
  { name: 'initialization completed; start all containers', want: { sandboxId: SANDBOX, start: [0, 1, 2] } },
  {
    name: 'no init containers have been started; start the first one',
    status: (s) => void (s.containerStatuses = []),
    want: { sandboxId: SANDBOX, init: [0] },
  },
  {
    name: 'an init container is stuck in the created state; restart it',
    pod: always,
    status: (s) => set(s.containerStatuses[2]!, 'created'),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'restartable init container has started; start the next',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 1)),
    want: { sandboxId: SANDBOX, init: [1] },
  },
  {
    name: 'livenessProbe has not been run; start the nothing',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    probes: (p) => void p.liveness.delete('initid2'),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'livenessProbe in progress; start the next',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    probes: (p) => void p.liveness.set('initid2', 'unknown'),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'livenessProbe has completed; start the next',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'kill and recreate the restartable init container if the liveness check has failed',
    pod: always,
    probes: (p) => void p.liveness.set('initid3', 'failure'),
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:restartable-init-3'], start: [0, 1, 2] },
  },
  {
    name: 'startupProbe has not been run; do nothing',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    probes: (p) => void p.startup.delete('initid2'),
    want: noAction,
  },
  {
    name: 'startupProbe in progress; do nothing',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    probes: (p) => void p.startup.set('initid2', 'unknown'),
    want: noAction,
  },
  {
    name: 'startupProbe has completed; start the next',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 2)),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: 'kill and recreate the restartable init container if the startup check has failed',
    pod: (pod) => {
      always(pod);
      pod.spec!.initContainers![2]!.startupProbe = {};
    },
    probes: (p) => void p.startup.set('initid3', 'failure'),
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:restartable-init-3'] },
  },
  {
    name: 'kill and recreate the restartable init container if the container definition changes',
    pod: (pod) => {
      always(pod);
      pod.spec!.initContainers![2]!.image = 'foo-image';
    },
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:restartable-init-3'], start: [0, 1, 2] },
  },
  {
    name: 'restart terminated restartable init container and next init container',
    pod: always,
    status: (s) => {
      set(s.containerStatuses[0]!, 'exited');
      set(s.containerStatuses[2]!, 'exited');
    },
    want: { sandboxId: SANDBOX, init: [0, 2] },
  },
  {
    name: 'restart terminated restartable init container and regular containers',
    pod: always,
    status: (s) => set(s.containerStatuses[0]!, 'exited'),
    want: { sandboxId: SANDBOX, init: [0], start: [0, 1, 2] },
  },
  {
    name: 'Pod sandbox not ready, restartable init container failed, but RestartPolicy == Never; kill pod only',
    pod: never,
    status: deadSandboxLastInitFailed,
    want: killOnly,
  },
  {
    name: 'Pod sandbox not ready, and RestartPolicy == Never, but no visible restartable init containers;  create a new pod sandbox',
    pod: never,
    status: deadSandboxNothingRan,
    want: newSandboxFromFirstInit,
  },
  {
    name: 'Pod sandbox not ready, restartable init container failed, and RestartPolicy == OnFailure; create a new pod sandbox',
    pod: onFailure,
    status: deadSandboxLastInitFailed,
    want: newSandboxFromFirstInit,
  },
  {
    name: 'Pod sandbox not ready, restartable init container failed, and RestartPolicy == Always; create a new pod sandbox',
    pod: always,
    status: deadSandboxLastInitFailed,
    want: newSandboxFromFirstInit,
  },
  {
    name: "initialization failed; restart the last restartable init container even if pod's RestartPolicy == Never",
    pod: never,
    status: (s) => set(s.containerStatuses[2]!, 'exited', 137),
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: "restartable init container state unknown; kill and recreate the last restartable init container even if pod's RestartPolicy == Never",
    pod: never,
    status: (s) => set(s.containerStatuses[2]!, 'unknown'),
    want: { sandboxId: SANDBOX, init: [2], kill: ['initid3:restartable-init-3'] },
  },
  {
    name: "restart restartable init container if regular containers are running even if pod's RestartPolicy == Never",
    pod: never,
    status: (s, pod) => {
      set(s.containerStatuses[2]!, 'exited', 137);
      addRegular(s, pod, 'running');
    },
    want: { sandboxId: SANDBOX, init: [2] },
  },
  {
    name: "kill the pod if all main containers succeeded if pod's RestartPolicy == Never",
    pod: never,
    status: (s, pod) => addRegular(s, pod, 'exited'),
    want: { killPod: true, sandboxId: SANDBOX },
  },
  {
    name: 'some of the init container statuses are missing but the last init container is running, restart restartable init and regular containers',
    pod: always,
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(2)),
    want: { sandboxId: SANDBOX, init: [0, 1], start: [0, 1, 2] },
  },
];

// upstream pkg/kubelet/kuberuntime/kuberuntime_manager_test.go TestComputePodActionsWithInitAndEphemeralContainers
// (status order: foo1, foo2, foo3, init1, debug)
const ephemeralCases: Case[] = [
  { name: 'steady state; do nothing; ignore ephemeral container', want: noAction },
  {
    name: 'No ephemeral containers running; start one',
    status: (s) => void (s.containerStatuses = s.containerStatuses.slice(0, 4)),
    want: { sandboxId: SANDBOX, ephemeral: [0] },
  },
  {
    name: 'Start second ephemeral container',
    pod: (pod) => void pod.spec!.ephemeralContainers!.push({ name: 'debug2', image: 'busybox' }),
    want: { sandboxId: SANDBOX, ephemeral: [1] },
  },
  {
    name: 'Ephemeral container exited; do not restart',
    pod: always,
    status: (s) => set(s.containerStatuses[4]!, 'exited'),
    want: noAction,
  },
  {
    name: 'initialization in progress; start ephemeral container',
    status: (s) => {
      set(s.containerStatuses[3]!, 'running');
      s.containerStatuses = s.containerStatuses.slice(0, 4);
    },
    want: { sandboxId: SANDBOX, ephemeral: [0] },
  },
  {
    name: 'Create a new pod sandbox if the pod sandbox is dead, init container failed and RestartPolicy == OnFailure',
    pod: onFailure,
    status: (s) => {
      deadSandbox(s);
      s.containerStatuses = s.containerStatuses.slice(3);
      s.containerStatuses[0]!.exitCode = 137;
    },
    want: newSandboxFromFirstInit,
  },
  {
    name: 'Kill pod and do not restart ephemeral container if the pod sandbox is dead',
    pod: always,
    status: deadSandbox,
    want: newSandboxFromFirstInit,
  },
  {
    name: 'Kill pod if all containers exited except ephemeral container',
    pod: never,
    status: (s) => {
      for (const c of s.containerStatuses.slice(0, 3)) set(c, 'exited', 0);
    },
    want: { killPod: true, createSandbox: false, sandboxId: SANDBOX },
  },
  {
    name: 'Ephemeral container is in unknown state; leave it alone',
    pod: never,
    status: (s) => set(s.containerStatuses[4]!, 'unknown'),
    want: noAction,
  },
];

describe('upstream TestComputePodActions', () => runTable(basePodAndStatus, computePodActionsCases));
describe('upstream TestComputePodActionsWithInitContainers', () => runTable(withInitContainers, initContainerCases));
describe('upstream TestComputePodActionsWithRestartableInitContainers', () =>
  runTable(withRestartableInitContainers, sidecarCases, sidecarProbesPass));
describe('upstream TestComputePodActionsWithInitAndEphemeralContainers', () =>
  runTable(withInitAndEphemeralContainers, ephemeralCases));

/** A pod with one container and no container statuses: createSandbox is "the sandbox changed". */
function sandboxOnly(sandboxes: SandboxRuntimeStatus[], hostNetwork = false): { pod: Pod; status: PodRuntimeStatus } {
  const { pod, status } = basePodAndStatus();
  pod.spec!.containers = [spec('foo1')];
  if (hostNetwork) pod.spec!.hostNetwork = true;
  status.sandboxStatuses = sandboxes;
  status.containerStatuses = [];
  return { pod, status };
}

// upstream pkg/kubelet/kuberuntime/util/util_test.go TestPodSandboxChanged (through computePodActions:
// changed = createSandbox, with the new attempt and the sandbox to replace)
describe('upstream TestPodSandboxChanged', () => {
  const cases: Array<{
    name: string;
    sandboxes: SandboxRuntimeStatus[];
    hostNetwork?: boolean;
    changed: boolean;
    attempt: number;
    sandboxId: string;
  }> = [
    { name: 'Pod with no existing sandboxes', sandboxes: [], changed: true, attempt: 0, sandboxId: '' },
    {
      name: 'Pod with multiple ready sandbox statuses',
      sandboxes: [
        readySandbox({ id: 'sandboxID2', attempt: 1, createdAt: 2n }),
        readySandbox({ id: 'sandboxID1', attempt: 0 }),
      ],
      changed: true,
      attempt: 2,
      sandboxId: 'sandboxID2',
    },
    {
      name: 'Pod with no ready sandbox statuses',
      sandboxes: [
        readySandbox({ id: 'sandboxID2', attempt: 1, ready: false, createdAt: 2n }),
        readySandbox({ id: 'sandboxID1', attempt: 0, ready: false }),
      ],
      changed: true,
      attempt: 2,
      sandboxId: 'sandboxID2',
    },
    {
      name: 'Pod with ready sandbox status but network namespace mismatch',
      sandboxes: [readySandbox({ id: 'sandboxID1' })],
      hostNetwork: true,
      changed: true,
      attempt: 1,
      sandboxId: '',
    },
    {
      name: 'Pod with ready sandbox status but no IP',
      sandboxes: [readySandbox({ id: 'sandboxID1', ip: '' })],
      changed: true,
      attempt: 1,
      sandboxId: 'sandboxID1',
    },
    {
      name: 'Pod with ready sandbox status with IP',
      sandboxes: [readySandbox({ id: 'sandboxID1', ip: '10.0.0.10' })],
      changed: false,
      attempt: 0,
      sandboxId: 'sandboxID1',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { pod, status } = sandboxOnly(c.sandboxes, c.hostNetwork);
      const got = computePodActions(pod, status);
      assert.deepEqual(
        { changed: got.createSandbox, attempt: got.attempt, sandboxId: got.sandboxId },
        { changed: c.changed, attempt: c.attempt, sandboxId: c.sandboxId },
      );
    });
  }
});

// upstream pkg/kubelet/kuberuntime/kuberuntime_manager_test.go TestSyncPodWithInitContainers, its four
// SyncPod steps seen as the computePodActions each one starts from
describe('upstream TestSyncPodWithInitContainers (computePodActions of each step)', () => {
  const init1 = spec('init1', { image: 'init', imagePullPolicy: 'IfNotPresent' });
  const apps = [
    spec('foo1', { imagePullPolicy: 'IfNotPresent' }),
    spec('foo2', { image: 'alpine', imagePullPolicy: 'IfNotPresent' }),
  ];
  const pod: Pod = {
    metadata: { uid: '12345678', name: 'foo', namespace: 'new' },
    spec: { containers: apps, initContainers: [init1] },
  };
  const status = (sandboxes: SandboxRuntimeStatus[], containers: ContainerRuntimeStatus[]): PodRuntimeStatus => ({
    uid: '12345678',
    name: 'foo',
    namespace: 'new',
    ips: [],
    sandboxStatuses: sandboxes,
    containerStatuses: containers,
    timestamp: new Date(0),
  });
  const steps: Array<{ name: string; status: PodRuntimeStatus; want: Want }> = [
    {
      name: '1. should only create the init container',
      status: status([], []),
      want: { killPod: true, createSandbox: true, init: [0] },
    },
    {
      name: '2. should not create app container because init container is still running',
      status: status([readySandbox()], [running('init-0', init1)]),
      want: noAction,
    },
    {
      name: '3. should create all app containers because init container finished',
      status: status([readySandbox()], [exited('init-0', init1)]),
      want: { sandboxId: SANDBOX, start: [0, 1] },
    },
    {
      name: '4. should restart the init container if needed to create a new podsandbox',
      status: status(
        [readySandbox({ ready: false })],
        [running('foo1-0', apps[0]!), running('foo2-0', apps[1]!), exited('init-0', init1)],
      ),
      want: newSandboxFromFirstInit,
    },
  ];
  for (const s of steps) it(s.name, () => assert.deepEqual(actual(computePodActions(pod, s.status)), expected(s.want)));
});

// Deliberate differences from upstream, listed in docs/differences.md, from
// upstream. Upstream's computePodActions leaves both kinds of container running until the pod is
// killed (its tables never have them); ours stops them at once and leaves the rest as upstream.
describe('deliberate differences from upstream computePodActions', () => {
  it('a running container whose name is not in the spec is killed (upstream: left running)', () => {
    const { pod, status } = basePodAndStatus();
    status.containerStatuses.push(running('stray', spec('removed-from-spec')));
    const got = computePodActions(pod, status);
    assert.deepEqual(actual(got), expected({ sandboxId: SANDBOX, kill: ['stray:removed-from-spec'] }));
    assert.equal(got.containersToKill[0]!.reason, 'NotInSpec');
    assert.equal(got.containersToKill[0]!.container, undefined, 'no spec: no preStop hook, the pod grace period');
  });

  it('an older running instance of a container is killed; the newest one is kept (upstream: both left running)', () => {
    const { pod, status } = basePodAndStatus();
    // Newest first per name, as the runtime status lists them: id2 is foo2's newest instance.
    status.containerStatuses.push(running('id2-old', pod.spec!.containers[1]!));
    const got = computePodActions(pod, status);
    assert.deepEqual(actual(got), expected({ sandboxId: SANDBOX, kill: ['id2-old:foo2'] }));
    assert.equal(got.containersToKill[0]!.reason, 'Duplicate');
  });
});
