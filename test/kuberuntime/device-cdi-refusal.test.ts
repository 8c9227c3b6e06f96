/**
 * CDI names from device plugins through SyncPod, against the in-memory CRI fake (ours, design
 * decision 6 of issue 31; upstream passes the names on and a runtime without CDI drops them):
 * a runtime that does not apply CDI refuses the container with CreateContainerConfigError and
 * no CreateContainer call; a runtime with CDI gets them as CDIDevices; options without CDI names
 * never ask the runtime.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, beforeEach, test } from 'node:test';
import type { DeviceRunContainerOptions } from '../../src/devicemanager/index.js';
import { createRecorder, type Recorder } from '../../src/events/index.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { container, fakeRuntimeManager, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
let fake: FakeRuntimeService;
let recorder: Recorder;

const options = (cdi: string[]): DeviceRunContainerOptions => ({
  envs: [{ name: 'KTS_DEVICES', value: 'd0' }],
  mounts: [],
  devices: [{ pathOnHost: '/dev/null', pathInContainer: '/dev/kts0', permissions: 'rw' }],
  annotations: [],
  cdiDevices: cdi.map((name) => ({ name })),
});

async function sync(cdi: string[]) {
  const pod = makePod({ containers: [container('a')] });
  const rt = fakeRuntimeManager(fake, dir, recorder, { deviceOptions: async () => options(cdi) });
  const status = await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!);
  return rt.syncPod(pod, status);
}

const created = () => [...fake.containers.values()].map((c) => c.config);

before(() => {
  dir = testTempDir('device-cdi-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  recorder = createRecorder();
});

test('a runtime without CDI: CreateContainerConfigError naming the devices, nothing created', async () => {
  (fake as { cdiSupported?: () => Promise<boolean> }).cdiSupported = async () => false;
  const result = await sync(['kubelet-ts.test/dev=d0']);
  const waiting = result.waiting.get('a');
  assert.equal(waiting?.reason, 'CreateContainerConfigError');
  assert.match(
    waiting?.message ?? '',
    /CDI devices kubelet-ts\.test\/dev=d0, but the container runtime does not apply/,
  );
  assert.deepEqual(created(), []);
});

test('a runtime that cannot say (no cdiSupported) counts as one without CDI', async () => {
  const result = await sync(['kubelet-ts.test/dev=d0']);
  assert.equal(result.waiting.get('a')?.reason, 'CreateContainerConfigError');
  assert.deepEqual(created(), []);
});

test('a runtime with CDI gets the names as CDIDevices, next to the device', async () => {
  let asked = 0;
  (fake as { cdiSupported?: () => Promise<boolean> }).cdiSupported = async () => (asked++, true);
  const result = await sync(['kubelet-ts.test/dev=d0']);
  assert.equal(result.waiting.get('a'), undefined);
  const [config] = created();
  assert.deepEqual(config?.CDIDevices, [{ name: 'kubelet-ts.test/dev=d0' }]);
  assert.deepEqual(config?.devices, [{ containerPath: '/dev/kts0', hostPath: '/dev/null', permissions: 'rw' }]);
  assert.equal(asked, 1);
});

test('no CDI names: the runtime is not asked, the container is created', async () => {
  let asked = 0;
  (fake as { cdiSupported?: () => Promise<boolean> }).cdiSupported = async () => (asked++, false);
  const result = await sync([]);
  assert.equal(result.waiting.get('a'), undefined);
  assert.equal(created().length, 1);
  assert.equal(created()[0]?.CDIDevices, undefined);
  assert.equal(asked, 0);
});
