/**
 * Ephemeral containers as upstream runs them, with the machine's real `kubectl debug` against
 * the test apiserver (its pods/ephemeralcontainers subresource) and real containerd: the debug
 * container starts in the target container's process namespace (it sees the target's sleep),
 * ephemeralContainerStatuses report it running then terminated, it is never restarted (not
 * after its exit, not after an agent restart, which adopts it), `kubectl attach` reaches it,
 * and deleting the pod kills a running one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ApiContainerStatus, Pod } from '../../src/api/types.js';
import { TEST_IMAGES } from '../support/containerd.js';
import { startKubelet, stopKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';
import { apiModeE2e } from '../support/api-mode-e2e.js';
import { KUBECTL } from '../support/kubectl.js';

const fx = await apiModeE2e('debug');
const { ns: NS, node: NODE, endpoint, runtime, dir, manifests, api, kubeconfig, skip } = fx;

const run = fx.kubectl;

function start(): KubeletProcess {
  return startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [`--kubeconfig=${kubeconfig}`, `--hostname-override=${NODE}`, '--node-ip=127.0.0.1'],
    // The apiserver authenticates to the kubelet with its client certificate (attach, exec, logs).
    extraConfig: [
      `authentication:\n  x509:\n    clientCAFile: ${api.certs.caFile}\n  webhook:\n    enabled: false`,
      'authorization:\n  mode: AlwaysAllow',
    ],
  });
}

const getPod = () => api.store.get('pods', NS, 'dbg') as Pod | undefined;
const debugStatus = (name: string): ApiContainerStatus | undefined =>
  getPod()?.status?.ephemeralContainerStatuses?.find((s) => s.name === name);

/** Every runtime instance of one container of the pod (its name label), newest first. */
async function instances(name: string) {
  const uid = getPod()!.metadata!.uid!;
  const list = await runtime.listContainers({
    labelSelector: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
  });
  return list.sort((a, b) => Number(b.createdAt - a.createdAt));
}

/** kubectl debug as a user types it: a test image, no TTY, targeting `main`. */
async function debug(name: string, script: string): Promise<void> {
  const r = await run([
    'debug',
    'dbg',
    `--image=${TEST_IMAGES.busybox}`,
    '--image-pull-policy=IfNotPresent',
    '--target=main',
    '-c',
    name,
    '--',
    'sh',
    '-c',
    script,
  ]);
  assert.equal(r.code, 0, r.stderr);
}

test(
  'kubectl debug: started in the target pid namespace, attached, never restarted, killed with the pod',
  { skip },
  async () => {
    fx.kubelet = start();
    await waitFor('node registered', 60_000, () => api.store.get('nodes', undefined, NODE), 250);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dbg', namespace: NS },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'main',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3601 & wait"],
          },
        ],
      },
    } as Pod;
    assert.equal((await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status, 201);
    await waitFor(
      'dbg Running',
      90_000,
      () => (getPod()?.status?.containerStatuses?.[0]?.state?.running ? true : undefined),
      250,
    );

    // Lists every process it sees, then ticks until told to stop.
    await debug(
      'debugger',
      'for p in /proc/[0-9]*; do echo "proc: $(tr "\\0" " " < $p/cmdline)"; done; ' +
        'while [ ! -e /tmp/stop ]; do echo tick; sleep 0.5; done; echo bye',
    );
    const running = await waitFor(
      'debugger running',
      60_000,
      () => debugStatus('debugger')?.state?.running && debugStatus('debugger'),
      250,
    );
    assert.equal(running.restartCount, 0);
    assert.equal(getPod()!.status!.phase, 'Running');

    const attach = spawn(KUBECTL, [`--kubeconfig=${kubeconfig}`, '-n', NS, 'attach', 'dbg', '-c', 'debugger'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let attached = '';
    attach.stdout.on('data', (d) => (attached += d));
    attach.stderr.on('data', (d) => (attached += d));
    const attachDone = new Promise<number | null>((r) => attach.on('close', r));
    try {
      await waitFor('kubectl attach streams the ticks', 30_000, () => (/tick/.test(attached) ? true : undefined), 100);
      const exec = await run(['exec', 'dbg', '-c', 'debugger', '--', 'touch', '/tmp/stop']);
      assert.equal(exec.code, 0, exec.stderr);
      assert.equal(await attachDone, 0, attached);
    } finally {
      attach.kill('SIGKILL');
    }
    assert.match(attached, /bye/);

    const logs = await run(['logs', 'dbg', '-c', 'debugger']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /proc: sleep 3601/, "the target container's processes are visible");

    const done = await waitFor(
      'debugger terminated',
      60_000,
      () => debugStatus('debugger')?.state?.terminated && debugStatus('debugger'),
      250,
    );
    assert.equal(done.state!.terminated!.exitCode, 0);
    assert.equal(done.restartCount, 0);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await instances('debugger')).length, 1, 'an exited ephemeral container is not restarted');
    assert.equal(getPod()!.status!.phase, 'Running', 'nor does it change the phase');

    // An agent restart adopts it: still one instance, still terminated.
    await stopKubelet(fx.kubelet!);
    fx.kubelet = start();
    await waitFor(
      'pod status after restart',
      60_000,
      () => (debugStatus('debugger')?.state?.terminated ? true : undefined),
      250,
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await instances('debugger')).length, 1, 'not started again by the restarted agent');
    assert.equal(debugStatus('debugger')?.restartCount, 0);

    // A second one, running when the pod is deleted: killed with it.
    await debug('sleeper', 'sleep 3602');
    await waitFor('sleeper running', 60_000, () => (debugStatus('sleeper')?.state?.running ? true : undefined), 250);
    const del = await run(['delete', 'pod', 'dbg', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    await waitFor(
      'the debug container stopped with the pod',
      60_000,
      async () => {
        const list = await runtime.listContainers({ labelSelector: { 'io.kubernetes.container.name': 'sleeper' } });
        const mine = list.filter((c) => c.labels['io.kubernetes.pod.namespace'] === NS);
        return mine.every((c) => c.state !== 'CONTAINER_RUNNING') ? true : undefined;
      },
      250,
    );
    await waitFor('pod gone from the API', 60_000, () => (getPod() ? undefined : true), 250);
  },
);
