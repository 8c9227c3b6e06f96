/**
 * CRI container events on the runtimes users run: containerd 1.7 and 2.x implement
 * GetContainerEvents, so the agent's event trigger must be in use there (log line, and
 * kubelet_evented_pleg_connection_success_count); containerd 1.6 answers Unimplemented, and the
 * agent says once that it relies on relists and cgroup exits. On every runtime a container's
 * exit is seen and the container restarted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeRelease, TEST_IMAGES } from '../support/containerd.js';
import {
  agentTestContext,
  getPods,
  httpGet,
  startKubelet,
  waitFor,
  type KubeletProcess,
} from '../support/kubelet-process.js';

const MODE = process.env.KUBELET_TS_NATIVE === '0' ? 'ts' : 'native';
const NS = `e2e-crievents-${MODE}-${Math.random().toString(36).slice(2, 7)}`;
let kubelet: KubeletProcess | undefined;
const { endpoint, runtime, dir, manifests } = await agentTestContext(NS, () => kubelet);

test('CRI events are used where the runtime has them, the fallback is said where it has not', async () => {
  const [major, minor] = await runtimeRelease(runtime);
  const hasEvents = major > 1 || minor >= 7;
  writeFileSync(
    join(manifests, 'blink.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'blink', namespace: NS },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: TEST_IMAGES.busybox,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'sleep 2; exit 3'],
          },
        ],
      },
    }),
  );
  kubelet = startKubelet({ dir, manifests, endpoint });
  await waitFor(
    'the container exited and was restarted',
    90_000,
    async () => {
      const p = (await getPods(kubelet!)).find((x) => x.metadata?.name === 'blink-e2e-node');
      return (p?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? true : undefined;
    },
    250,
  );
  const log = readFileSync(kubelet.logFile, 'utf8');
  const metrics = (await httpGet(kubelet.readOnlyPort, '/metrics')).body;
  const success = Number(/^kubelet_evented_pleg_connection_success_count(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1] ?? 0);
  if (hasEvents) {
    assert.match(log, /CRI container events stream active/, `containerd ${major}.${minor} offers GetContainerEvents`);
    assert.ok(success >= 1, `kubelet_evented_pleg_connection_success_count ${success}`);
  } else {
    assert.match(
      log,
      /Runtime does not offer GetContainerEvents; relying on the periodic relist and cgroup exit events/,
    );
    assert.equal(success, 0);
  }
});
