/**
 * Cluster day: a node joins a cluster and runs the pods every cluster runs, as an operator would
 * see it. The real agent in API server mode (--kubeconfig, the test apiserver's wire protocol)
 * on a containerd of its own started with no CNI config (NetworkReady=false), of the suite's
 * release (`startNoCniContainerd`: `containerd.sh start --no-cni-config`, which sets the conflist
 * it would have written aside in DIR/cni/). In order, sharing one agent:
 *
 * 1. the node registers, NotReady: the runtime's network is not ready;
 * 2. a pod on the pod network waits (Pending, upstream's NetworkNotReady event, no sandbox);
 * 3. a hostNetwork DaemonSet-style pod runs anyway and installs that conflist (from a ConfigMap)
 *    into the node's conf dir through a hostPath;
 * 4. the node turns Ready and the waiting CoreDNS-like pod starts: its Corefile from a ConfigMap,
 *    dnsPolicy Default (its resolv.conf is the node's resolvConf), Ready by its HTTP probe;
 * 5. an in-cluster client finds KUBERNETES_SERVICE_HOST/PORT (the `kubernetes` Service) and its
 *    service account token (the kube-api-access projected volume) and turns Ready;
 * 6. a pod whose image is in a registry with htpasswd auth pulls it with its imagePullSecrets;
 * 7. a job-like pod fails: `kubectl describe pod` (the real kubectl) shows why, from each
 *    container's termination message (the file, the log tail of FallbackToLogsOnError, the
 *    4096-byte cap), and its status names the generation it was computed for;
 * 8. every pod is deleted through the API and leaves the node.
 *
 * A failed wait prints the pod's status and events and the agent's log file.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import type { RuntimeService } from '../../src/cri/types.js';
import {
  REPO_ROOT,
  TEST_IMAGES,
  startNoCniContainerd,
  uniqueName,
  type NoCniContainerd,
} from '../support/containerd.js';
import {
  CNI_CONFLIST,
  COREFILE,
  cniInstallerPod,
  configMap,
  corednsPod,
  dockerConfigSecret,
  inClusterAppPod,
  privateImagePod,
} from '../support/cluster-day-pods.js';
import {
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  unmountUnder,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { findKubectl, kubectlWith } from '../support/kubectl.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';
import { startTestApiserver, type TestApiserver } from '../support/test-apiserver.js';
import { testTempDir } from '../support/temp-dir.js';
import { makeVariantImage } from '../support/variant-images.js';

const NODE = 'e2e-node';
/** --node-ip: a dual-stack pair, both on the host's loopback interface. */
const NODE_IPS = ['127.0.0.1', '::1'];
const SYSTEM = 'kube-system';
const APPS = 'default';
const TEAM = 'team-a';
/** The node's resolvConf, as systemd-resolved's non-stub file that kubeadm points at. */
const NODE_RESOLV = 'nameserver 192.0.2.53\nsearch cluster-day.example\n';
const RUN = uniqueName('day');
const WAIT_MS = 90_000;
/** The node's containerd state (short: its socket path must fit a unix socket). */
const STATE = join(REPO_ROOT, '.state', 'cluster-day');
/** The CNI conf dir containerd watches, empty at start. */
const CNI_CONF_DIR = join(STATE, 'cni', 'net.d');
/** Where `containerd.sh start --no-cni-config` sets aside the conflist it would have written. */
const SET_ASIDE_CONFLIST = join(STATE, 'cni', CNI_CONFLIST);

let ctr: NoCniContainerd | undefined;
let runtime: RuntimeService | undefined;
let api: TestApiserver | undefined;
let registry: TestRegistry | undefined;
let kubelet: KubeletProcess | undefined;
let privateImage = '';
const { dir, manifests } = makeKubeletDirs();

before(async () => {
  ctr = await startNoCniContainerd(STATE);
  runtime = connectRuntime(ctr.endpoint).runtime;
  api = await startTestApiserver({ bookmarkMs: 1000 });
  registry = await startRegistry({ endpoint: ctr.endpoint, auth: { username: 'kts', password: 'day-pw' } });
  const work = testTempDir('kts-day-img-');
  privateImage = `${registry.host}/team-a/app:${RUN}`;
  await registry.push(await makeVariantImage('x/private:latest', RUN, work), `team-a/app:${RUN}`);
  rmSync(work, { recursive: true, force: true });
});

after(async () => {
  // Every step whatever the one before did: processes stop by pid, the daemon takes its pods along.
  const step = (what: string) => (err: unknown) => console.error(`after: ${what} failed`, err);
  if (kubelet) await stopKubelet(kubelet).catch(step('stopping the agent'));
  try {
    if (kubelet) copyFileSync(kubelet.logFile, keptLog());
  } catch (err) {
    step('keeping the agent log')(err);
  }
  await api?.stop().catch(step('stopping the apiserver'));
  await registry?.stop().catch(step('stopping the registry'));
  runtime?.close();
  await ctr?.stop().catch(step('stopping the node containerd'));
  await unmountUnder(dir).catch(step('unmounting the agent directory'));
});

// --- what the test reads on the API, and how it says what went wrong -----------------------------

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
const apiserver = () => api!;
const getPod = (ns: string, name: string) => apiserver().store.get('pods', ns, name) as Pod | undefined;
const node = () =>
  apiserver().store.get('nodes', undefined, NODE) as { status?: { conditions?: Condition[] } } | undefined;
const nodeReady = () => node()?.status?.conditions?.find((c) => c.type === 'Ready');

function eventsOf(ns: string, name: string): { reason: string; message: string; type: string }[] {
  return apiserver()
    .store.list('events', ns)
    .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
    .map((e) => ({ reason: String(e.reason), message: String(e.message ?? ''), type: String(e.type ?? '') }));
}

/** Where after() keeps the agent's log (its own directory goes when the test process ends). */
const keptLog = () => join(ctr ? STATE : dir, `agent-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}.log`);

/** The agent's last log lines above debug that name `word`, shortened, for a failure message. */
function agentLogAbout(word: string, lines = 15): string {
  let text: string;
  try {
    text = readFileSync(kubelet?.logFile ?? '', 'utf8');
  } catch {
    return '  (no agent log)';
  }
  const picked = text
    .split('\n')
    .filter((l) => l.includes(word) && !l.includes('"level":"debug"'))
    .slice(-lines)
    .map((l) => `  ${l.slice(0, 400)}`);
  return picked.join('\n') || '  (nothing above debug)';
}

/** What a reader needs when a wait on a pod fails: its status, its events, the agent's log. */
function describePod(ns: string, name: string): string {
  const p = getPod(ns, name);
  const events = eventsOf(ns, name).map((e) => `  ${e.type} ${e.reason}: ${e.message}`);
  return [
    `pod ${ns}/${name}: ${p ? JSON.stringify(p.status ?? {}, null, 1) : 'not on the API'}`,
    `events:\n${events.join('\n') || '  (none)'}`,
    `node Ready: ${JSON.stringify(nodeReady() ?? null)}`,
    `agent log lines about ${name}:\n${agentLogAbout(name)}`,
    `whole agent log (kept after the run): ${keptLog()}`,
  ].join('\n');
}

/** Waits until `check(pod)` holds; on timeout fails with the pod's status and events. */
async function waitForPod(ns: string, name: string, what: string, check: (p: Pod) => boolean): Promise<Pod> {
  try {
    return await waitFor(
      `${ns}/${name} ${what}`,
      WAIT_MS,
      () => {
        const p = getPod(ns, name);
        return p && check(p) ? p : undefined;
      },
      250,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${describePod(ns, name)}`, { cause: err });
  }
}

const isReady = (p: Pod) =>
  p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

async function create(ns: string, plural: string, obj: unknown): Promise<void> {
  const r = await apiserver().call('POST', `/api/v1/namespaces/${ns}/${plural}`, obj);
  assert.equal(r.status, 201, `create ${plural} in ${ns}: ${JSON.stringify(r.body)}`);
}

/** Runs `script` in the pod's first container (CRI ExecSync) and returns its stdout. */
async function execIn(p: Pod, script: string): Promise<string> {
  const cid = p.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '');
  assert.ok(cid, `no container ID in the status of ${p.metadata?.name}`);
  const r = await runtime!.execSync(cid, ['sh', '-c', script], 10);
  assert.equal(r.exitCode, 0, `${script} in ${p.metadata?.name}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

// --- the day -------------------------------------------------------------------------------------

test('a node joins with no CNI config: it registers, NotReady because the runtime network is not ready', async () => {
  const resolvConf = join(dir, 'resolv.conf');
  writeFileSync(resolvConf, NODE_RESOLV);
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint: ctr!.endpoint,
    // A dual-stack pair on loopback (ours: upstream refuses a loopback node IP).
    extraArgs: [
      `--kubeconfig=${apiserver().kubeconfig(dir)}`,
      '--node-status-update-frequency=2s',
      `--node-ip=${NODE_IPS.join(',')}`,
    ],
    extraConfig: [`resolvConf: ${resolvConf}`, 'clusterDNS: [10.96.0.10]', 'clusterDomain: cluster.local'],
  });
  const ready = await waitFor('the node registered with a Ready condition', 60_000, () => nodeReady(), 250).catch(
    (err: Error) => {
      throw new Error(`${err.message}\nagent log (kept in ${keptLog()}):\n${tail(kubelet!.logFile)}`, { cause: err });
    },
  );
  assert.equal(ready.status, 'False', `Ready while containerd has no CNI config: ${JSON.stringify(ready)}`);
  assert.match(ready.message ?? '', /network not ready|NetworkReady=false/, JSON.stringify(ready));
});

test('a pod on the pod network waits: Pending, a NetworkNotReady event, no sandbox', async () => {
  await create(SYSTEM, 'configmaps', configMap('coredns', { Corefile: COREFILE }));
  await create(SYSTEM, 'pods', corednsPod({ nodeName: NODE, namespace: SYSTEM, configMapName: 'coredns' }));
  await waitFor('a NetworkNotReady event for coredns', WAIT_MS, () =>
    eventsOf(SYSTEM, 'coredns').some((e) => e.reason === 'NetworkNotReady') ? true : undefined,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${describePod(SYSTEM, 'coredns')}`, { cause: err });
  });
  const p = getPod(SYSTEM, 'coredns')!;
  assert.equal(p.status?.phase, 'Pending', describePod(SYSTEM, 'coredns'));
  const sandboxes = await runtime!.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': p.metadata!.uid! } });
  assert.deepEqual(sandboxes, [], 'no sandbox before the network is ready');
});

test('a hostNetwork DaemonSet-style pod runs without the network and installs the CNI config', async () => {
  const conflist = readFileSync(SET_ASIDE_CONFLIST, 'utf8');
  await create(SYSTEM, 'configmaps', configMap('kube-cni-cfg', { [CNI_CONFLIST]: conflist }));
  await create(
    SYSTEM,
    'pods',
    cniInstallerPod({ nodeName: NODE, namespace: SYSTEM, confDir: CNI_CONF_DIR, configMapName: 'kube-cni-cfg' }),
  );
  const p = await waitForPod(SYSTEM, 'kube-cni-ds-installer', 'Running and Ready', isReady);
  assert.equal(readFileSync(join(CNI_CONF_DIR, CNI_CONFLIST), 'utf8'), conflist, 'the conflist on the node');
  // upstream generateAPIPodStatus: a hostNetwork pod's IPs and every pod's hostIPs are the node's, both families.
  const both = NODE_IPS.map((ip) => ({ ip }));
  assert.deepEqual([p.status?.podIPs, p.status?.hostIPs, p.status?.hostIP], [both, both, NODE_IPS[0]]);
});

test('the node turns Ready and the waiting CoreDNS-like pod starts, with the node resolv.conf, and is Ready', async () => {
  await waitFor('the node Ready', WAIT_MS, () => (nodeReady()?.status === 'True' ? true : undefined), 250).catch(
    (err: Error) => {
      throw new Error(
        `${err.message}\nnode Ready: ${JSON.stringify(nodeReady())}\n${agentLogAbout('etwork')}\nagent log: ${keptLog()}`,
        {
          cause: err,
        },
      );
    },
  );
  const p = await waitForPod(SYSTEM, 'coredns', 'Running and Ready (readiness probe on :8181/ready)', isReady);
  const subnet = installedSubnet();
  assert.ok(
    p.status?.podIP?.startsWith(subnet.split('.').slice(0, 2).join('.') + '.'),
    `pod IP ${p.status?.podIP} in ${subnet}`,
  );
  assert.equal(await execIn(p, 'cat /etc/coredns/Corefile'), COREFILE, 'the Corefile from the ConfigMap');
  const resolv = await execIn(p, 'cat /etc/resolv.conf');
  assert.match(resolv, /^nameserver 192\.0\.2\.53$/m, `dnsPolicy Default gets the node's resolvConf:\n${resolv}`);
  assert.match(resolv, /^search cluster-day\.example$/m, resolv);
  assert.doesNotMatch(resolv, /10\.96\.0\.10|cluster\.local/, `no cluster DNS with dnsPolicy Default:\n${resolv}`);
});

test('node status: both node IPs (kubectl shows them), the runtime handlers and features the runtime reports', async () => {
  const reply = await runtime!.status();
  const handlers = reply.handlers.map((h) => ({
    name: h.name,
    features: { recursiveReadOnlyMounts: h.supportsRecursiveReadOnlyMounts, userNamespaces: h.supportsUserNamespaces },
  }));
  const { runtimeVersion } = await runtime!.version();
  // containerd 2.x reports its handlers ('' plus each configured one) and features; 1.6/1.7 neither.
  if (!runtimeVersion.startsWith('1.')) {
    assert.deepEqual(handlers.map((h) => h.name).sort(), ['', 'alt', 'runc'], `handlers of ${runtimeVersion}`);
    assert.equal(reply.features?.supplementalGroupsPolicy, true, `features of ${runtimeVersion}`);
  } else assert.deepEqual([handlers, reply.features], [[], undefined], `containerd ${runtimeVersion} reports none`);
  type NodeStatus = { addresses?: unknown[]; runtimeHandlers?: unknown[]; features?: unknown };
  const status = () => (node() as { status?: NodeStatus } | undefined)?.status ?? {};
  await waitFor('the runtime handlers on the node', 30_000, () =>
    JSON.stringify(status().runtimeHandlers ?? []) === JSON.stringify(handlers) ? true : undefined,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(status().runtimeHandlers)}`, { cause: err });
  });
  assert.deepEqual(status().features, reply.features, 'status.features as the runtime reports them (or absent)');
  const addresses = [
    ...NODE_IPS.map((address) => ({ type: 'InternalIP', address })),
    { type: 'Hostname', address: NODE },
  ];
  assert.deepEqual(status().addresses, addresses);
  const yaml = await promisify(execFile)(
    'kubectl',
    [`--kubeconfig=${apiserver().kubeconfig(dir)}`, 'get', 'node', NODE, '-o', 'yaml'],
    { timeout: 30_000 },
  ).then((r) => r.stdout);
  for (const ip of NODE_IPS)
    assert.match(yaml, new RegExp(`address: ['"]?${ip.replace(/[.]/g, '\\.')}['"]?\\n\\s+type: InternalIP`), yaml);
});

test('an in-cluster client reads KUBERNETES_SERVICE_HOST/PORT and its service account token', async () => {
  const svc = apiserver().store.get('services', 'default', 'kubernetes') as
    { spec?: { clusterIP?: string; ports?: { port?: number }[] } } | undefined;
  assert.ok(svc?.spec?.clusterIP, 'the test apiserver serves the default/kubernetes Service');
  await create(APPS, 'configmaps', configMap('kube-root-ca.crt', { 'ca.crt': apiserver().certs.ca }));
  await create(APPS, 'serviceaccounts', { metadata: { name: 'default' } });
  await create(APPS, 'pods', inClusterAppPod({ nodeName: NODE, namespace: APPS }));
  const p = await waitForPod(APPS, 'in-cluster-app', 'Running and Ready (found its in-cluster config)', isReady);
  const [url, ns, token] = (await execIn(p, 'cat /tmp/in-cluster')).trim().split(' ');
  assert.equal(url, `https://${svc.spec.clusterIP}:${svc.spec.ports?.[0]?.port}`, 'the kubernetes Service');
  assert.equal(ns, APPS);
  assert.match(token ?? '', /^kts-test-token\.default\.default\./, 'a token of the default service account');
  assert.equal(await execIn(p, 'cat /var/run/secrets/kubernetes.io/serviceaccount/ca.crt'), apiserver().certs.ca);
});

test('a pod pulls its image from a registry with auth with its imagePullSecrets and is Ready', async () => {
  await create(TEAM, 'secrets', dockerConfigSecret('regcred', registry!.host, registry!.creds!));
  await create(
    TEAM,
    'pods',
    privateImagePod({ nodeName: NODE, namespace: TEAM, image: privateImage, secretName: 'regcred' }),
  );
  const p = await waitForPod(TEAM, 'private-image', 'Running and Ready (pulled with its pull secret)', isReady);
  assert.equal(p.status?.containerStatuses?.[0]?.image, privateImage);
  assert.ok(
    eventsOf(TEAM, 'private-image').some((e) => e.reason === 'Pulled'),
    describePod(TEAM, 'private-image'),
  );
});

test("a failed job-like pod: kubectl describe shows each container's termination message", async (t) => {
  const sh = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
    name,
    image: TEST_IMAGES.busybox,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    ...extra,
  });
  await create(APPS, 'pods', {
    metadata: { name: 'failing-job' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      containers: [
        sh('migrate', 'echo -n "migration failed: schema v7 is missing" > /dev/termination-log; exit 1'),
        sh('report', 'echo "cannot reach the database"; exit 2', { terminationMessagePolicy: 'FallbackToLogsOnError' }),
        sh(
          'huge',
          "head -c 5000 /dev/zero | tr '\\0' x > /dev/termination-log; echo -n END >> /dev/termination-log; exit 3",
        ),
      ],
    },
  });
  const p = await waitForPod(APPS, 'failing-job', 'Failed with every container terminated', (x) =>
    x.status?.phase === 'Failed' && (x.status.containerStatuses ?? []).every((c) => c.state?.terminated) ? true : false,
  );
  const message = (name: string) =>
    p.status!.containerStatuses!.find((c) => c.name === name)?.state?.terminated?.message;
  assert.equal(message('migrate'), 'migration failed: schema v7 is missing', describePod(APPS, 'failing-job'));
  assert.equal(message('report'), 'cannot reach the database\n', 'FallbackToLogsOnError: the log tail');
  assert.equal(message('huge'), `${'x'.repeat(4093)}END`, 'the last 4096 bytes of the file');
  assert.equal(p.metadata?.generation, 1);
  assert.equal(p.status?.observedGeneration, 1, 'the status names the generation it was computed for');
  for (const c of p.status!.conditions ?? []) assert.equal(c.observedGeneration, 1, `condition ${c.type}`);
  const kubectl = await findKubectl();
  if (!kubectl) {
    t.skip('kubectl not installed (Debian kubernetes-client): describe check skipped');
    return;
  }
  const stdout = await kubectlWith(kubectl, apiserver().kubeconfig(dir))('describe', 'pod', '-n', APPS, 'failing-job');
  assert.match(
    stdout,
    /Reason:\s+Error\n\s+Message:\s+migration failed: schema v7 is missing\n\s+Exit Code:\s+1/,
    stdout,
  );
  assert.match(stdout, /Message:\s+cannot reach the database\n/, stdout);
  assert.match(stdout, /Exit Code:\s+2/, stdout);
});

test('every pod deleted through the API leaves the API and the node', async () => {
  const pods: [string, string][] = [
    [APPS, 'failing-job'],
    [SYSTEM, 'coredns'],
    [APPS, 'in-cluster-app'],
    [TEAM, 'private-image'],
    [SYSTEM, 'kube-cni-ds-installer'],
  ];
  for (const [ns, name] of pods) {
    if (!getPod(ns, name)) continue;
    const r = await apiserver().call('DELETE', `/api/v1/namespaces/${ns}/pods/${name}`, { gracePeriodSeconds: 2 });
    assert.equal(r.status, 200, `delete ${ns}/${name}: ${JSON.stringify(r.body)}`);
  }
  for (const [ns, name] of pods)
    await waitFor(`${ns}/${name} removed from the API`, 60_000, () => (getPod(ns, name) ? undefined : true), 250).catch(
      (err: Error) => {
        throw new Error(`${err.message}\n${describePod(ns, name)}`, { cause: err });
      },
    );
  await waitFor(
    'no sandbox left running on the node',
    30_000,
    async () => ((await runtime!.listPodSandbox()).every((s) => s.state !== 'SANDBOX_READY') ? true : undefined),
    250,
  );
});

/** The last lines of a log file, for a failure message. */
function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The /16 of the installed conflist's host-local range (a pod's IP comes from it). */
function installedSubnet(): string {
  const conf = JSON.parse(readFileSync(join(CNI_CONF_DIR, CNI_CONFLIST), 'utf8')) as {
    plugins: { ipam?: { ranges?: { subnet: string }[][] } }[];
  };
  return conf.plugins[0]?.ipam?.ranges?.[0]?.[0]?.subnet ?? '(no subnet in the conflist)';
}
