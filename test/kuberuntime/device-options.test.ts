/**
 * What device plugins give a container, in the CRI ContainerConfig: upstream
 * kubelet_pods.go GenerateRunContainerOptions (device envs before the container's own, seen by
 * $(VAR) expansion; device mounts before volume mounts) and kuberuntime_container.go
 * (devices → CRI devices, CDI names → CDI_devices, "Kubelet always overrides device plugin
 * annotations if they are conflicting").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '../../src/api/types.js';
import { generateContainerConfig } from '../../src/kuberuntime/container-config.js';
import type { DeviceRunContainerOptions } from '../../src/devicemanager/index.js';
import { configInput } from './helpers.js';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [] } } as unknown as Pod;
const c: Container = {
  name: 'c',
  image: 'busybox',
  command: ['sh', '-c', 'echo $(KTS_DEVICES)'],
  env: [
    { name: 'OWN', value: 'x' },
    { name: 'KTS_DEVICES', value: 'mine' },
  ],
};
const opts: DeviceRunContainerOptions = {
  envs: [{ name: 'KTS_DEVICES', value: 'dev0' }],
  mounts: [
    { name: '/opt/dev', containerPath: '/opt/dev', hostPath: '/var/dev', readOnly: true, selinuxRelabel: false },
  ],
  devices: [{ pathOnHost: '/dev/kts-dev0', pathInContainer: '/dev/kts0', permissions: 'rw' }],
  annotations: [
    { name: 'example.com/a', value: 'plugin' },
    { name: 'io.kubernetes.container.restartCount', value: 'plugin' },
  ],
  cdiDevices: [{ name: 'kubelet-ts.test/dev=dev0' }],
};

test('device options into the CRI config, in upstream order', async () => {
  const cfg = await generateContainerConfig({ ...configInput(pod, c), deviceOptions: opts });
  const keys = cfg.envs.map((e) => e.key);
  assert.ok(keys.indexOf('KTS_DEVICES') < keys.indexOf('OWN'), 'device envs first');
  assert.equal(cfg.envs[0]?.value, 'dev0');
  assert.deepEqual(cfg.mounts[0], { containerPath: '/opt/dev', hostPath: '/var/dev', readonly: true });
  assert.deepEqual(cfg.devices, [{ containerPath: '/dev/kts0', hostPath: '/dev/kts-dev0', permissions: 'rw' }]);
  assert.equal(cfg.annotations['example.com/a'], 'plugin');
  assert.equal(cfg.annotations['io.kubernetes.container.restartCount'], '0', "the kubelet's own keys win");
  assert.deepEqual(cfg.CDIDevices, [{ name: 'kubelet-ts.test/dev=dev0' }]);
});

test('no device options: no devices, no CDI field', async () => {
  const cfg = await generateContainerConfig(configInput(pod, c));
  assert.equal(cfg.devices, undefined);
  assert.equal(cfg.CDIDevices, undefined);
});
