/**
 * The subPath escape (CVE-2017-1002101, CVE-2021-25741) against the real agent and containerd:
 * a pod plants a symlink in its emptyDir and mounts it with subPath. Every variant must leave the
 * host unreached: an absolute link (`ln -s / x`), a relative `../` chain, and a directory the
 * running container swaps for a link to / before it restarts. The container is not started
 * (CreateContainerConfigError naming the subPath), nothing is written on the host, and the
 * other pods keep running. Normal subPaths (a directory, a single file, subPathExpr with the
 * downward API) still work, and the binds go when the pod goes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { mountsUnder } from '../../src/volume/mount.js';
import { TEST_IMAGES } from '../support/containerd.js';
import { agentTestContext, getPods, startKubelet, waitFor, type KubeletProcess } from '../support/kubelet-process.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const RAND = Math.random().toString(36).slice(2, 7);
const NS = `e2e-subpath-${MODE}-${RAND}`;
/** What an escaped container would write on the host: /tmp/<TAG>-<pod>. */
const TAG = `kts-subpath-${MODE}-${RAND}`;
let kubelet: KubeletProcess | undefined;
const { endpoint, dir, manifests } = await agentTestContext(NS, () => kubelet);
const rootDir = join(dir, 'root');

const c = (name: string, cmd: string, extra: object = {}) => ({
  name,
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', cmd],
  ...extra,
});
const forever = "trap 'exit 0' TERM; sleep 3600 & wait";

function manifest(name: string, spec: object): void {
  writeFileSync(
    join(manifests, `${name}.json`),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: { terminationGracePeriodSeconds: 1, volumes: [{ name: 'data', emptyDir: {} }], ...spec },
    }),
  );
}

/** An init container plants `link` → `to`; the app mounts it as subPath and would write the host's /tmp. */
function linkAttack(name: string, to: string): void {
  manifest(name, {
    initContainers: [c('plant', `ln -s ${to} /data/x`, { volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
    containers: [
      c('app', `echo escaped > /host/tmp/${TAG}-${name}; ${forever}`, {
        volumeMounts: [{ name: 'data', mountPath: '/host', subPath: 'x' }],
      }),
    ],
  });
}

const pod = async (name: string): Promise<Pod | undefined> =>
  (await getPods(kubelet!)).find((p) => p.metadata?.name === `${name}-e2e-node`);
const appState = (p: Pod | undefined) => p?.status?.containerStatuses?.find((s) => s.name === 'app');

async function refused(name: string, timeoutMs = 60_000): Promise<string> {
  return waitFor(
    `${name}: app refused with CreateContainerConfigError`,
    timeoutMs,
    async () => {
      const w = appState(await pod(name))?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' ? (w.message ?? '') : undefined;
    },
    250,
  );
}

test('normal subPaths work: a directory, a single file, subPathExpr from the downward API', async () => {
  manifest('normal', {
    initContainers: [
      c('seed', 'mkdir -p /data/conf && echo setting=1 > /data/conf/app.conf', {
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      }),
    ],
    containers: [
      c('app', `cat /etc/app.conf > /out/copy && touch /named/here && ${forever}`, {
        env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        volumeMounts: [
          { name: 'data', mountPath: '/etc/app.conf', subPath: 'conf/app.conf' },
          { name: 'data', mountPath: '/out', subPath: 'out/dir' },
          { name: 'data', mountPath: '/named', subPathExpr: '$(POD_NAME)' },
        ],
      }),
    ],
  });
  linkAttack('abs', '/');
  linkAttack('rel', '../../../../../../../../../../..');
  // Runs once with x a directory, swaps it for a link to / and exits: the restart must be refused.
  manifest('swap', {
    initContainers: [c('seed', 'mkdir /data/x', { volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
    containers: [
      c(
        'app',
        `if [ -L /all/x ]; then echo escaped > /sub/tmp/${TAG}-swap; ${forever}; fi; echo first > /sub/ran; rm -rf /all/x; ln -s / /all/x; exit 1`,
        {
          volumeMounts: [
            { name: 'data', mountPath: '/all' },
            { name: 'data', mountPath: '/sub', subPath: 'x' },
          ],
        },
      ),
    ],
  });
  kubelet = startKubelet({ dir, manifests, endpoint });
  const p = await waitFor(
    'normal running',
    90_000,
    async () => {
      const x = await pod('normal');
      return appState(x)?.state?.running ? x : undefined;
    },
    250,
  );
  const data = join(rootDir, 'pods', p.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', 'data');
  await waitFor(
    'the app wrote through its subPaths',
    30_000,
    () =>
      existsSync(join(data, 'out', 'dir', 'copy')) && existsSync(join(data, 'normal-e2e-node', 'here'))
        ? true
        : undefined,
    250,
  );
  assert.equal(
    readFileSync(join(data, 'out', 'dir', 'copy'), 'utf8'),
    'setting=1\n',
    'the file subPath showed the file',
  );
  const binds = await mountsUnder(join(rootDir, 'pods', p.metadata!.uid!, 'volume-subpaths'));
  assert.equal(binds.length, 3, `one bind per subPath mount: ${binds.join(', ')}`);
});

test('an absolute link and a ../ chain never reach the host', async () => {
  for (const name of ['abs', 'rel']) {
    const message = await refused(name);
    assert.match(message, /subPath "x" resolves to .* outside the volume/);
    assert.equal(appState(await pod(name))?.restartCount ?? 0, 0);
  }
});

test('a directory swapped for a link to / while the pod runs is refused at the restart', async () => {
  const message = await refused('swap', 90_000);
  assert.match(message, /subPath "x" resolves to \/, outside the volume/);
  assert.equal(appState(await pod('swap'))?.lastState?.terminated?.exitCode, 1, 'it ran once, then was refused');
  assert.ok(!existsSync('/ran'), 'nothing written at the host root');
});

test('nothing escaped, the good pod kept its container, and its binds go with it', async () => {
  for (const name of ['abs', 'rel', 'swap'])
    assert.ok(!existsSync(`/tmp/${TAG}-${name}`), `${name} wrote nothing on the host`);
  const p = (await pod('normal'))!;
  const uid = p.metadata!.uid!;
  const id = appState(p)?.containerID;
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal(appState(await pod('normal'))?.containerID, id, 'the good pod kept its container');
  unlinkSync(join(manifests, 'normal.json'));
  await waitFor(
    "the pod's subPath binds removed",
    60_000,
    async () =>
      (await mountsUnder(join(rootDir, 'pods', uid))).length === 0 &&
      !existsSync(join(rootDir, 'pods', uid, 'volume-subpaths'))
        ? true
        : undefined,
    250,
  );
});

process.on('exit', () => {
  for (const name of ['abs', 'rel', 'swap']) rmSync(`/tmp/${TAG}-${name}`, { force: true });
});
