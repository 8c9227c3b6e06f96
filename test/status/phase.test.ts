/** getPhase, case by case as upstream's kubelet_pods_test.go TestPodPhase* tables. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContainerStatus, Pod } from '../../src/api/types.js';
import { getPhase } from '../../src/status/index.js';

const waiting = (name: string): ApiContainerStatus => ({ name, state: { waiting: {} } }) as ApiContainerStatus;
const waitingLastTerm = (name: string, exitCode = 0): ApiContainerStatus =>
  ({ name, state: { waiting: {} }, lastState: { terminated: { exitCode } } }) as ApiContainerStatus;
const running = (name: string): ApiContainerStatus => ({ name, state: { running: {} } }) as ApiContainerStatus;
const started = (name: string): ApiContainerStatus =>
  ({ name, state: { running: {} }, started: true }) as ApiContainerStatus;
const stopped = (name: string): ApiContainerStatus =>
  ({ name, state: { terminated: { exitCode: 0 } } }) as ApiContainerStatus;
const succeeded = stopped;
const failed = (name: string): ApiContainerStatus =>
  ({ name, state: { terminated: { exitCode: -1 } } }) as ApiContainerStatus;

function pod(
  restartPolicy: string,
  init: { name: string; restartPolicy?: string }[] = [],
  annotations: Record<string, string> = {},
  containers = ['containerA', 'containerB'],
): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', annotations },
    spec: {
      nodeName: 'machine',
      restartPolicy,
      initContainers: init.map((c) => ({ image: 'x', ...c })),
      containers: containers.map((name) => ({ name, image: 'x' })),
    },
  } as Pod;
}

type Case = [string, ApiContainerStatus[], string, boolean?, boolean?];

function run(p: Pod, cases: Case[]) {
  for (const [name, statuses, want, terminal = false, initialized = false] of cases) {
    assert.equal(getPhase(p, statuses, terminal, initialized), want, name);
  }
}

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartAlways
test('restartPolicy Always', () => {
  run(pod('Always'), [
    ['waiting', [], 'Pending'],
    ['all running', [running('containerA'), running('containerB')], 'Running'],
    ['all stopped with restart always', [stopped('containerA'), stopped('containerB')], 'Running'],
    [
      'all succeeded with restart always, but the pod is terminal',
      [succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      true,
    ],
    [
      'all stopped with restart always, but the pod is terminal',
      [succeeded('containerA'), failed('containerB')],
      'Failed',
      true,
    ],
    ['mixed state #1 with restart always', [running('containerA'), stopped('containerB')], 'Running'],
    ['mixed state #2 with restart always', [running('containerA')], 'Pending'],
    ['mixed state #3 with restart always', [running('containerA'), waiting('containerB')], 'Pending'],
    [
      'backoff crashloop container with restart always',
      [running('containerA'), waitingLastTerm('containerB')],
      'Running',
    ],
  ]);
});

test('a static pod that is terminal keeps the restart policy phase (upstream TODO #116484)', () => {
  assert.equal(
    getPhase(
      pod('Always', [], { 'kubernetes.io/config.source': 'file' }),
      [succeeded('containerA'), succeeded('containerB')],
      true,
      true,
    ),
    'Running',
  );
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartAlwaysInitContainers
test('restartPolicy Always with init containers', () => {
  run(pod('Always', [{ name: 'containerX' }]), [
    ['empty, waiting', [], 'Pending'],
    ['init container running', [running('containerX')], 'Pending'],
    ['init container terminated non-zero', [failed('containerX')], 'Pending'],
    ['init container waiting, terminated zero', [waitingLastTerm('containerX')], 'Pending'],
    ['init container waiting, terminated non-zero', [waitingLastTerm('containerX', -1)], 'Pending'],
    ['init container waiting, not terminated', [waiting('containerX')], 'Pending'],
    ['init container succeeded', [succeeded('containerX'), running('containerA'), running('containerB')], 'Running'],
  ]);
});

/** The rows both sidecar tables open with, whatever the restart policy: the sidecar is not up yet. */
const sidecarNotYetUp: Case[] = [
  ['empty, waiting', [], 'Pending'],
  ['restartable init container running', [running('containerX')], 'Pending'],
  ['restartable init container stopped', [stopped('containerX')], 'Pending'],
  ['restartable init container waiting, terminated zero', [waitingLastTerm('containerX')], 'Pending'],
  ['restartable init container waiting, terminated non-zero', [waitingLastTerm('containerX', -1)], 'Pending'],
  ['restartable init container waiting, not terminated', [waiting('containerX')], 'Pending'],
];

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartAlwaysRestartableInitContainers
test('restartPolicy Always with a sidecar (restartable init container)', () => {
  run(pod('Always', [{ name: 'containerX', restartPolicy: 'Always' }]), [
    ...sidecarNotYetUp,
    [
      'restartable init container started, 1/2 regular container running',
      [started('containerX'), running('containerA')],
      'Pending',
      false,
      true,
    ],
    [
      'restartable init container started, all regular containers running',
      [started('containerX'), running('containerA'), running('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'restartable init container running, all regular containers running',
      [running('containerX'), running('containerA'), running('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'restartable init container running, regular containers not yet started',
      [running('containerX'), waiting('containerA'), waiting('containerB')],
      'Pending',
    ],
    [
      'restartable init container stopped, all regular containers running',
      [stopped('containerX'), running('containerA'), running('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'backoff crashloop restartable init container, all regular containers running',
      [waitingLastTerm('containerX'), running('containerA'), running('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'all regular containers succeeded and restartable init container failed with restart always, but the pod is terminal',
      [failed('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      true,
      true,
    ],
    [
      'all regular containers succeeded and restartable init container succeeded with restart always, but the pod is terminal',
      [succeeded('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      true,
      true,
    ],
    [
      're-initializing the pod after the sandbox is recreated',
      [running('containerX'), running('containerA'), running('containerB')],
      'Pending',
      false,
      false,
    ],
  ]);
});

test('a restarted sidecar not yet started does not send an initialized pod back to Pending', () => {
  const p = pod('Always', [{ name: 'containerX', restartPolicy: 'Always' }]);
  const statuses = [running('containerX'), running('containerA'), running('containerB')];
  assert.equal(getPhase(p, statuses, false, false), 'Pending');
  assert.equal(getPhase(p, statuses, false, true), 'Running');
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartNever
test('restartPolicy Never', () => {
  run(pod('Never'), [
    ['waiting', [], 'Pending'],
    ['all running with restart never', [running('containerA'), running('containerB')], 'Running'],
    ['all succeeded with restart never', [succeeded('containerA'), succeeded('containerB')], 'Succeeded'],
    ['all failed with restart never', [failed('containerA'), failed('containerB')], 'Failed'],
    ['mixed state #1 with restart never', [running('containerA'), succeeded('containerB')], 'Running'],
    ['mixed state #2 with restart never', [running('containerA')], 'Pending'],
    ['mixed state #3 with restart never', [running('containerA'), waiting('containerB')], 'Pending'],
  ]);
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartNeverInitContainers
test('restartPolicy Never with init containers: a failed init container fails the pod', () => {
  run(pod('Never', [{ name: 'containerX' }]), [
    ['empty, waiting', [], 'Pending'],
    ['init container running', [running('containerX')], 'Pending'],
    ['init container terminated non-zero', [failed('containerX')], 'Failed'],
    ['init container waiting, terminated zero', [waitingLastTerm('containerX')], 'Pending'],
    ['init container waiting, terminated non-zero', [waitingLastTerm('containerX', -1)], 'Failed'],
    ['init container waiting, not terminated', [waiting('containerX')], 'Pending'],
    ['init container succeeded', [succeeded('containerX'), running('containerA'), running('containerB')], 'Running'],
  ]);
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartOnFailure
test('restartPolicy OnFailure', () => {
  run(pod('OnFailure'), [
    ['waiting', [], 'Pending'],
    ['all running with restart onfailure', [running('containerA'), running('containerB')], 'Running'],
    ['all succeeded with restart onfailure', [succeeded('containerA'), succeeded('containerB')], 'Succeeded'],
    ['all failed with restart onfailure', [failed('containerA'), failed('containerB')], 'Running'],
    ['mixed state #1 with restart onfailure', [running('containerA'), succeeded('containerB')], 'Running'],
    ['mixed state #2 with restart onfailure', [running('containerA')], 'Pending'],
    ['mixed state #3 with restart onfailure', [running('containerA'), waiting('containerB')], 'Pending'],
    [
      'backoff crashloop container with restart onfailure',
      [running('containerA'), waitingLastTerm('containerB')],
      'Running',
    ],
  ]);
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartAlwaysAndPodHasRun
test('restartPolicy Always, a regular init container and a sidecar, once the pod has run', () => {
  const p = pod('Always', [{ name: 'containerX' }, { name: 'containerY', restartPolicy: 'Always' }], {}, [
    'containerA',
  ]);
  run(p, [
    [
      'regular init containers, restartable init container and regular container are all running',
      [running('containerX'), running('containerY'), running('containerA')],
      'Pending',
      false,
      false,
    ],
    [
      'regular containers is stopped, restartable init container and regular int container are both running',
      [running('containerX'), running('containerY'), stopped('containerA')],
      'Pending',
      false,
      false,
    ],
    [
      're-created sandbox: regular init container is succeeded, restartable init container is running, old regular containers is stopped',
      [succeeded('containerX'), running('containerY'), stopped('containerA')],
      'Pending',
      false,
      false,
    ],
    [
      'regular init container is succeeded, restartable init container is running, regular containers is stopped',
      [succeeded('containerX'), running('containerY'), stopped('containerA')],
      'Running',
      false,
      true,
    ],
    [
      'regular init container is succeeded, restartable init container and regular containers are both running',
      [succeeded('containerX'), running('containerY'), running('containerA')],
      'Running',
      false,
      true,
    ],
  ]);
});

// upstream pkg/kubelet/kubelet_pods_test.go TestPodPhaseWithRestartNeverRestartableInitContainers
test('restartPolicy Never with a sidecar: the sidecar never holds the pod once its containers are done', () => {
  run(pod('Never', [{ name: 'containerX', restartPolicy: 'Always' }]), [
    ...sidecarNotYetUp,
    [
      'restartable init container started, one main container running',
      [started('containerX'), running('containerA')],
      'Pending',
      false,
      true,
    ],
    [
      'restartable init container started, main containers succeeded',
      [started('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'restartable init container re-running, main containers succeeded',
      [running('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Running',
      false,
      true,
    ],
    [
      'all containers succeeded',
      [succeeded('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      false,
      true,
    ],
    [
      'restartable init container terminated non-zero, main containers succeeded',
      [failed('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      false,
      true,
    ],
    [
      'backoff crashloop restartable init container, main containers succeeded',
      [waitingLastTerm('containerX'), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      false,
      true,
    ],
    [
      'backoff crashloop with non-zero restartable init container, main containers succeeded',
      [waitingLastTerm('containerX', -1), succeeded('containerA'), succeeded('containerB')],
      'Succeeded',
      false,
      true,
    ],
  ]);
});

// Not mirrored: TestPodPhaseWithContainerRestartPolicy*, TestPodPhaseWithRestartAllContainers
// (the ContainerRestartRules and RestartAllContainersOnContainerExits alpha feature gates: a
// per-container restartPolicy on regular containers is not implemented).
