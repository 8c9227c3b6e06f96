/**
 * Probes on real pods (the daemon, real containerd, CNI pod IPs): exec liveness restarts a
 * container, httpGet readiness against busybox httpd toggles Ready, a tcp probe on a closed port
 * fails, a startup probe holds liveness back, a gRPC health probe passes and fails, and an exec
 * probe that hangs past its timeout is a failure. Events are read from the agent's log (the log
 * event sink); /metrics/probes is read from the read-only port.
 *
 * All pods are written at once so their probes run side by side; each test then waits for its own.
 * The gRPC health server runs in this test process on 127.0.0.1 and the pod is a hostNetwork pod
 * on a node whose IP is 127.0.0.1 (--node-ip): busybox has no gRPC server, and this keeps the
 * probe real (the agent's own gRPC client against a real HTTP/2 server) on loopback only.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { HEALTH_SERVICE } from '../../src/prober/index.js';
import { runtimeEndpoint, removeTestPods } from '../support/containerd.js';
import {
  getPods,
  httpGet,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const NS = `e2e-probe-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node';

const endpoint = await runtimeEndpoint();
const { runtime: cri, images } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
let kubelet: KubeletProcess;
let grpcServer: grpc.Server;
let grpcPort = 0;
let grpcStatus = 1; // SERVING

const fast = { initialDelaySeconds: 0, periodSeconds: 1, timeoutSeconds: 1 };
const sh = (script: string) => ({ image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] });
const exec = (...command: string[]) => ({ exec: { command } });

function writePod(name: string, spec: object): void {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { terminationGracePeriodSeconds: 2, ...spec },
  };
  writeFileSync(join(manifests, `${name}.json`), JSON.stringify(pod));
}

before(async () => {
  grpcServer = new grpc.Server();
  grpcServer.addService(HEALTH_SERVICE, {
    Check: (call: grpc.ServerUnaryCall<string, number>, cb: grpc.sendUnaryData<number>) => {
      if (call.request !== 'kts.probe') cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      else cb(null, grpcStatus);
    },
  });
  grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );

  writePod('liveness', {
    containers: [
      {
        name: 'c',
        ...sh('touch /tmp/healthy; sleep 3; rm /tmp/healthy; sleep 600'),
        livenessProbe: {
          ...exec('cat', '/tmp/healthy'),
          ...fast,
          failureThreshold: 1,
          terminationGracePeriodSeconds: 1,
        },
      },
    ],
  });
  writePod('httpready', {
    containers: [
      {
        name: 'web',
        ...sh('mkdir -p /www; exec httpd -f -p 8080 -h /www'),
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/ready', port: 'http' }, ...fast, failureThreshold: 1 },
      },
    ],
  });
  writePod('tcpclosed', {
    containers: [
      { name: 'c', ...sh('sleep 600'), readinessProbe: { tcpSocket: { port: 9999 }, ...fast, failureThreshold: 1 } },
    ],
  });
  writePod('startup', {
    containers: [
      {
        name: 'c',
        ...sh('sleep 4; touch /tmp/started; sleep 600'),
        startupProbe: { ...exec('cat', '/tmp/started'), ...fast, failureThreshold: 30 },
        livenessProbe: { ...exec('cat', '/tmp/started'), ...fast, failureThreshold: 1 },
      },
    ],
  });
  writePod('grpc', {
    hostNetwork: true,
    containers: [
      {
        name: 'c',
        ...sh('sleep 600'),
        readinessProbe: { grpc: { port: grpcPort, service: 'kts.probe' }, ...fast, failureThreshold: 1 },
      },
    ],
  });
  writePod('hang', {
    containers: [
      { name: 'c', ...sh('sleep 600'), readinessProbe: { ...exec('sleep', '30'), ...fast, failureThreshold: 1 } },
    ],
  });
  kubelet = startKubelet({ dir, manifests, endpoint, extraArgs: ['--node-ip=127.0.0.1'] });
});

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await removeTestPods(cri, { namespace: NS }).catch(() => undefined);
  grpcServer?.forceShutdown();
  cri.close();
  images.close();
});

async function pod(name: string): Promise<Pod | undefined> {
  return (await getPods(kubelet)).find((p) => p.metadata?.name === `${name}-${NODE}`);
}

function condition(p: Pod | undefined, type: string): string | undefined {
  return p?.status?.conditions?.find((c) => c.type === type)?.status;
}

async function waitCondition(name: string, type: string, want: 'True' | 'False', timeoutMs = 30_000): Promise<Pod> {
  return waitFor(
    `${name} ${type}=${want}`,
    timeoutMs,
    async () => {
      const p = await pod(name);
      return condition(p, type) === want && p?.status?.phase === 'Running' ? p : undefined;
    },
    200,
  );
}

/** Event lines the agent logged for this pod's object (the log sink of the recorder). */
function events(name: string, reason: string): string[] {
  return readFileSync(kubelet.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"reason":"${reason}"`) && l.includes(`${NS}/${name}-${NODE}`));
}

async function containerId(name: string): Promise<string> {
  const p = await waitFor(
    `${name} container id`,
    30_000,
    async () => ((await pod(name))?.status?.containerStatuses?.[0]?.containerID ? pod(name) : undefined),
    200,
  );
  return p!.status!.containerStatuses![0]!.containerID!.replace(/^.*:\/\//, '');
}

test('exec liveness probe that starts failing restarts the container: Unhealthy then Killing', async () => {
  const p = await waitFor(
    'liveness restarted',
    60_000,
    async () => {
      const q = await pod('liveness');
      return (q?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? q : undefined;
    },
    250,
  );
  assert.ok(p.status!.containerStatuses![0]!.lastState?.terminated, 'the killed instance is the last state');
  const unhealthy = events('liveness', 'Unhealthy');
  assert.ok(
    unhealthy.some((l) => l.includes('Liveness probe failed')),
    unhealthy.join('\n'),
  );
  const killing = events('liveness', 'Killing');
  assert.ok(
    killing.some((l) => l.includes('failed liveness probe, will be restarted')),
    killing.join('\n'),
  );
});

test('httpGet readiness against busybox httpd toggles Ready as the served file appears and disappears', async () => {
  const p = await waitCondition('httpready', 'Ready', 'False');
  assert.equal(p.status!.containerStatuses![0]!.ready, false);
  assert.match(p.status!.podIP ?? '', /^10\./, 'pod IP from the CNI bridge');
  const id = await containerId('httpready');
  await cri.execSync(id, ['sh', '-c', 'echo ok > /www/ready'], 5);
  const ready = await waitCondition('httpready', 'Ready', 'True');
  assert.equal(condition(ready, 'ContainersReady'), 'True');
  assert.equal(ready.status!.containerStatuses![0]!.ready, true);
  await cri.execSync(id, ['rm', '/www/ready'], 5);
  const notReady = await waitCondition('httpready', 'Ready', 'False');
  assert.equal(condition(notReady, 'ContainersReady'), 'False');
  assert.ok(
    events('httpready', 'Unhealthy').some((l) =>
      l.includes('Readiness probe failed: HTTP probe failed with statuscode: 404'),
    ),
  );
});

test('a tcp probe on a closed port fails', async () => {
  await waitFor(
    'tcp Unhealthy event',
    30_000,
    () =>
      events('tcpclosed', 'Unhealthy').some((l) => l.includes('Readiness probe failed: dial tcp')) ? true : undefined,
    250,
  );
  const p = await pod('tcpclosed');
  assert.equal(condition(p, 'Ready'), 'False');
  assert.equal(p!.status!.containerStatuses![0]!.ready, false);
});

test('a startup probe delays liveness: no liveness kill before startup succeeds', async () => {
  const before = await waitFor(
    'startup running, not started',
    30_000,
    async () => {
      const q = await pod('startup');
      const s = q?.status?.containerStatuses?.[0];
      return s?.state?.running ? q : undefined;
    },
    200,
  );
  const s0 = before.status!.containerStatuses![0]!;
  if (Date.now() - new Date(s0.state!.running!.startedAt!).getTime() < 3000)
    assert.equal(s0.started, false, 'not started while the startup probe fails');
  const started = await waitFor(
    'startup started',
    30_000,
    async () => {
      const q = await pod('startup');
      return q?.status?.containerStatuses?.[0]?.started ? q : undefined;
    },
    200,
  );
  assert.equal(
    started.status!.containerStatuses![0]!.restartCount,
    0,
    'liveness (failureThreshold 1) did not kill it during startup',
  );
  assert.equal(started.status!.containerStatuses![0]!.ready, true, 'no readiness probe: ready once started');
  assert.equal(events('startup', 'Unhealthy').filter((l) => l.includes('Liveness probe failed')).length, 0);
  assert.ok(events('startup', 'Unhealthy').some((l) => l.includes('Startup probe failed')));
});

test('a gRPC health probe passes, then fails when the service reports NOT_SERVING', async () => {
  await waitCondition('grpc', 'Ready', 'True');
  grpcStatus = 2;
  await waitCondition('grpc', 'Ready', 'False');
  // The agent's log is written asynchronously: the event's line may follow the status by a moment.
  const notServing = (l: string) => l.includes('service unhealthy (responded with \\"NOT_SERVING\\")');
  await waitFor(
    'the Unhealthy event',
    10_000,
    async () => events('grpc', 'Unhealthy').some(notServing) || undefined,
    100,
  ).catch(() => assert.fail(events('grpc', 'Unhealthy').join('\n')));
  grpcStatus = 1;
  await waitCondition('grpc', 'Ready', 'True');
});

test('an exec probe that hangs past its timeout is a failure, and probes keep their period', async () => {
  await waitFor(
    'hang timed out',
    30_000,
    () => (events('hang', 'Unhealthy').some((l) => l.includes('timed out')) ? true : undefined),
    250,
  );
  assert.equal(condition(await pod('hang'), 'Ready'), 'False');
  const m = await httpGet(kubelet.readOnlyPort, '/metrics/probes');
  assert.equal(m.status, 200);
  const line = m.body
    .split('\n')
    .find(
      (l) => l.startsWith('prober_probe_total{') && l.includes(`pod="hang-${NODE}"`) && l.includes('result="failed"'),
    );
  assert.ok(line, m.body.slice(0, 2000));
  assert.match(line, /probe_type="Readiness"/);
  assert.match(line, new RegExp(`namespace="${NS}"`));
  assert.match(line, /pod_uid="[^"]+"/);
  assert.match(m.body, /prober_probe_duration_seconds_bucket\{/);
});
