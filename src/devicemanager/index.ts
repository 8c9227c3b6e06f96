/**
 * The device manager (upstream pkg/kubelet/cm/devicemanager): device plugins register on
 * <root-dir>/device-plugins/kubelet.sock (or through plugins_registry as type DevicePlugin),
 * advertise devices for an extended resource, and the manager allocates them to containers,
 * reports them to node status and keeps the allocations in an upstream-compatible checkpoint.
 */
import { ManagerImpl, type DeviceManagerOptions } from './manager.js';
import type { DeviceManager } from './types.js';

export type {
  DeviceCapacity,
  DeviceInstance,
  DeviceManager,
  DeviceManagerStartOptions,
  DeviceRunContainerOptions,
  ResourceDeviceInstances,
} from './types.js';
export type { DeviceManagerOptions } from './manager.js';
export { CHECKPOINT_FILE, DEVICE_PLUGINS_DIR, KUBELET_SOCKET } from './constants.js';
export { ExtendedResources, type ExtendedResourceCounts } from './extended-resources.js';

/** A device manager over <rootDir>/device-plugins; call start() to serve registration. */
export function createDeviceManager(opts: DeviceManagerOptions): DeviceManager {
  return new ManagerImpl(opts);
}
