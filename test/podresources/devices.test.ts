/**
 * The device manager as DevicesProvider: upstream pkg/kubelet/apis/podresources
 * containerDevicesFromResourceDeviceInstances (server_v1_test.go TestListPodResourcesV1's
 * devices: one ContainerDevices per device ID, topology only with NUMA nodes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerDevicesOf, type ContainerDevices } from '../../src/podresources/index.js';
import type { ResourceDeviceInstances } from '../../src/devicemanager/index.js';

test('one entry per device ID, resources in name order, topology only with NUMA nodes', () => {
  const cases: Array<{ name: string; in: ResourceDeviceInstances; want: ContainerDevices[] }> = [
    { name: 'no devices', in: {}, want: [] },
    {
      name: 'two devices of one resource, no topology',
      in: { 'example.com/dev': { d0: { numaNodes: [] }, d1: { numaNodes: [] } } },
      want: [
        { resourceName: 'example.com/dev', deviceIds: ['d0'] },
        { resourceName: 'example.com/dev', deviceIds: ['d1'] },
      ],
    },
    {
      name: 'a device with a NUMA node',
      in: { 'b.com/x': { x: { numaNodes: [1] } }, 'a.com/y': { y: { numaNodes: [] } } },
      want: [
        { resourceName: 'a.com/y', deviceIds: ['y'] },
        { resourceName: 'b.com/x', deviceIds: ['x'], topology: { nodes: [{ ID: 1 }] } },
      ],
    },
  ];
  for (const c of cases) assert.deepEqual(containerDevicesOf(c.in), c.want, c.name);
});
