/**
 * Image pulls from a real registry on loopback through the ImageManager: pull policies, a
 * missing image (ErrImagePull with the registry's message, then ImagePullBackOff), and a registry
 * with htpasswd auth, pulled with and without pull secrets given to ensureImageExists directly
 * (private-registry.test.ts reads them from the secret cache through the agent).
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { connectRuntime } from '../../src/cri/index.js';
import type { ImageService, PodSandboxConfig } from '../../src/cri/types.js';
import { ContainerStartError } from '../../src/errors.js';
import { createImageManager, type PullSecret } from '../../src/images/index.js';
import { removeTestPods, runtimeEndpoint, uniqueName } from '../support/containerd.js';
import { getPods, makeKubeletDirs, startKubelet, stopKubelet, waitFor } from '../support/kubelet-process.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { makeVariantImage } from '../support/variant-images.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startRegistry, type TestRegistry } from '../support/registry.js';
import { testTempDir } from '../support/temp-dir.js';

const endpoint = await runtimeEndpoint();
const { images, runtime } = connectRuntime(endpoint);
const RUN = uniqueName('reg');
let open: TestRegistry;
let secured: TestRegistry;
const pulled: string[] = [];
const cleanup: Array<() => void> = [];
let pulls = 0;
const counting: ImageService = new Proxy(images, {
  get(target, prop, recv) {
    if (prop === 'pullImage') return (...a: Parameters<ImageService['pullImage']>) => (pulls++, target.pullImage(...a));
    return Reflect.get(target, prop, recv);
  },
});

before(async () => {
  // Variants with their own image ids: removing a pulled image (CRI RemoveImage removes every
  // reference of its id) must not take the shared busybox image with it.
  const work = testTempDir('kts-reg-img-');
  cleanup.push(() => rmSync(work, { recursive: true, force: true }));
  open = await startRegistry({ endpoint });
  secured = await startRegistry({ endpoint, auth: { username: 'kts', password: 'secret-pw' } });
  await open.push(await makeVariantImage('x/open:latest', `${RUN}-open`, work), `kts/busybox:${RUN}`);
  await secured.push(await makeVariantImage('x/private:latest', `${RUN}-private`, work), `kts/private:${RUN}`);
});

after(async () => {
  for (const f of cleanup) f();
  for (const img of pulled) await images.removeImage(img).catch(() => undefined);
  await open?.stop();
  await secured?.stop();
  images.close();
  runtime.close();
});

const SANDBOX = { metadata: { name: 'x', uid: 'x', namespace: 'x', attempt: 0 } } as PodSandboxConfig;

function pod(secretNames: string[] = []): Pod {
  return {
    metadata: { name: RUN, namespace: 'kts-e2e', uid: uniqueName('uid') },
    spec: { containers: [], imagePullSecrets: secretNames.map((name) => ({ name })) },
  };
}
const container = (image: string, imagePullPolicy: string): Container => ({ name: 'c', image, imagePullPolicy });

async function reason(p: Promise<unknown>): Promise<{ reason: string; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ContainerStartError, String(err));
    return { reason: err.reason, message: err.message };
  }
  assert.fail('expected a ContainerStartError');
}

test('pull policies against the loopback registry: IfNotPresent pulls once, Always every time, Never refuses', async () => {
  const puller = createImageManager({ images: counting, pullBackOff: { initialMs: 1000, maxMs: 10_000 } });
  const image = `${open.host}/kts/busybox:${RUN}`;
  pulled.push(image);
  const p = pod();
  assert.equal(
    await reason(puller.ensureImageExists(p, container(image + '-absent', 'Never'), [], SANDBOX)).then((r) => r.reason),
    'ErrImageNeverPull',
  );
  const n0 = pulls;
  const ref = await puller.ensureImageExists(p, container(image, 'IfNotPresent'), [], SANDBOX);
  assert.match(ref, /^sha256:/);
  assert.equal(pulls, n0 + 1);
  await puller.ensureImageExists(p, container(image, 'IfNotPresent'), [], SANDBOX);
  assert.equal(pulls, n0 + 1, 'present: not pulled again');
  await puller.ensureImageExists(p, container(image, 'Always'), [], SANDBOX);
  assert.equal(pulls, n0 + 2, 'Always pulls again');
  assert.equal(await puller.ensureImageExists(p, container(image, 'Never'), [], SANDBOX), ref);
});

test('a missing image: ErrImagePull with the registry message, then ImagePullBackOff', async () => {
  const puller = createImageManager({ images, pullBackOff: { initialMs: 60_000, maxMs: 300_000 } });
  const p = pod();
  const image = `${open.host}/kts/busybox:no-such-tag-${RUN}`;
  const first = await reason(puller.ensureImageExists(p, container(image, 'IfNotPresent'), [], SANDBOX));
  assert.equal(first.reason, 'ErrImagePull');
  assert.match(first.message, /not found/i);
  assert.ok(first.message.includes(image), first.message);
  const second = await reason(puller.ensureImageExists(p, container(image, 'IfNotPresent'), [], SANDBOX));
  assert.equal(second.reason, 'ImagePullBackOff');
  assert.match(second.message, /Back-off pulling image/);
});

test('a registry with auth: refused without credentials, pulled with imagePullSecrets', async () => {
  const image = `${secured.host}/kts/private:${RUN}`;
  pulled.push(image);
  const dockerconfig = {
    auths: { [`http://${secured.host}`]: { auth: Buffer.from('kts:secret-pw').toString('base64') } },
  };
  const secret: PullSecret = {
    metadata: { name: 'regcred' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(dockerconfig)).toString('base64') },
  };
  const puller = createImageManager({ images, pullBackOff: { initialMs: 1, maxMs: 10 } });
  const denied = await reason(puller.ensureImageExists(pod(), container(image, 'Always'), [], SANDBOX));
  assert.equal(denied.reason, 'ErrImagePull');
  assert.match(denied.message, /401|unauthorized|authoriz/i);
  const ref = await puller.ensureImageExists(pod(['regcred']), container(image, 'Always'), [secret], SANDBOX);
  assert.match(ref, /^sha256:/);
});

test('through the agent: a pod with a missing tag shows ErrImagePull with the registry message, then ImagePullBackOff', async () => {
  const dirs = makeKubeletDirs();
  const ns = `reg-${RUN}`.slice(0, 60).toLowerCase();
  const image = `${open.host}/kts/busybox:missing-${RUN}`;
  writeFileSync(
    join(dirs.manifests, 'p.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pull', namespace: ns },
      spec: { hostNetwork: true, containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent' }] },
    }),
  );
  const k = startKubelet({ ...dirs, endpoint });
  try {
    // ErrImagePull shows for about one sync (1 s) before the back-off: every state seen is kept.
    const seen = new Map<string, string>();
    const later = await waitFor(
      'ImagePullBackOff',
      30_000,
      async () => {
        const w = (await getPods(k)).find((p) => p.metadata?.namespace === ns)?.status?.containerStatuses?.[0]?.state
          ?.waiting;
        if (w?.reason) seen.set(w.reason, w.message ?? '');
        return w?.reason === 'ImagePullBackOff' ? w : undefined;
      },
      100,
    );
    assert.match(later.message ?? '', /Back-off pulling image/);
    const log = readFileSync(k.logFile, 'utf8');
    assert.match(
      log,
      /"reason":"ErrImagePull","err":"Failed to pull image [^\n]*not found/i,
      log
        .split('\n')
        .filter((l) => l.includes('ErrImagePull'))
        .join('\n')
        .slice(0, 1500),
    );
    if (seen.has('ErrImagePull')) assert.match(seen.get('ErrImagePull')!, /not found/i);
  } finally {
    await stopKubelet(k);
    await removeTestPods(runtime, { namespace: ns });
    rmSync(dirs.dir, { recursive: true, force: true });
  }
});
