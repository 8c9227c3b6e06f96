/**
 * The cgroup driver comes from the runtime where it can say (CRI RuntimeConfig, upstream
 * KubeletCgroupDriverFromCRI): containerd 2.x answers, and its driver wins over cgroupDriver;
 * containerd 1.6 and 1.7 answer Unimplemented, the configured driver is used and
 * kubelet_cri_losing_support says the runtime is behind. The test runtime runs runc with cgroupfs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeRelease, TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  httpGet,
  startKubelet,
  stopKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const NS = `e2e-cgdriver-${MODE}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);
const LOSING = /^kubelet_cri_losing_support\{version="1\.36\.0"\} 1$/m;
// A node whose PID 1 is systemd would let a systemd-driver agent start whatever the runtime says.
const hostSystemd = existsSync('/run/systemd/private') || existsSync('/run/dbus/system_bus_socket');

function podManifest(): void {
  writeFileSync(
    join(manifests, 'drv.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'drv', namespace: NS },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'c', image: TEST_IMAGES.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] },
        ],
      },
    }),
  );
}

async function running(k: KubeletProcess): Promise<true | undefined> {
  const p = (await getPods(k)).find((x) => x.metadata?.name === 'drv-e2e-node');
  return p?.status?.containerStatuses?.[0]?.state?.running ? true : undefined;
}

test(
  "cgroupDriver: systemd on a cgroupfs runtime: the runtime's driver wins where it has RuntimeConfig, start-up fails clearly where not",
  { timeout: 180_000 },
  async () => {
    const [major] = await runtimeRelease(runtime);
    podManifest();
    kubelet = startKubelet({ dir, manifests, endpoint, extraConfig: ['cgroupDriver: systemd'] });
    if (major >= 2) {
      await waitFor('the pod running under the cgroupfs driver', 90_000, () => running(kubelet!), 250);
      const log = readFileSync(kubelet.logFile, 'utf8');
      assert.match(
        log,
        /"msg":"Using cgroup driver setting received from the CRI runtime".*"cgroupDriver":"cgroupfs","configured":"systemd"/,
      );
      assert.doesNotMatch((await httpGet(kubelet.readOnlyPort, '/metrics')).body, /kubelet_cri_losing_support\{/);
    } else if (!hostSystemd) {
      const k = kubelet;
      const code = await waitFor('the agent refusing to start', 60_000, () => k.child.exitCode ?? undefined, 100);
      kubelet = undefined;
      assert.notEqual(code, 0);
      const log = readFileSync(k.logFile, 'utf8');
      assert.match(log, /does not implement RuntimeConfig/);
      assert.match(log, /"msg":"Failed to start".*"code":"KTS_ERR_SYSTEMD_UNAVAILABLE"/);
      assert.match(log, /cgroupDriver is \\?"systemd\\?" but systemd's manager cannot be reached/);
    }
    if (kubelet) await stopKubelet(kubelet);
    kubelet = undefined;
  },
);

test(
  'the default cgroupfs: kubelet_cri_losing_support only where the runtime has no RuntimeConfig',
  { timeout: 180_000 },
  async () => {
    const [major] = await runtimeRelease(runtime);
    podManifest();
    kubelet = startKubelet({ dir, manifests, endpoint });
    await waitFor('the pod running', 90_000, () => running(kubelet!), 250);
    const metrics = (await httpGet(kubelet.readOnlyPort, '/metrics')).body;
    const log = readFileSync(kubelet.logFile, 'utf8');
    if (major >= 2) {
      assert.doesNotMatch(metrics, /kubelet_cri_losing_support\{/);
      assert.match(log, /Using cgroup driver setting received from the CRI runtime/);
    } else {
      assert.match(metrics, LOSING);
      assert.match(
        log,
        /Using the cgroupDriver of the kubelet config: the CRI runtime should be updated to support RuntimeConfig/,
      );
    }
  },
);
