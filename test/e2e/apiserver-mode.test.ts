/**
 * API server mode end to end: the real agent (CLI) with --kubeconfig against the test apiserver
 * (HTTPS, real wire protocol) and real containerd. The tests run in order and share one agent:
 * registration and Ready, the lease, a pod created through the API (status on the API), its
 * graceful deletion, a static pod's mirror pod, configMap/secret/projected volumes (their tmpfs,
 * modes, fsGroup and teardown), Service env vars, an apiserver outage, and kubectl get/describe.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { kernelSupportsNoswap, mountAt, mountsUnder } from '../../src/volume/mount.js';
import { removeTestPods, runtimeEndpoint } from '../support/containerd.js';
import {
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  unmountUnder,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { findKubectl, kubectlWith } from '../support/kubectl.js';
import { startTestApiserver, type TestApiserver } from '../support/test-apiserver.js';

const NS = `api-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const IMAGE = 'localhost/kubelet-ts/busybox:latest';
const NODE = 'e2e-node';
const OUTAGE_MS = Number(process.env.KUBELET_TS_TEST_OUTAGE_MS ?? 12_000);

const endpoint = await runtimeEndpoint();
const { runtime } = connectRuntime(endpoint);
const { dir, manifests } = makeKubeletDirs();
let api: TestApiserver = await startTestApiserver({ bookmarkMs: 1000 });
const kubeconfig = api.kubeconfig(dir);
let kubelet: KubeletProcess | undefined;

after(async () => {
  if (kubelet) await stopKubelet(kubelet);
  await api.stop();
  await removeTestPods(runtime, { namespace: NS });
  await unmountUnder(dir);
  runtime.close();
});

const sleeper = (name: string, extra: Record<string, unknown> = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 20,
      containers: [
        {
          name: 'main',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        },
      ],
      ...extra,
    },
  }) as Pod;

const getPod = (name: string) => api.store.get('pods', NS, name) as Pod | undefined;
/** The fields of the stored Node this file reads (plain JSON, as the store keeps it). */
interface StoredNode {
  metadata: { uid: string; labels: Record<string, string> };
  spec?: { taints?: unknown[] };
  status: {
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
    conditions: { type: string; status: string; lastHeartbeatTime?: string }[];
    daemonEndpoints: { kubeletEndpoint: { Port: number } };
    addresses: { type: string }[];
    nodeInfo: { containerRuntimeVersion: string; bootID: string; kernelVersion: string };
  };
}
const node = () => api.store.get('nodes', undefined, NODE) as unknown as StoredNode | undefined;
const ready = (n: ReturnType<typeof node>) => n?.status?.conditions?.find((c) => c.type === 'Ready');

const podEvents = (name: string) =>
  api.store
    .list('events', NS)
    .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
    .map((e) => e.reason as string);

async function createPod(pod: Pod): Promise<void> {
  const r = await api.call('POST', `/api/v1/namespaces/${NS}/pods`, pod);
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

function runningPod(name: string): () => Pod | undefined {
  return () => {
    const p = getPod(name);
    return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running && p.status.podIP
      ? p
      : undefined;
  };
}

test('the node registers with labels, taints, capacity, nodeInfo and turns Ready', async () => {
  writeFileSync(
    join(manifests, 'static.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'static', namespace: NS },
      spec: sleeper('static').spec,
    }),
  );
  kubelet = startKubelet({
    dir,
    manifests,
    endpoint,
    extraArgs: [
      `--kubeconfig=${kubeconfig}`,
      '--node-status-update-frequency=2s',
      '--register-with-taints=example.com/dedicated=e2e:PreferNoSchedule',
      '--node-labels=kts.example/role=e2e',
    ],
    extraConfig: ['nodeLeaseDurationSeconds: 8', 'nodeStatusReportFrequency: 4s'],
  });
  const n = await waitFor(
    'node Ready on the API',
    60_000,
    () => (ready(node())?.status === 'True' ? node() : undefined),
    250,
  );
  assert.equal(n!.metadata.labels['kubernetes.io/hostname'], NODE);
  assert.equal(n!.metadata.labels['kts.example/role'], 'e2e');
  assert.equal(n!.metadata.labels['kubernetes.io/os'], 'linux');
  assert.deepEqual(n!.spec?.taints, [{ key: 'example.com/dedicated', value: 'e2e', effect: 'PreferNoSchedule' }]);
  for (const r of ['cpu', 'memory', 'pods', 'ephemeral-storage', 'hugepages-2Mi']) {
    assert.ok(n!.status.capacity[r], `capacity.${r}`);
    assert.ok(n!.status.allocatable[r], `allocatable.${r}`);
  }
  assert.deepEqual(
    n!.status.conditions.map((c: { type: string }) => c.type),
    ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'],
  );
  assert.equal(n!.status.daemonEndpoints.kubeletEndpoint.Port, kubelet!.port, 'the configured main port');
  assert.ok(n!.status.addresses.some((a: { type: string }) => a.type === 'InternalIP'));
  assert.match(n!.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//);
  assert.ok(n!.status.nodeInfo.bootID && n!.status.nodeInfo.kernelVersion);
});

test('the node lease is held by the node, owned by it, and renewed', async () => {
  const lease = () =>
    api.store.get('leases', 'kube-node-lease', NODE) as
      | {
          spec: { holderIdentity: string; renewTime: string; leaseDurationSeconds: number };
          metadata: { ownerReferences?: { uid: string }[] };
        }
      | undefined;
  const first = await waitFor('lease', 20_000, () => lease());
  assert.equal(first.spec.holderIdentity, NODE);
  assert.equal(first.spec.leaseDurationSeconds, 8);
  const renewed = await waitFor(
    'lease renewal',
    15_000,
    () => (lease()!.spec.renewTime !== first.spec.renewTime ? lease() : undefined),
    250,
  );
  assert.equal(renewed!.metadata.ownerReferences?.[0]?.uid, node()!.metadata.uid);
});

test('a pod created through the API runs and its status appears on the API', async () => {
  await createPod(sleeper('web'));
  const p = await waitFor('web Running on the API', 60_000, runningPod('web'), 250);
  const types = (p.status!.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => c.type)
    .sort();
  for (const t of ['ContainersReady', 'Initialized', 'PodScheduled', 'Ready'])
    assert.ok(types.includes(t), `condition ${t} True (got ${types.join(',')})`);
  assert.ok(p.status!.podIPs?.length, 'podIPs');
  assert.ok(p.status!.hostIP, 'hostIP');
  assert.equal(p.status!.containerStatuses![0]!.ready, true);
  // PodObservedGenerationTracking (GA): the status and the kubelet's conditions name the generation.
  assert.equal(p.metadata!.generation, 1);
  assert.equal(p.status!.observedGeneration, 1);
  assert.ok(
    (p.status!.conditions ?? []).every((c) => c.observedGeneration === 1),
    JSON.stringify(p.status!.conditions),
  );
  const nodeEvents = () =>
    api.store
      .list('events', 'default')
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === NODE)
      .map((e) => e.reason);
  await waitFor('NodeReady event on the API', 10_000, () => (nodeEvents().includes('NodeReady') ? true : undefined));
  await waitFor('Pulled/Created/Started events of web', 10_000, () =>
    ['Pulled', 'Created', 'Started'].every((r) => podEvents('web').includes(r)) ? true : undefined,
  );
});

test('a static pod shows up as a mirror pod owned by the node, with its status', async () => {
  const name = `static-${NODE}`;
  const m = await waitFor('mirror pod Running', 60_000, runningPod(name), 250);
  assert.ok(m.metadata!.annotations!['kubernetes.io/config.mirror'], 'mirror annotation');
  assert.equal(m.metadata!.ownerReferences?.[0]?.kind, 'Node');
  // Deleting the mirror pod recreates it.
  await api.call('DELETE', `/api/v1/namespaces/${NS}/pods/${name}`, { gracePeriodSeconds: 0 });
  await waitFor(
    'mirror pod recreated, with the static pod status',
    20_000,
    () => {
      const again = getPod(name);
      return again && again.metadata!.uid !== m.metadata!.uid && again.status?.phase === 'Running' ? again : undefined;
    },
    250,
  );
});

test('a graceful delete stops the pod and then removes it from the API', async () => {
  const before = getPod('web')!;
  const rv = api.store.rv;
  const r = await api.call('DELETE', `/api/v1/namespaces/${NS}/pods/web`, { gracePeriodSeconds: 15 });
  assert.equal(r.status, 200);
  assert.ok(getPod('web')?.metadata?.deletionTimestamp, 'deletionTimestamp set');
  assert.equal(getPod('web')?.metadata?.generation, 2, 'a graceful deletion is a new generation');
  await waitFor('web removed after termination', 30_000, () => (getPod('web') ? undefined : true), 250);
  // The kubelet acted on the deletion: its last statuses name generation 2.
  const observed = (api.store.since(rv) ?? [])
    .filter((c) => c.plural === 'pods' && (c.object.metadata as { name?: string } | undefined)?.name === 'web')
    .map((c) => (c.object as Pod).status?.observedGeneration);
  assert.equal(observed.at(-1), 2, `observedGeneration of web's last writes: ${observed.join(',')}`);
  await waitFor('Killing event of web', 10_000, () => (podEvents('web').includes('Killing') ? true : undefined));
  const sandboxes = await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': before.metadata!.uid! } });
  assert.ok(
    sandboxes.every((s) => s.state !== 'SANDBOX_READY'),
    'sandbox stopped',
  );
});

test('a pod deleted while it waits on a failing pull leaves as Failed and is removed from the API', async () => {
  const pod = sleeper('nopull');
  pod.spec!.containers[0]!.image = 'localhost/kubelet-ts/no-such-image:never';
  pod.spec!.containers[0]!.imagePullPolicy = 'IfNotPresent';
  await createPod(pod);
  await waitFor('nopull waiting on its pull', 60_000, () => {
    const reason = getPod('nopull')?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
    return reason === 'ErrImagePull' || reason === 'ImagePullBackOff' ? true : undefined;
  });
  const r = await api.call('DELETE', `/api/v1/namespaces/${NS}/pods/nopull`, { gracePeriodSeconds: 15 });
  assert.equal(r.status, 200);
  // upstream TerminatePod: the pod ends Failed (it never ran), so the final delete may go.
  await waitFor('nopull removed from the API', 30_000, () => (getPod('nopull') ? undefined : true), 250);
});

test('configMap, secret and projected volumes and env; a configMap edit reaches the mounted file', async () => {
  assert.equal(
    (
      await api.call('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        metadata: { name: 'cfg' },
        data: { greeting: 'hello', other: 'x' },
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await api.call('POST', `/api/v1/namespaces/${NS}/secrets`, {
        metadata: { name: 'sec' },
        data: { password: Buffer.from('s3cret').toString('base64') },
      })
    ).status,
    201,
  );
  const script =
    'echo "$GREETING/$SEC_password" > /out/env; while true; do cat /etc/cfg/greeting > /out/seen.tmp; mv /out/seen.tmp /out/seen; sleep 0.5; done';
  await createPod(
    sleeper('cfgpod', {
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'greeting', path: 'greeting' }] } },
        {
          name: 'proj',
          projected: {
            sources: [
              { secret: { name: 'sec' } },
              { serviceAccountToken: { path: 'token', audience: 'e2e' } },
              { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
            ],
          },
        },
        { name: 'missing', configMap: { name: 'does-not-exist', optional: true } },
        { name: 'out', emptyDir: {} },
      ],
      containers: [
        {
          name: 'main',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          env: [{ name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } }],
          envFrom: [{ secretRef: { name: 'sec' }, prefix: 'SEC_' }],
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'proj', mountPath: '/etc/proj' },
            { name: 'missing', mountPath: '/etc/missing' },
            { name: 'out', mountPath: '/out' },
          ],
        },
      ],
    }),
  );
  const p = await waitFor('cfgpod Running', 60_000, runningPod('cfgpod'), 250);
  const vol = (plugin: string, name: string, file: string) =>
    join(dir, 'root', 'pods', p.metadata!.uid!, 'volumes', plugin, name, file);
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  await waitFor(
    'env from configMap and secret',
    20_000,
    () => (read(vol('kubernetes.io~empty-dir', 'out', 'env')) === 'hello/s3cret' ? true : undefined),
    250,
  );
  assert.equal(read(vol('kubernetes.io~projected', 'proj', 'password')), 's3cret');
  assert.equal(read(vol('kubernetes.io~projected', 'proj', 'name')), 'cfgpod');
  assert.match(read(vol('kubernetes.io~projected', 'proj', 'token')) ?? '', /^kts-test-token\./);
  await waitFor(
    'the configMap file seen inside the container',
    10_000,
    () => (read(vol('kubernetes.io~empty-dir', 'out', 'seen')) === 'hello' ? true : undefined),
    250,
  );
  const edit = await api.call(
    'PATCH',
    `/api/v1/namespaces/${NS}/configmaps/cfg`,
    { data: { greeting: 'bonjour' } },
    'application/merge-patch+json',
  );
  assert.equal(edit.status, 200);
  const t0 = Date.now();
  await waitFor(
    'the edit seen inside the container',
    30_000,
    () => (read(vol('kubernetes.io~empty-dir', 'out', 'seen')) === 'bonjour' ? true : undefined),
    250,
  );
  console.log(`# configMap edit reached the container in ${Date.now() - t0} ms`);
});

/** A pod that writes its Service env vars (KUBERNETES_*, WEB_*, LATE_*) to /out/env, then sleeps. */
const envDumper = (name: string, extra: Record<string, unknown> = {}): Pod =>
  sleeper(name, {
    volumes: [{ name: 'out', emptyDir: {} }],
    containers: [
      {
        name: 'main',
        image: IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: [
          'sh',
          '-c',
          "env | grep -E '^(KUBERNETES|WEB|LATE)_' | sort > /out/env.tmp; mv /out/env.tmp /out/env; sleep 3600",
        ],
        volumeMounts: [{ name: 'out', mountPath: '/out' }],
      },
    ],
    ...extra,
  });

/** The env file an envDumper pod wrote, as a map. */
async function dumpedEnv(name: string): Promise<Map<string, string>> {
  const p = await waitFor(`${name} Running`, 60_000, runningPod(name), 250);
  const file = join(dir, 'root', 'pods', p.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', 'out', 'env');
  const text = await waitFor(
    `${name} env file`,
    20_000,
    () => (existsSync(file) ? readFileSync(file, 'utf8') : undefined),
    250,
  );
  return new Map(
    text
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

test("Service env vars: KUBERNETES_* always, the namespace's with enableServiceLinks, later Services in later containers", async () => {
  const r = await api.call('POST', `/api/v1/namespaces/${NS}/services`, {
    metadata: { name: 'web' },
    spec: { ports: [{ name: 'http', port: 80 }] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const webIP = (r.body.spec as { clusterIP: string }).clusterIP;
  await createPod(envDumper('links'));
  await createPod(envDumper('nolinks', { enableServiceLinks: false }));
  const links = await dumpedEnv('links');
  assert.equal(links.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
  assert.equal(links.get('KUBERNETES_SERVICE_PORT'), '443');
  assert.equal(links.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
  assert.equal(links.get('KUBERNETES_PORT'), 'tcp://10.96.0.1:443');
  assert.equal(links.get('WEB_SERVICE_HOST'), webIP);
  assert.equal(links.get('WEB_SERVICE_PORT_HTTP'), '80');
  assert.equal(links.get('WEB_PORT_80_TCP_ADDR'), webIP);
  const nolinks = await dumpedEnv('nolinks');
  assert.equal(nolinks.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
  assert.deepEqual(
    [...nolinks.keys()].filter((k) => !k.startsWith('KUBERNETES_')),
    [],
    'no Service links with enableServiceLinks: false',
  );
  // A Service made later reaches only containers started later (upstream's documented race).
  const late = await api.call('POST', `/api/v1/namespaces/${NS}/services`, {
    metadata: { name: 'late' },
    spec: { ports: [{ port: 8080 }] },
  });
  assert.equal(late.status, 201);
  await new Promise((res) => setTimeout(res, 1000));
  await createPod(envDumper('later'));
  const later = await dumpedEnv('later');
  assert.equal(later.get('LATE_SERVICE_HOST'), (late.body.spec as { clusterIP: string }).clusterIP);
  assert.equal(later.get('LATE_SERVICE_PORT'), '8080');
  assert.equal(later.get('WEB_SERVICE_HOST'), webIP);
  assert.equal(links.has('LATE_SERVICE_HOST'), false);
  // One cluster-wide list+watch of Services for the whole agent, whatever the pods.
  const svcCalls = api.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/services'));
  assert.deepEqual(
    svcCalls.map((q) => `${q.path} watch=${q.query.get('watch') ?? 'false'}`),
    ['/api/v1/services watch=false', '/api/v1/services watch=true'],
  );
  for (const name of ['links', 'nolinks', 'later']) {
    assert.equal(
      (await api.call('DELETE', `/api/v1/namespaces/${NS}/pods/${name}`, { gracePeriodSeconds: 0 })).status,
      200,
    );
  }
});

test('secret and projected volumes are tmpfs with upstream modes and fsGroup, dirs 0750; all gone after the delete', async () => {
  assert.equal(
    (
      await api.call('POST', `/api/v1/namespaces/${NS}/secrets`, {
        metadata: { name: 'tls' },
        data: { 'tls.key': Buffer.from('k3y').toString('base64'), 'tls.crt': Buffer.from('crt').toString('base64') },
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await api.call('POST', `/api/v1/namespaces/${NS}/configmaps`, {
        metadata: { name: 'settings' },
        data: { 'app.conf': 'x=1' },
      })
    ).status,
    201,
  );
  await createPod(
    sleeper('vault', {
      securityContext: { runAsUser: 1000, fsGroup: 2000 },
      volumes: [
        {
          name: 'sec',
          secret: {
            secretName: 'tls',
            defaultMode: 0o400,
            items: [
              { key: 'tls.key', path: 'tls.key' },
              { key: 'tls.crt', path: 'tls.crt', mode: 0o444 },
            ],
          },
        },
        { name: 'cfg', configMap: { name: 'settings' } },
        { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } },
      ],
      containers: [
        {
          name: 'main',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
          volumeMounts: [
            { name: 'sec', mountPath: '/etc/sec' },
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'tok', mountPath: '/var/run/secrets/tokens' },
          ],
        },
      ],
    }),
  );
  const p = await waitFor('vault Running', 60_000, runningPod('vault'), 250);
  const uid = p.metadata!.uid!;
  const root = join(dir, 'root');
  const volumes = join(root, 'pods', uid, 'volumes');
  const secDir = join(volumes, 'kubernetes.io~secret', 'sec');
  const tokDir = join(volumes, 'kubernetes.io~projected', 'tok');
  const cfgDir = join(volumes, 'kubernetes.io~configmap', 'cfg');

  // Host side: 0750 from the root dir down to the plugin dirs; tmpfs for secret and projected.
  const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
  for (const d of [
    root,
    join(root, 'pods'),
    join(root, 'pods', uid),
    volumes,
    join(volumes, 'kubernetes.io~secret'),
    join(volumes, 'kubernetes.io~projected'),
    join(volumes, 'kubernetes.io~configmap'),
  ]) {
    assert.equal(mode(d), '750', d);
  }
  for (const d of [secDir, tokDir]) {
    const m = await mountAt(d);
    assert.equal(m?.fsType, 'tmpfs', `${d} is a tmpfs`);
    assert.match(m!.superOptions, /size=65536k/, 'no pod memory limit: the 64 MiB bound');
    if (kernelSupportsNoswap(release())) assert.match(m!.superOptions, /noswap/, 'secret pages never reach swap');
    assert.equal(mode(d), '2755', 'volume root: 0755, g+rx and setgid for the fsGroup');
    assert.equal(statSync(d).gid, 2000);
  }
  assert.equal(await mountAt(cfgDir), undefined, 'configMap volumes stay on disk (upstream)');
  assert.match(
    readlinkSync(join(secDir, '..data')),
    /^\.\.\d{4}_\d\d_\d\d_/,
    '..data points at a timestamped directory',
  );
  assert.ok(lstatSync(join(secDir, 'tls.key')).isSymbolicLink(), 'user-visible names are symlinks');
  assert.equal(readlinkSync(join(secDir, 'tls.key')), '..data/tls.key');

  // Inside the container: the modes, owners, that uid 1000 reads through the fsGroup, the mounts.
  const cid = p.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
  const exec = async (script: string) => {
    const r = await runtime.execSync(cid, ['sh', '-c', script], 10);
    assert.equal(r.exitCode, 0, `${script}: ${r.stderr.toString()}`);
    return r.stdout.toString().trim();
  };
  assert.equal(
    await exec(
      'stat -L -c "%n %a %u %g" /etc/sec/tls.key /etc/sec/tls.crt /etc/cfg/app.conf /var/run/secrets/tokens/token',
    ),
    [
      '/etc/sec/tls.key 440 0 2000',
      '/etc/sec/tls.crt 444 0 2000',
      '/etc/cfg/app.conf 644 0 2000',
      '/var/run/secrets/tokens/token 640 1000 2000',
    ].join('\n'),
  );
  assert.equal(await exec('stat -c "%a" /etc/sec /etc/sec/..data/'), '2755\n2755');
  assert.equal(await exec('id -u; cat /etc/sec/tls.key; echo; cat /etc/cfg/app.conf'), '1000\nk3y\nx=1');
  assert.match(await exec('cat /var/run/secrets/tokens/token'), /^kts-test-token\./);
  const procMounts = await exec('cat /proc/mounts');
  assert.match(procMounts, /^tmpfs \/etc\/sec tmpfs ro[, ]/m);
  assert.match(procMounts, /^tmpfs \/var\/run\/secrets\/tokens tmpfs ro[, ]/m);
  assert.match(procMounts, /^\S+ \/etc\/cfg (?!tmpfs)\S+ ro[, ]/m);

  // Deleted: the tmpfs are unmounted and the volume directories removed once the pod terminates.
  assert.equal(
    (await api.call('DELETE', `/api/v1/namespaces/${NS}/pods/vault`, { gracePeriodSeconds: 1 })).status,
    200,
  );
  await waitFor('vault removed from the API', 30_000, () => (getPod('vault') ? undefined : true), 250);
  await waitFor(
    'volumes unmounted and removed',
    20_000,
    async () => ((await mountsUnder(join(root, 'pods', uid))).length === 0 && !existsSync(volumes) ? true : undefined),
    250,
  );
  await waitFor(
    'the pod directory removed',
    20_000,
    () => (existsSync(join(root, 'pods', uid)) ? undefined : true),
    250,
  );
});

test(`an apiserver outage (${OUTAGE_MS / 1000} s) loses no pod and the agent catches up`, async () => {
  await createPod(sleeper('steady'));
  const steady = await waitFor('steady Running', 60_000, runningPod('steady'), 250);
  const containerID = steady.status!.containerStatuses![0]!.containerID;
  // A pod that finishes while the apiserver is away: its final status must arrive afterwards.
  await createPod(
    sleeper('short', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 3'] }],
    }),
  );
  await waitFor('short Running', 60_000, runningPod('short'), 250);
  const { port, store, certs, token } = api;
  await api.stop();
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  // A write while this apiserver is away, then compaction: the agent's resourceVersion is now
  // too old, so its pod watch gets 410 Gone and must list again.
  store.put('configmaps', { metadata: { name: 'written-during-outage', namespace: NS } }, 'ADDED');
  store.compact();
  api = await startTestApiserver({ port, store, certs, token, bookmarkMs: 1000 });
  const heartbeatBefore = Date.now();
  await createPod(sleeper('after'));
  await waitFor('a pod created after the outage runs', 60_000, runningPod('after'), 250);
  await waitFor(
    'short Succeeded on the API after the outage',
    20_000,
    () => (getPod('short')?.status?.phase === 'Succeeded' ? true : undefined),
    250,
  );
  const s = getPod('steady')!;
  assert.equal(s.status!.phase, 'Running');
  assert.equal(s.status!.containerStatuses![0]!.containerID, containerID, 'steady was not restarted');
  assert.equal(s.status!.containerStatuses![0]!.restartCount, 0);
  await waitFor(
    'node heartbeat after the outage',
    20_000,
    () => {
      const hb = Date.parse(ready(node())?.lastHeartbeatTime ?? '');
      return hb >= Math.floor(heartbeatBefore / 1000) * 1000 ? true : undefined;
    },
    250,
  );
  // The lease retries back off to at most 7 s (upstream), so the renewal comes within ~10 s.
  await waitFor(
    'lease renewed after the outage',
    15_000,
    () => {
      const lease = api.store.get('leases', 'kube-node-lease', NODE) as { spec: { renewTime: string } };
      return Date.parse(lease.spec.renewTime) >= heartbeatBefore ? true : undefined;
    },
    250,
  );
});

test('kubectl get/describe work against the test apiserver', async (t) => {
  const kubectl = await findKubectl();
  if (!kubectl) {
    t.skip('kubectl not installed (Debian kubernetes-client): shape check skipped');
    return;
  }
  const run = kubectlWith(kubectl, kubeconfig);
  assert.match(await run('get', 'nodes'), new RegExp(NODE));
  assert.match(await run('describe', 'node', NODE), /Ready\s+True/);
  assert.match(await run('get', 'pods', '-n', NS), /steady/);
  const described = await run('describe', 'pod', '-n', NS, 'steady');
  assert.match(described, /Status:\s+Running/);
  assert.match(described, /IP:\s+\d+\.\d+\.\d+\.\d+/);
});

test('removing the static pod deletes its mirror pod', async () => {
  unlinkSync(join(manifests, 'static.json'));
  await waitFor('mirror pod deleted', 40_000, () => (getPod(`static-${NODE}`) ? undefined : true), 250);
});
