/**
 * A pod's life as the upstream kubelet reports it, stage by stage: phase, every kubelet
 * condition (status, reason, message) and every container status. Shared by the unit test
 * (synthetic runtime states) and the e2e test (real containerd via /pods), so both check the
 * same expectations field by field.
 *
 * The pods have one init container "init" and one container "app".
 */
import type { ApiContainerStatus, ApiPodStatus } from '../../src/api/types.js';

export interface ExpectedContainer {
  name: string;
  state: 'waiting' | 'running' | 'terminated';
  reason?: string;
  exitCode?: number;
  /** 'none' = lastState is {}. */
  lastState?: 'none' | 'terminated';
  lastExitCode?: number;
  ready: boolean;
  started: boolean;
  minRestartCount?: number;
}

export interface ExpectedCondition {
  status: 'True' | 'False';
  reason?: string;
  message?: string;
}

export interface Stage {
  name: string;
  phase: string;
  conditions: Record<
    'PodReadyToStartContainers' | 'Initialized' | 'Ready' | 'ContainersReady' | 'PodScheduled',
    ExpectedCondition
  >;
  init: ExpectedContainer[];
  containers: ExpectedContainer[];
}

const scheduled: ExpectedCondition = { status: 'True' };
const notReady = (names: string): ExpectedCondition => ({
  status: 'False',
  reason: 'ContainersNotReady',
  message: `containers with unready status: [${names}]`,
});

export const STAGES: Record<string, Stage> = {
  pending: {
    name: 'pending: nothing created yet',
    phase: 'Pending',
    conditions: {
      PodReadyToStartContainers: { status: 'False' },
      Initialized: {
        status: 'False',
        reason: 'ContainersNotInitialized',
        message: 'containers with incomplete status: [init]',
      },
      Ready: notReady('app'),
      ContainersReady: notReady('app'),
      PodScheduled: scheduled,
    },
    init: [
      { name: 'init', state: 'waiting', reason: 'PodInitializing', lastState: 'none', ready: false, started: false },
    ],
    containers: [
      { name: 'app', state: 'waiting', reason: 'PodInitializing', lastState: 'none', ready: false, started: false },
    ],
  },
  initRunning: {
    name: 'init container running',
    phase: 'Pending',
    conditions: {
      PodReadyToStartContainers: { status: 'True' },
      Initialized: {
        status: 'False',
        reason: 'ContainersNotInitialized',
        message: 'containers with incomplete status: [init]',
      },
      Ready: notReady('app'),
      ContainersReady: notReady('app'),
      PodScheduled: scheduled,
    },
    init: [{ name: 'init', state: 'running', lastState: 'none', ready: false, started: true }],
    containers: [
      { name: 'app', state: 'waiting', reason: 'PodInitializing', lastState: 'none', ready: false, started: false },
    ],
  },
  initDone: {
    name: 'init container done, app not started yet',
    phase: 'Pending',
    conditions: {
      PodReadyToStartContainers: { status: 'True' },
      Initialized: { status: 'True' },
      Ready: notReady('app'),
      ContainersReady: notReady('app'),
      PodScheduled: scheduled,
    },
    init: [
      {
        name: 'init',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: true,
        started: false,
      },
    ],
    containers: [
      { name: 'app', state: 'waiting', reason: 'PodInitializing', lastState: 'none', ready: false, started: false },
    ],
  },
  running: {
    name: 'running',
    phase: 'Running',
    conditions: {
      PodReadyToStartContainers: { status: 'True' },
      Initialized: { status: 'True' },
      Ready: { status: 'True' },
      ContainersReady: { status: 'True' },
      PodScheduled: scheduled,
    },
    init: [
      {
        name: 'init',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: true,
        started: false,
      },
    ],
    containers: [{ name: 'app', state: 'running', lastState: 'none', ready: true, started: true }],
  },
  crashLooping: {
    name: 'app crash-looping (restartPolicy Always)',
    phase: 'Running',
    conditions: {
      PodReadyToStartContainers: { status: 'True' },
      Initialized: { status: 'True' },
      Ready: notReady('app'),
      ContainersReady: notReady('app'),
      PodScheduled: scheduled,
    },
    init: [
      {
        name: 'init',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: true,
        started: false,
      },
    ],
    containers: [
      {
        name: 'app',
        state: 'waiting',
        reason: 'CrashLoopBackOff',
        lastState: 'terminated',
        lastExitCode: 1,
        ready: false,
        started: false,
        minRestartCount: 1,
      },
    ],
  },
  succeeded: {
    name: 'succeeded (restartPolicy Never, exit 0), torn down',
    phase: 'Succeeded',
    conditions: {
      PodReadyToStartContainers: { status: 'False' },
      Initialized: { status: 'True', reason: 'PodCompleted' },
      Ready: { status: 'False', reason: 'PodCompleted' },
      ContainersReady: { status: 'False', reason: 'PodCompleted' },
      PodScheduled: scheduled,
    },
    init: [
      {
        name: 'init',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: true,
        started: false,
      },
    ],
    containers: [
      {
        name: 'app',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: false,
        started: false,
      },
    ],
  },
  failed: {
    name: 'failed (restartPolicy Never, exit 1), torn down',
    phase: 'Failed',
    conditions: {
      PodReadyToStartContainers: { status: 'False' },
      Initialized: { status: 'True' },
      Ready: { status: 'False', reason: 'PodFailed' },
      ContainersReady: { status: 'False', reason: 'PodFailed' },
      PodScheduled: scheduled,
    },
    init: [
      {
        name: 'init',
        state: 'terminated',
        reason: 'Completed',
        exitCode: 0,
        lastState: 'none',
        ready: true,
        started: false,
      },
    ],
    containers: [
      {
        name: 'app',
        state: 'terminated',
        reason: 'Error',
        exitCode: 1,
        lastState: 'none',
        ready: false,
        started: false,
      },
    ],
  },
};

function diffContainer(where: string, got: ApiContainerStatus | undefined, want: ExpectedContainer): string[] {
  if (!got) return [`${where}: missing`];
  const out: string[] = [];
  const state = got.state?.running
    ? 'running'
    : got.state?.terminated
      ? 'terminated'
      : got.state?.waiting
        ? 'waiting'
        : 'none';
  if (state !== want.state) out.push(`${where}.state: ${state} (want ${want.state})`);
  const reason = got.state?.waiting?.reason ?? got.state?.terminated?.reason;
  if (want.reason !== undefined && reason !== want.reason)
    out.push(`${where}.state reason: ${reason} (want ${want.reason})`);
  if (want.exitCode !== undefined && got.state?.terminated?.exitCode !== want.exitCode)
    out.push(`${where}.exitCode: ${got.state?.terminated?.exitCode} (want ${want.exitCode})`);
  if (want.lastState === 'none' && Object.keys(got.lastState ?? {}).length !== 0)
    out.push(`${where}.lastState: ${JSON.stringify(got.lastState)} (want {})`);
  if (want.lastState === 'terminated' && !got.lastState?.terminated)
    out.push(`${where}.lastState: ${JSON.stringify(got.lastState)} (want terminated)`);
  if (want.lastExitCode !== undefined && got.lastState?.terminated?.exitCode !== want.lastExitCode)
    out.push(`${where}.lastState exitCode: ${got.lastState?.terminated?.exitCode} (want ${want.lastExitCode})`);
  if (got.ready !== want.ready) out.push(`${where}.ready: ${got.ready} (want ${want.ready})`);
  if (got.started !== want.started) out.push(`${where}.started: ${got.started} (want ${want.started})`);
  if ((got.restartCount ?? -1) < (want.minRestartCount ?? 0))
    out.push(`${where}.restartCount: ${got.restartCount} (want >= ${want.minRestartCount ?? 0})`);
  if (typeof got.image !== 'string' || typeof got.imageID !== 'string')
    out.push(`${where}: image and imageID must be strings`);
  if (state !== 'waiting' && !/^containerd:\/\//.test(got.containerID ?? ''))
    out.push(`${where}.containerID: ${got.containerID}`);
  return out;
}

/** Every difference between `status` and `stage`, as readable lines (empty = matches). */
export function diffStage(status: ApiPodStatus | undefined, stage: Stage): string[] {
  if (!status) return ['no status'];
  const out: string[] = [];
  if (status.phase !== stage.phase) out.push(`phase: ${status.phase} (want ${stage.phase})`);
  const types = (status.conditions ?? []).map((c) => c.type);
  const wantOrder = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
  if (JSON.stringify(types) !== JSON.stringify(wantOrder)) out.push(`condition order: ${types.join(',')}`);
  for (const [type, want] of Object.entries(stage.conditions)) {
    const c = status.conditions?.find((x) => x.type === type);
    if (!c) {
      out.push(`condition ${type}: missing`);
      continue;
    }
    if (c.status !== want.status) out.push(`condition ${type}.status: ${c.status} (want ${want.status})`);
    if ((c.reason ?? undefined) !== want.reason)
      out.push(`condition ${type}.reason: ${c.reason} (want ${want.reason})`);
    if (want.message !== undefined && c.message !== want.message)
      out.push(`condition ${type}.message: ${c.message} (want ${want.message})`);
    if (c.lastProbeTime !== null) out.push(`condition ${type}.lastProbeTime: ${String(c.lastProbeTime)} (want null)`);
    if (!c.lastTransitionTime) out.push(`condition ${type}.lastTransitionTime missing`);
  }
  const inits = status.initContainerStatuses ?? [];
  if (inits.length !== stage.init.length)
    out.push(`initContainerStatuses: ${inits.length} (want ${stage.init.length})`);
  stage.init.forEach((want, i) =>
    out.push(
      ...diffContainer(
        `initContainerStatuses[${i}](${want.name})`,
        inits.find((s) => s.name === want.name),
        want,
      ),
    ),
  );
  const cs = status.containerStatuses ?? [];
  if (cs.length !== stage.containers.length)
    out.push(`containerStatuses: ${cs.length} (want ${stage.containers.length})`);
  stage.containers.forEach((want, i) =>
    out.push(
      ...diffContainer(
        `containerStatuses[${i}](${want.name})`,
        cs.find((s) => s.name === want.name),
        want,
      ),
    ),
  );
  if (!status.startTime) out.push('startTime missing');
  if (!status.hostIP || !status.hostIPs?.length) out.push('hostIP(s) missing');
  if (!status.qosClass) out.push('qosClass missing');
  return out;
}
