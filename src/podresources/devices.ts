/**
 * The device manager as the pod resources API's DevicesProvider (upstream
 * containerDevicesFromResourceDeviceInstances): one ContainerDevices per device ID, with a
 * topology only when the device has NUMA nodes (ours have none).
 */
import type { DeviceManager, ResourceDeviceInstances } from '../devicemanager/index.js';
import type { ContainerDevices, DevicesProvider } from './types.js';

export function containerDevicesOf(instances: ResourceDeviceInstances): ContainerDevices[] {
  const out: ContainerDevices[] = [];
  for (const resourceName of Object.keys(instances).sort()) {
    for (const [id, dev] of Object.entries(instances[resourceName] ?? {})) {
      const nodes = dev.numaNodes.map((n) => ({ ID: n }));
      out.push({ resourceName, deviceIds: [id], ...(nodes.length > 0 ? { topology: { nodes } } : {}) });
    }
  }
  return out;
}

export function devicesProvider(
  dm: Pick<DeviceManager, 'updateAllocatedDevices' | 'getDevices' | 'getAllocatableDevices'>,
): DevicesProvider {
  return {
    updateAllocatedDevices: () => dm.updateAllocatedDevices(),
    getDevices: (podUid, containerName) => containerDevicesOf(dm.getDevices(podUid, containerName)),
    getAllocatableDevices: () => containerDevicesOf(dm.getAllocatableDevices()),
  };
}
