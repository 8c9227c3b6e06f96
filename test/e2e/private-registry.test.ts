/**
 * Private images through the agent, against a real registry with htpasswd auth (issue 26 item 4):
 * (a) API server mode: a pod whose imagePullSecrets name a kubernetes.io/dockerconfigjson Secret
 *     pulls and runs; the same pod without it stays in ErrImagePull/ImagePullBackOff; a missing
 *     secret is a FailedToRetrieveImagePullSecret warning and the pull goes on (and fails);
 * (b) standalone: the node's docker config (<root-dir>/config.json) is the keyring of static pods;
 * (c) a credential provider exec plugin of our own (test/support/credential-provider-plugin.sh),
 *     configured with --image-credential-provider-config/--image-credential-provider-bin-dir,
 *     gives the credentials; its Registry-keyed cache makes the second pull exec it no more;
 * (d) ensure-secret-pulled-images (KEP-2535): once pod A pulled the private image with its secret,
 *     pod B in another namespace without secrets (IfNotPresent) does not run from the cached
 *     image: it is pulled again and fails with the registry's 401; pod C there with a secret of
 *     the same credentials runs; the pull record under <root-dir>/image_manager/pulled says so.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import { removeTestPods, runtimeEndpoint, uniqueName } from '../support/containerd.js';
import {
  REPO_ROOT,
  getPods,
  makeKubeletDirs,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { makeVariantImage } from '../support/variant-images.js';
import { testTempDir } from '../support/temp-dir.js';

const endpoint = await runtimeEndpoint();
const { images, runtime } = connectRuntime(endpoint);
const RUN = uniqueName('priv');
const NS = `priv-${process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native'}-${Math.random().toString(36).slice(2, 7)}`;
const CREDS = { username: 'kts', password: 'secret-pw' };
let registry: TestRegistry;
const pulled: string[] = [];

before(async () => {
  const work = testTempDir('kts-priv-img-');
  registry = await startRegistry({ endpoint, auth: CREDS });
  const archive = await makeVariantImage('x/private:latest', `${RUN}-private`, work);
  for (const repo of ['api', 'node', 'plugin']) await registry.push(archive, `kts/${repo}:${RUN}`);
});

after(async () => {
  for (const img of pulled) await images.removeImage(img).catch(() => undefined);
  await removeTestPods(runtime, { namespace: NS });
  await registry?.stop();
  images.close();
  runtime.close();
});

function privateImage(repo: string): string {
  const image = `${registry.host}/kts/${repo}:${RUN}`;
  pulled.push(image);
  return image;
}

const sleeperSpec = (image: string, names = ['main']) => ({
  hostNetwork: true,
  terminationGracePeriodSeconds: 1,
  containers: names.map((name) => ({
    name,
    image,
    imagePullPolicy: 'Always',
    command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
  })),
});

const dockerConfigSecret = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': Buffer.from(dockerConfigJson()).toString('base64') },
});

const dockerConfigJson = () =>
  JSON.stringify({
    auths: { [registry.host]: { auth: Buffer.from(`${CREDS.username}:${CREDS.password}`).toString('base64') } },
  });

const waitingReason = (p: Pod | undefined) => p?.status?.containerStatuses?.[0]?.state?.waiting;

interface AgentRun {
  dir: string;
  manifests: string;
  /** Starts the agent with these extra flags (once per run); stopped, its pods and dirs removed after `body`. */
  start(extraArgs?: string[]): KubeletProcess;
}

async function withAgent(body: (run: AgentRun) => Promise<void>): Promise<void> {
  const { dir, manifests } = makeKubeletDirs();
  let k: KubeletProcess | undefined;
  try {
    await body({ dir, manifests, start: (extraArgs) => (k = startKubelet({ dir, manifests, endpoint, extraArgs })) });
  } finally {
    if (k) await stopKubelet(k);
    await removeTestPods(runtime, { namespace: NS });
    rmSync(dir, { recursive: true, force: true });
  }
}

const pluginFlags = (config: string, bin: string) => [
  `--image-credential-provider-config=${config}`,
  `--image-credential-provider-bin-dir=${bin}`,
];

test('(a) API server mode: imagePullSecrets from the secret cache pull a private image; without them ErrImagePull', async () => {
  const api = await startTestApiserver();
  try {
    await withAgent(async ({ dir, start }) => {
      const image = privateImage('api');
      const secret = await api.call('POST', `/api/v1/namespaces/${NS}/secrets`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'regcred', namespace: NS },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(dockerConfigJson()).toString('base64') },
      });
      assert.equal(secret.status, 201, JSON.stringify(secret.body));
      const create = async (name: string, pullSecrets: string[]) => {
        const r = await api.call('POST', `/api/v1/namespaces/${NS}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NS },
          spec: {
            nodeName: 'e2e-node',
            ...sleeperSpec(image),
            imagePullSecrets: pullSecrets.map((n) => ({ name: n })),
          },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      };
      await create('with-secret', ['regcred']);
      await create('without-secret', []);
      await create('missing-secret', ['no-such-secret']);
      start([`--kubeconfig=${api.kubeconfig(dir)}`]);
      const get = (name: string) => api.store.get('pods', NS, name) as Pod | undefined;
      await waitFor('with-secret Running', 90_000, () =>
        get('with-secret')?.status?.containerStatuses?.[0]?.state?.running ? true : undefined,
      );
      for (const name of ['without-secret', 'missing-secret'])
        await waitFor(`${name} waiting on the pull`, 60_000, () => {
          const r = waitingReason(get(name));
          return r?.reason === 'ErrImagePull' || r?.reason === 'ImagePullBackOff' ? r : undefined;
        });
      const events = (name: string) =>
        api.store
          .list('events', NS)
          .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
          .map((e) => `${String(e.reason)}: ${String(e.message)}`);
      await waitFor('FailedToRetrieveImagePullSecret event', 20_000, () =>
        events('missing-secret').some((e) => /^FailedToRetrieveImagePullSecret: .*no-such-secret/.test(e))
          ? true
          : undefined,
      );
      await waitFor('the 401 in a Failed event', 20_000, () =>
        events('without-secret').find((e) => e.startsWith('Failed: ') && /401|unauthorized|authoriz/i.test(e)),
      );
    });
  } finally {
    await api.stop();
  }
});

test('(d) a present private image is used only by pods whose credentials pulled it (KEP-2535)', async () => {
  const api = await startTestApiserver();
  const NS_B = `${NS}-b`;
  try {
    await withAgent(async ({ dir, start }) => {
      const image = privateImage('api');
      for (const [ns, name] of [
        [NS, 'regcred-a'],
        [NS_B, 'regcred-c'],
      ] as const) {
        const r = await api.call('POST', `/api/v1/namespaces/${ns}/secrets`, dockerConfigSecret(ns, name));
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
      const create = async (ns: string, name: string, pullSecrets: string[]) => {
        const spec = sleeperSpec(image);
        spec.containers[0]!.imagePullPolicy = 'IfNotPresent';
        const r = await api.call('POST', `/api/v1/namespaces/${ns}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: ns },
          spec: { nodeName: 'e2e-node', ...spec, imagePullSecrets: pullSecrets.map((n) => ({ name: n })) },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      };
      const get = (ns: string, name: string) => api.store.get('pods', ns, name) as Pod | undefined;
      const running = (ns: string, name: string) => () =>
        get(ns, name)?.status?.containerStatuses?.[0]?.state?.running ? true : undefined;
      const events = (ns: string, name: string) =>
        api.store
          .list('events', ns)
          .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
          .map((e) => `${String(e.reason)}: ${String(e.message)}`);
      await images.removeImage(image).catch(() => undefined);
      await create(NS, 'pod-a', ['regcred-a']);
      start([`--kubeconfig=${api.kubeconfig(dir)}`]);
      await waitFor('pod A Running', 90_000, running(NS, 'pod-a'));
      await create(NS_B, 'pod-b', []);
      await waitFor('pod B waiting on the pull', 60_000, () => {
        const r = waitingReason(get(NS_B, 'pod-b'));
        return r?.reason === 'ErrImagePull' || r?.reason === 'ImagePullBackOff' ? r : undefined;
      });
      await waitFor('pod B pulled again and got the 401', 20_000, () =>
        events(NS_B, 'pod-b').find((e) => e.startsWith('Failed: ') && /401|unauthorized|authoriz/i.test(e)),
      );
      assert.ok(
        events(NS_B, 'pod-b').some((e) => e.startsWith('Pulling: ')),
        events(NS_B, 'pod-b').join('\n'),
      );
      await create(NS_B, 'pod-c', ['regcred-c']);
      await waitFor('pod C Running', 90_000, running(NS_B, 'pod-c'));
      const pulledDir = join(dir, 'root', 'image_manager', 'pulled');
      const records = readdirSync(pulledDir).map((f) => JSON.parse(readFileSync(join(pulledDir, f), 'utf8')));
      const mine = records.find((r) => r.credentialMapping?.[`${registry.host}/kts/api`]);
      assert.ok(mine, JSON.stringify(records));
      assert.equal(mine.kind, 'ImagePulledRecord');
      const secrets = mine.credentialMapping[`${registry.host}/kts/api`].kubernetesSecrets as { name: string }[];
      assert.ok(
        secrets.some((x) => x.name === 'regcred-a'),
        JSON.stringify(secrets),
      );
    });
  } finally {
    await removeTestPods(runtime, { namespace: NS_B });
    await api.stop();
  }
});

test('(b) standalone: <root-dir>/config.json is the node keyring of static pods', () =>
  withAgent(async ({ dir, manifests, start }) => {
    mkdirSync(join(dir, 'root'), { recursive: true });
    writeFileSync(join(dir, 'root', 'config.json'), dockerConfigJson(), { mode: 0o600 });
    writeFileSync(
      join(manifests, 'p.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'node-keyring', namespace: NS },
        spec: sleeperSpec(privateImage('node')),
      }),
    );
    const k = start();
    await waitFor('static pod with a private image Running', 90_000, async () =>
      (await getPods(k)).find((p) => p.metadata?.namespace === NS)?.status?.containerStatuses?.[0]?.state?.running
        ? true
        : undefined,
    );
  }));

test('(c) a credential provider plugin gives the credentials; its cache spares the second exec', () =>
  withAgent(async ({ dir, manifests, start }) => {
    const bin = join(dir, 'plugins');
    mkdirSync(bin);
    copyFileSync(join(REPO_ROOT, 'test', 'support', 'credential-provider-plugin.sh'), join(bin, 'kts-test-provider'));
    const execLog = join(dir, 'plugin-execs.log');
    const config = join(dir, 'credential-providers.yaml');
    writeFileSync(
      config,
      [
        'apiVersion: kubelet.config.k8s.io/v1',
        'kind: CredentialProviderConfig',
        'providers:',
        '  - name: kts-test-provider',
        `    matchImages: ["${registry.host}"]`,
        '    defaultCacheDuration: 1m',
        '    apiVersion: credentialprovider.kubelet.k8s.io/v1',
        `    args: ["${registry.host}"]`,
        '    env:',
        `      - {name: KTS_PLUGIN_LOG, value: "${execLog}"}`,
        `      - {name: KTS_PLUGIN_USER, value: "${CREDS.username}"}`,
        `      - {name: KTS_PLUGIN_PASSWORD, value: "${CREDS.password}"}`,
        '',
      ].join('\n'),
    );
    const image = privateImage('plugin');
    // Two containers, each pulled (Always): the first pull execs the plugin, the second is served by its cache.
    writeFileSync(
      join(manifests, 'p.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'plugin-creds', namespace: NS },
        spec: sleeperSpec(image, ['one', 'two']),
      }),
    );
    const k = start(pluginFlags(config, bin));
    await waitFor('both containers Running', 90_000, async () => {
      const p = (await getPods(k)).find((x) => x.metadata?.namespace === NS);
      const running = p?.status?.containerStatuses?.filter((c) => c.state?.running).length ?? 0;
      return running === 2 ? true : undefined;
    });
    assert.ok(existsSync(execLog), 'the plugin ran');
    const requests = readFileSync(execLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(requests, [
      {
        apiVersion: 'credentialprovider.kubelet.k8s.io/v1',
        kind: 'CredentialProviderRequest',
        image: `${registry.host}/kts/plugin`,
      },
    ]);
  }));

test('a bad credential provider config stops the agent at start-up, naming the field', () =>
  withAgent(async ({ dir, start }) => {
    const bin = join(dir, 'plugins');
    mkdirSync(bin);
    const config = join(dir, 'bad.yaml');
    writeFileSync(
      config,
      'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n  - name: x\n    matchImages: []\n    apiVersion: credentialprovider.kubelet.k8s.io/v1\n',
    );
    const k = start(pluginFlags(config, bin));
    const code = await new Promise<number | null>((r) =>
      k.child.exitCode !== null ? r(k.child.exitCode) : k.child.once('close', (c) => r(c)),
    );
    assert.notEqual(code, 0);
    const log = readFileSync(k.logFile, 'utf8');
    assert.match(log, /providers\[0\]\.matchImages: Required value/);
    assert.match(log, /providers\[0\]\.defaultCacheDuration: Required value/);
  }));
