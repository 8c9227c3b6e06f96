/**
 * The kubelet side of the pod lifecycle against real containerd: admission (a pod too large for
 * the node, a host port already taken, AppArmor on a host without it, unsafe sysctls allowed or
 * not), seccomp profiles (Localhost below the root dir, seccompDefault, which the agent of this
 * file runs with), the grace period honoured by a container that ignores
 * SIGTERM, a kill restarted with a shorter grace period while it runs (deletion requests, driven
 * in-process since static pods have none), and the status JSON of pods through their life
 * compared with the table the unit tests use.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiPodStatus, Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { createImageManager } from '../../src/images/index.js';
import { createRuntimeManager } from '../../src/kuberuntime/index.js';
import { createVolumeManager } from '../../src/volume/index.js';
import { createPodStatusCache } from '../../src/pleg/index.js';
import { createStatusManager } from '../../src/status/index.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { runtimeEndpoint } from '../support/containerd.js';
import {
  getPods,
  httpGet,
  makeKubeletDirs,
  randomPort,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { FakePLEG } from '../kubelet/fake-pleg.js';
import { STAGES, diffStage, type Stage } from '../status/lifecycle-table.js';
import { testTempDir } from '../support/temp-dir.js';
import { Updates } from '../fakes/pod-updates.js';

const NS = `e2e-life-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node';

const endpoint = await runtimeEndpoint();
const { runtime: cri, images } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
let kubelet: KubeletProcess | undefined;
const cleanups: (() => Promise<void>)[] = [];

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  for (const c of cleanups) await c().catch(() => undefined);
  for (const sb of await cri.listPodSandbox()) {
    if (sb.metadata.namespace !== NS) continue;
    await cri.stopPodSandbox(sb.id).catch(() => undefined);
    await cri.removePodSandbox(sb.id).catch(() => undefined);
  }
  cri.close();
  images.close();
});

function manifest(name: string, spec: object): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec }, null, 1);
}

const sh = (script: string) => ({ image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] });

/** A Localhost seccomp profile below the agent's <root-dir>/seccomp: mkdir fails with EPERM, the rest runs. */
const DENY_MKDIR = 'kts/deny-mkdir.json';
/** The unsafe sysctls this file's agent allows (its sysctl test). */
const ALLOWED_UNSAFE = 'kernel.msg*,net.ipv4.ip_forward';

function agent(): KubeletProcess {
  if (!kubelet) {
    const profile = join(dir, 'root', 'seccomp', DENY_MKDIR);
    mkdirSync(dirname(profile), { recursive: true });
    const deny = { names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO' };
    writeFileSync(profile, JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [deny] }));
    // seccompDefault: the pods of this file that set no profile run the runtime's default.
    kubelet = startKubelet({
      dir,
      manifests,
      endpoint,
      extraConfig: ['seccompDefault: true'],
      extraArgs: [`--allowed-unsafe-sysctls=${ALLOWED_UNSAFE}`],
    });
  }
  return kubelet;
}

async function podNamed(name: string): Promise<Pod | undefined> {
  return (await getPods(agent())).find((p) => p.metadata?.name === `${name}-${NODE}`);
}

/** The pod once admission rejected it (phase Failed). */
function rejected(name: string, timeoutMs = 60_000): Promise<Pod> {
  return waitFor(
    `${name} rejected`,
    timeoutMs,
    async () => {
      const pod = await podNamed(name);
      return pod?.status?.phase === 'Failed' ? pod : undefined;
    },
    200,
  );
}

async function runningContainers(podName: string) {
  return (await cri.listContainers({ state: 'CONTAINER_RUNNING' })).filter(
    (c) => c.labels['io.kubernetes.pod.namespace'] === NS && c.labels['io.kubernetes.pod.name'] === podName,
  );
}

async function sandboxesOf(name: string) {
  return (await cri.listPodSandbox()).filter(
    (s) => s.metadata.namespace === NS && s.metadata.name === `${name}-${NODE}`,
  );
}

// First, before the agent process starts: a second kubelet on the same containerd would treat
// this in-process kubelet's pod as an orphan and kill it.
test('a shorter deletion grace period restarts a running kill: the container dies by the shorter deadline', async () => {
  // In-process kubelet on the real runtime, fed deletion requests as an apiserver would send them.
  const root = testTempDir('kts-e2e-grace-');
  const volumeManager = createVolumeManager({ rootDir: root });
  const runtime = createRuntimeManager({
    runtime: cri,
    imageManager: createImageManager({ images }),
    podLogsDir: join(root, 'logs'),
    rootDir: root,
    volumes: volumeManager,
    nodeName: NODE,
    hostIP: '127.0.0.1',
  });
  const cache = createPodStatusCache();
  const pleg = new FakePLEG(runtime, cache, 300, (p) => p.namespace === NS);
  const statusManager = createStatusManager();
  const k = new Kubelet({
    nodeName: NODE,
    hostIP: '127.0.0.1',
    rootDir: root,
    maxPods: 110,
    syncFrequencyMs: 60_000,
    runtime,
    volumeManager,
    pleg,
    cache,
    statusManager,
    // A source that never reports keeps housekeeping off: this kubelet must not treat the other
    // tests' pods in the shared containerd as orphans.
    sources: new Set(['api', 'never']),
  });
  const updates = new Updates();
  const loop = k.run(updates);
  cleanups.push(async () => {
    k.stop();
    await loop;
  });
  const uid = `grace-${Math.random().toString(36).slice(2, 10)}`;
  const base = (): Pod =>
    ({
      metadata: { name: 'grace', namespace: NS, uid, annotations: { 'kubernetes.io/config.source': 'api' } },
      spec: {
        nodeName: NODE,
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 60,
        dnsPolicy: 'Default',
        containers: [{ name: 'c', ...sh("trap '' TERM; while true; do sleep 1; done") }],
      },
    }) as Pod;
  updates.push({ op: 'ADD', pods: [base()], source: 'api' });
  await waitFor(
    'grace Running',
    60_000,
    () => (statusManager.getPodStatus(uid)?.phase === 'Running' ? true : undefined),
    200,
  );
  const deleting = (graceSeconds: number): Pod => {
    const p = base();
    p.metadata!.deletionTimestamp = new Date();
    p.metadata!.deletionGracePeriodSeconds = graceSeconds;
    return p;
  };
  const t0 = Date.now();
  updates.push({ op: 'DELETE', pods: [deleting(30)], source: 'api' });
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await runningContainers('grace')).length, 1, 'still running inside its 30 s grace');
  updates.push({ op: 'DELETE', pods: [deleting(2)], source: 'api' });
  await waitFor(
    'grace container stopped',
    20_000,
    async () => ((await runningContainers('grace')).length === 0 ? true : undefined),
    100,
  );
  const ms = Date.now() - t0;
  assert.ok(ms >= 1500 + 1500, `the shorter grace was honoured too (${ms} ms)`);
  assert.ok(ms < 1500 + 2000 + 5000, `killed by the 2 s deadline, not the 30 s one (${ms} ms)`);
  await waitFor('worker terminated', 20_000, () => (k.podWorkers.isPodKnownTerminated(uid) ? true : undefined));
  updates.push({ op: 'REMOVE', pods: [base()], source: 'api' });
  await k.podWorkers.idle();
  k.stop();
  await loop;
});

test('a pod too large for the node is rejected with OutOfmemory and never started', async () => {
  agent();
  writeFileSync(
    join(manifests, 'huge.json'),
    manifest('huge', {
      containers: [{ name: 'c', ...sh('sleep 3600'), resources: { requests: { memory: '64Ti' } } }],
    }),
  );
  const p = await rejected('huge');
  assert.equal(p.status?.reason, 'OutOfmemory');
  assert.match(
    p.status?.message ?? '',
    /^Pod was rejected: Node didn't have enough resource: memory, requested: 70368744177664, used: \d+, capacity: \d+$/,
  );
  assert.equal(p.status?.qosClass, 'Burstable');
  assert.equal(p.status?.containerStatuses, undefined, 'no container ever ran');
  await new Promise((r) => setTimeout(r, 3000)); // a few sync and housekeeping rounds
  assert.deepEqual(await sandboxesOf('huge'), [], 'no sandbox in containerd');
  assert.equal((await podNamed('huge'))?.status?.reason, 'OutOfmemory', 'stays rejected');
  unlinkSync(join(manifests, 'huge.json'));
});

test('a host port already held by an active pod is rejected with NodePorts', async () => {
  const port = randomPort();
  const withPort = (name: string) =>
    manifest(name, {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          ...sh("trap 'exit 0' TERM; sleep 3600 & wait"),
          ports: [{ containerPort: 8080, hostPort: port, protocol: 'TCP' }],
        },
      ],
    });
  writeFileSync(join(manifests, 'port-a.json'), withPort('port-a'));
  await waitFor(
    'port-a Running',
    60_000,
    async () => ((await podNamed('port-a'))?.status?.phase === 'Running' ? true : undefined),
    200,
  );
  writeFileSync(join(manifests, 'port-b.json'), withPort('port-b'));
  const b = await rejected('port-b', 30_000);
  assert.equal(b.status?.reason, 'NodePorts');
  assert.equal(
    b.status?.message,
    "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
  );
  await new Promise((r) => setTimeout(r, 2000));
  assert.deepEqual(await sandboxesOf('port-b'), [], 'the rejected pod never got a sandbox');
  unlinkSync(join(manifests, 'port-b.json'));
  unlinkSync(join(manifests, 'port-a.json'));
  await waitFor('port-a gone', 30_000, async () => ((await podNamed('port-a')) ? undefined : true));
});

test('seccomp Localhost, seccompDefault and AppArmor: the profiles reach the containers, AppArmor is refused here', async () => {
  agent();
  const sleeper = (name: string, podSc: object, sc: object = {}) =>
    manifest(name, {
      terminationGracePeriodSeconds: 1,
      securityContext: podSc,
      containers: [{ name: 'c', ...sh('sleep 3600'), securityContext: sc }],
    });
  const pods: Record<string, string> = {
    'sc-local': sleeper('sc-local', {}, { seccompProfile: { type: 'Localhost', localhostProfile: DENY_MKDIR } }),
    'sc-default': sleeper('sc-default', {}),
    'sc-unconfined': sleeper('sc-unconfined', { seccompProfile: { type: 'Unconfined' } }),
    'aa-default': sleeper('aa-default', {}, { appArmorProfile: { type: 'RuntimeDefault' } }),
    // An attack: a profile path climbing out of <root-dir>/seccomp is refused with the manifest.
    'sc-escape': sleeper('sc-escape', {}, { seccompProfile: { type: 'Localhost', localhostProfile: '../../x.json' } }),
  };
  for (const [name, text] of Object.entries(pods)) writeFileSync(join(manifests, `${name}.json`), text);
  const ids: Record<string, string> = {};
  for (const name of ['sc-local', 'sc-default', 'sc-unconfined']) {
    await waitFor(
      `${name} Running`,
      60_000,
      async () => ((await podNamed(name))?.status?.phase === 'Running' ? true : undefined),
      200,
    );
    ids[name] = (await runningContainers(`${name}-${NODE}`))[0]!.id;
  }
  const run = (name: string, script: string) => cri.execSync(ids[name]!, ['sh', '-c', script], 10);
  const seccompMode = async (name: string) =>
    /^Seccomp:\s+(\d)$/m.exec((await run(name, 'cat /proc/1/status')).stdout.toString())?.[1];
  // The Localhost profile: a filter, mkdir refused with EPERM, other calls allowed.
  assert.equal(await seccompMode('sc-local'), '2');
  const mkdir = await run('sc-local', 'mkdir /tmp/blocked');
  assert.notEqual(mkdir.exitCode, 0, 'mkdir is blocked');
  assert.match(mkdir.stderr.toString(), /Operation not permitted/);
  assert.equal((await run('sc-local', 'touch /tmp/allowed && ls /tmp/allowed')).exitCode, 0, 'the rest runs');
  // seccompDefault: a pod that sets no profile gets RuntimeDefault; an explicit Unconfined stays so.
  assert.equal(await seccompMode('sc-default'), '2');
  assert.equal((await run('sc-default', 'mkdir /tmp/fine')).exitCode, 0);
  assert.equal(await seccompMode('sc-unconfined'), '0');
  // AppArmor: this host has none, so a pod asking for a profile is refused as upstream does.
  const aa = await rejected('aa-default', 30_000);
  assert.equal(aa.status?.reason, 'AppArmor');
  assert.equal(aa.status?.message, 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host');
  assert.deepEqual(await sandboxesOf('aa-default'), [], 'the refused pod never got a sandbox');
  await waitFor('sc-escape refused in the log', 10_000, () =>
    /sc-escape\.json.*seccompProfile\.localhostProfile.*must not contain '\.\.'/.test(
      readFileSync(agent().logFile, 'utf8'),
    )
      ? true
      : undefined,
  );
  assert.equal(await podNamed('sc-escape'), undefined, 'never a pod');
  assert.deepEqual(await sandboxesOf('sc-escape'), []);
  for (const name of Object.keys(pods)) unlinkSync(join(manifests, `${name}.json`));
  for (const name of Object.keys(pods).filter((n) => n !== 'sc-escape'))
    await waitFor(`${name} gone`, 30_000, async () => ((await podNamed(name)) ? undefined : true), 200);
});

test('allowedUnsafeSysctls: an allowed unsafe sysctl reaches the sandbox; one not allowed is SysctlForbidden', async () => {
  agent();
  const withSysctls = (name: string, sysctls: { name: string; value: string }[]) =>
    manifest(name, {
      terminationGracePeriodSeconds: 1,
      securityContext: { sysctls },
      containers: [{ name: 'c', ...sh("trap 'exit 0' TERM; sleep 3600 & wait") }],
    });
  const allowed = [
    { name: 'kernel.msgmax', value: '12345' },
    { name: 'net/ipv4/ip_forward', value: '1' },
  ];
  writeFileSync(join(manifests, 'sysctl-ok.json'), withSysctls('sysctl-ok', allowed));
  writeFileSync(
    join(manifests, 'sysctl-no.json'),
    withSysctls('sysctl-no', [{ name: 'kernel.sem', value: '1 2 3 4' }]),
  );
  const no = await rejected('sysctl-no');
  assert.equal(no.status?.reason, 'SysctlForbidden');
  assert.equal(no.status?.message, 'Pod was rejected: forbidden sysctl: "kernel.sem" not allowlisted');
  await waitFor(
    'sysctl-ok Running',
    60_000,
    async () => ((await podNamed('sysctl-ok'))?.status?.phase === 'Running' ? true : undefined),
    200,
  );
  const [c] = await runningContainers(`sysctl-ok-${NODE}`);
  const r = await cri.execSync(c!.id, ['cat', '/proc/sys/kernel/msgmax', '/proc/sys/net/ipv4/ip_forward'], 10);
  assert.equal(r.stdout.toString(), '12345\n1\n', "set in the pod's IPC and network namespaces");
  assert.deepEqual(await sandboxesOf('sysctl-no'), [], 'the rejected pod never got a sandbox');
  unlinkSync(join(manifests, 'sysctl-ok.json'));
  unlinkSync(join(manifests, 'sysctl-no.json'));
  await waitFor('sysctl-ok gone', 30_000, async () => ((await podNamed('sysctl-ok')) ? undefined : true));
});

test('the grace period is honoured: a container ignoring SIGTERM is killed when it runs out', async () => {
  writeFileSync(
    join(manifests, 'stubborn.json'),
    manifest('stubborn', {
      terminationGracePeriodSeconds: 4,
      containers: [{ name: 'c', ...sh("trap '' TERM; while true; do sleep 1; done") }],
    }),
  );
  writeFileSync(
    join(manifests, 'polite.json'),
    manifest('polite', {
      terminationGracePeriodSeconds: 20,
      containers: [{ name: 'c', ...sh("trap 'exit 0' TERM; while true; do sleep 1 & wait; done") }],
    }),
  );
  for (const name of ['stubborn', 'polite']) {
    await waitFor(
      `${name} Running`,
      60_000,
      async () => ((await podNamed(name))?.status?.phase === 'Running' ? true : undefined),
      200,
    );
  }
  const [stubbornCtr] = await runningContainers(`stubborn-${NODE}`);
  assert.ok(stubbornCtr, 'stubborn container running');
  const t0 = Date.now();
  unlinkSync(join(manifests, 'stubborn.json'));
  unlinkSync(join(manifests, 'polite.json'));
  let politeMs = 0;
  const politeGone = waitFor(
    'polite stopped',
    30_000,
    async () => ((await runningContainers(`polite-${NODE}`)).length === 0 ? (politeMs = Date.now() - t0) : undefined),
    100,
  );
  await waitFor(
    'stubborn stopped',
    30_000,
    async () => ((await runningContainers(`stubborn-${NODE}`)).length === 0 ? true : undefined),
    100,
  );
  const stubbornMs = Date.now() - t0;
  await politeGone;
  assert.ok(stubbornMs >= 3500, `SIGKILL came only after the 4 s grace (${stubbornMs} ms)`);
  assert.ok(stubbornMs < 4000 + 8000, `and not much later (${stubbornMs} ms)`);
  assert.ok(politeMs < 4000, `a container that exits on SIGTERM does not wait for its 20 s grace (${politeMs} ms)`);
  const st = await cri.containerStatus(stubbornCtr.id).catch(() => undefined);
  if (st) assert.equal(st.exitCode, 137, 'killed by SIGKILL');
});

// ---- status JSON through a pod's life ----------------------------------------------------------

/** Which table stage an observed status is in, or undefined for transient states the table skips. */
function stageOf(s: ApiPodStatus | undefined): Stage | undefined {
  if (!s) return undefined;
  const init = s.initContainerStatuses?.[0];
  const app = s.containerStatuses?.[0];
  const kind = (c: typeof app) =>
    c?.state?.running
      ? 'running'
      : c?.state?.terminated
        ? 'terminated'
        : c?.state?.waiting
          ? `waiting:${c.state.waiting.reason ?? ''}`
          : 'none';
  const key = `${s.phase}/${kind(init)}/${kind(app)}/${app?.restartCount ?? 0}`;
  const settled = s.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status === 'False';
  if (key === 'Pending/waiting:PodInitializing/waiting:PodInitializing/0') return STAGES.pending;
  if (key === 'Pending/running/waiting:PodInitializing/0') return STAGES.initRunning;
  if (key === 'Pending/terminated/waiting:PodInitializing/0') return STAGES.initDone;
  if (key === 'Running/terminated/running/0') return STAGES.running;
  if (s.phase === 'Running' && kind(app) === 'waiting:CrashLoopBackOff') return STAGES.crashLooping;
  if (s.phase === 'Succeeded' && settled) return STAGES.succeeded;
  if (s.phase === 'Failed' && settled) return STAGES.failed;
  return undefined;
}

test('the status JSON of pods through their life matches the upstream table, field by field', async () => {
  const lifecycle = (name: string, restartPolicy: string, app: string) =>
    manifest(name, {
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      initContainers: [{ name: 'init', ...sh('sleep 2') }],
      containers: [{ name: 'app', ...sh(app) }],
    });
  const pods = {
    'life-ok': {
      restartPolicy: 'Never',
      app: 'sleep 3; exit 0',
      want: ['initRunning', 'running', 'succeeded'],
      final: 'succeeded',
    },
    'life-fail': {
      restartPolicy: 'Never',
      app: 'sleep 3; exit 1',
      want: ['initRunning', 'running', 'failed'],
      final: 'failed',
    },
    'life-crash': {
      restartPolicy: 'Always',
      app: 'sleep 2; exit 1',
      want: ['initRunning', 'running', 'crashLooping'],
      final: 'crashLooping',
    },
  } as const;
  for (const [name, p] of Object.entries(pods))
    writeFileSync(join(manifests, `${name}.json`), lifecycle(name, p.restartPolicy, p.app));

  const seen = new Map<string, Set<string>>(Object.keys(pods).map((n) => [n, new Set<string>()]));
  const mismatches: string[] = [];
  const stageName = (st: Stage) => Object.entries(STAGES).find(([, v]) => v === st)![0];
  let rawChecked = false;
  const last = new Map<string, ApiPodStatus | undefined>();
  await waitFor(
    'every pod through its life',
    90_000,
    async () => {
      const body = (await httpGet(agent().readOnlyPort, '/pods')).body;
      if (!rawChecked && body.includes('life-')) {
        // Timestamps are RFC 3339 in whole seconds, as the apiserver writes them.
        const times = [...body.matchAll(/"(?:startTime|lastTransitionTime|startedAt|finishedAt)":"([^"]+)"/g)].map(
          (m) => m[1]!,
        );
        for (const t of times) assert.match(t, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        rawChecked = times.length > 0;
      }
      const items = (JSON.parse(body).items as Pod[]).filter((p) => p.metadata?.namespace === NS);
      for (const name of Object.keys(pods)) {
        const pod = items.find((p) => p.metadata?.name === `${name}-${NODE}`);
        last.set(name, pod?.status);
        const st = stageOf(pod?.status);
        if (!st) continue;
        const diff = diffStage(pod!.status, st);
        if (diff.length > 0) mismatches.push(`${name} in stage ${stageName(st)}: ${diff.join('; ')}`);
        else seen.get(name)!.add(stageName(st));
      }
      const done = Object.entries(pods).every(([name, p]) => p.want.every((w) => seen.get(name)!.has(w)));
      return done || mismatches.length > 0 ? true : undefined;
    },
    150,
  ).catch((err: unknown) => {
    const report = [...seen]
      .map(([n, st]) => `${n}: saw [${[...st].join(', ')}], last ${JSON.stringify(last.get(n))}`)
      .join('\n');
    throw new Error(`${String(err)}\n${report}`);
  });
  assert.deepEqual(mismatches, []);
  for (const [name, p] of Object.entries(pods))
    assert.deepEqual(
      [...p.want].filter((w) => !seen.get(name)!.has(w)),
      [],
      `${name}: stages not observed`,
    );
  assert.ok(rawChecked, 'timestamps checked');

  // The settled pods keep their final status, containers stopped and the sandbox not ready.
  for (const name of ['life-ok', 'life-fail'] as const) {
    const pod = await podNamed(name);
    assert.deepEqual(diffStage(pod?.status, STAGES[pods[name].final]!), [], `${name} final`);
    assert.deepEqual(
      (await sandboxesOf(name)).filter((s) => s.state === 'SANDBOX_READY'),
      [],
      `${name}: sandbox stopped once terminal`,
    );
    assert.ok(pod?.status?.podIP, `${name}: keeps its pod IP`);
  }
  for (const name of Object.keys(pods)) unlinkSync(join(manifests, `${name}.json`));
});
