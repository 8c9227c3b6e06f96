/**
 * The pod resources API v1 (kubelet/pkg/apis/podresources/v1) as proto-loader gives it
 * (camelCase fields), and what the server asks of the rest of the agent: upstream's
 * PodResourcesProviders, trimmed to what kubelet-ts has. There is no CPU or memory manager (the
 * `none` policies) and no DRA, so cpu_ids, memory and dynamic_resources are always empty.
 */
import type { Pod } from '../api/types.js';

export interface NumaNode {
  /** int64 on the wire; decoded as a decimal string. */
  ID: number | string;
}

export interface TopologyInfo {
  nodes: NumaNode[];
}

/** One device (upstream sends one entry per device ID) of one resource. */
export interface ContainerDevices {
  resourceName: string;
  deviceIds: string[];
  /** Only set when the device has NUMA nodes; kubelet-ts's devices have none. */
  topology?: TopologyInfo;
}

export interface ContainerResources {
  name: string;
  devices: ContainerDevices[];
  cpuIds: string[];
  memory: unknown[];
  dynamicResources: unknown[];
}

export interface PodResources {
  name: string;
  namespace: string;
  containers: ContainerResources[];
}

/** Upstream PodsProvider: the pods the API reports. */
export interface PodsProvider {
  /** List reports these (upstream GetActivePods: admitted, not yet terminated). */
  activePods(): Pod[];
  /** Get looks a pod up here: the pod manager's pods, active or not (upstream GetPodByName). */
  podByName(namespace: string, name: string): Pod | undefined;
}

/** Upstream DevicesProvider: the device manager's view, implemented by src/devicemanager. */
export interface DevicesProvider {
  /** Drops the allocations of pods no longer active, before a List (upstream UpdateAllocatedDevices). */
  updateAllocatedDevices(): void;
  /** The devices allocated to one container, one entry per device ID. */
  getDevices(podUid: string, containerName: string): ContainerDevices[];
  /** Every healthy device of every resource, one entry per device ID. */
  getAllocatableDevices(): ContainerDevices[];
}

export interface PodResourcesProviders {
  pods: PodsProvider;
  /** Absent while no device manager is wired: every devices list is empty. */
  devices?: DevicesProvider;
}
