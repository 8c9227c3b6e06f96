/**
 * Which devices each container holds, with the plugin's Allocate answer for them (upstream
 * cm/devicemanager/pod_devices.go): a pure table, what it gives the runtime for one container
 * (deviceRunContainerOptions), and its checkpoint form.
 */
import { log } from '../util/log.js';
import type { DevicesPerNuma, PodDevicesEntry } from './checkpoint.js';
import { NODE_WITHOUT_TOPOLOGY } from './constants.js';
import { decodeContainerResponse } from './proto.js';
import type { ContainerAllocateResponse, DeviceRunContainerOptions, ResourceDeviceInstances } from './types.js';

interface DeviceAllocateInfo {
  deviceIds: DevicesPerNuma;
  /** The response's wire bytes (written to the checkpoint as they came) and its decoded form. */
  allocResp: Buffer | null;
  resp: ContainerAllocateResponse | null;
}

/** Where an allocation belongs. */
export interface ContainerResource {
  podUid: string;
  container: string;
  resource: string;
}

/** resource name → device IDs, for reuse between a pod's containers (upstream devicesToReuse). */
export type ResourceDevices = Map<string, Set<string>>;

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every ID of a DevicesPerNUMA (a device on two NUMA nodes counts once). */
export function numaDevices(ids: DevicesPerNuma | null): Set<string> {
  const out = new Set<string>();
  for (const list of ids?.values() ?? []) for (const id of list ?? []) out.add(id);
  return out;
}

export class PodDevices {
  /** pod UID → container name → resource name → allocation. */
  private readonly devs = new Map<string, Map<string, Map<string, DeviceAllocateInfo>>>();

  pods(): Set<string> {
    return new Set(this.devs.keys());
  }

  hasPod(podUid: string): boolean {
    return this.devs.has(podUid);
  }

  /** Records an allocation; `allocResp` is the ContainerAllocateResponse's wire bytes. */
  insert(at: ContainerResource, ids: DevicesPerNuma, allocResp: Buffer | null): void {
    const resp = allocResp === null ? null : decodeContainerResponse(allocResp);
    this.insertDecoded(at.podUid, at.container, at.resource, { deviceIds: ids, allocResp, resp });
  }

  private insertDecoded(podUid: string, container: string, resource: string, info: DeviceAllocateInfo): void {
    let containers = this.devs.get(podUid);
    if (!containers) this.devs.set(podUid, (containers = new Map()));
    let resources = containers.get(container);
    if (!resources) containers.set(container, (resources = new Map()));
    resources.set(resource, info);
  }

  delete(podUids: Iterable<string>): void {
    for (const uid of podUids) this.devs.delete(uid);
  }

  /** The devices one container holds of one resource; undefined when it holds none (upstream nil). */
  containerDevices(podUid: string, container: string, resource: string): Set<string> | undefined {
    const info = this.devs.get(podUid)?.get(container)?.get(resource);
    return info ? numaDevices(info.deviceIds) : undefined;
  }

  /** Adds a (regular init) container's devices to the pod's reusable set. */
  addContainerAllocatedResources(podUid: string, container: string, reuse: ResourceDevices): void {
    for (const [resource, info] of this.devs.get(podUid)?.get(container) ?? []) {
      let set = reuse.get(resource);
      if (!set) reuse.set(resource, (set = new Set()));
      for (const id of numaDevices(info.deviceIds)) set.add(id);
    }
  }

  /** Takes a container's devices out of the pod's reusable set (they stay with it). */
  removeContainerAllocatedResources(podUid: string, container: string, reuse: ResourceDevices): void {
    for (const [resource, info] of this.devs.get(podUid)?.get(container) ?? []) {
      const set = reuse.get(resource);
      for (const id of numaDevices(info.deviceIds)) set?.delete(id);
    }
  }

  /** resource → every device allocated to some container (upstream devices()). */
  devices(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const containers of this.devs.values())
      for (const resources of containers.values())
        for (const [resource, info] of resources) {
          let set = out.get(resource);
          if (!set) out.set(resource, (set = new Set()));
          if (info.allocResp !== null) for (const id of numaDevices(info.deviceIds)) set.add(id);
        }
    return out;
  }

  /** The checkpoint entries, sorted (upstream's order is Go map order); entries without a response are left out. */
  toCheckpointData(): PodDevicesEntry[] {
    const out: PodDevicesEntry[] = [];
    for (const podUid of [...this.devs.keys()].sort(byName)) {
      const containers = this.devs.get(podUid)!;
      for (const containerName of [...containers.keys()].sort(byName)) {
        const resources = containers.get(containerName)!;
        for (const resourceName of [...resources.keys()].sort(byName)) {
          const info = resources.get(resourceName)!;
          if (info.allocResp === null) {
            log('devicemanager').warn({ podUid, containerName, resourceName }, 'Allocation response missing');
            continue;
          }
          out.push({ podUid, containerName, resourceName, deviceIds: info.deviceIds, allocResp: info.allocResp });
        }
      }
    }
    return out;
  }

  /** Loads checkpoint entries; one whose response does not decode is logged and skipped, as upstream. */
  fromCheckpointData(entries: readonly PodDevicesEntry[]): void {
    for (const e of entries) {
      try {
        const resp = e.allocResp === null ? null : decodeContainerResponse(e.allocResp);
        const info = { deviceIds: e.deviceIds ?? new Map(), allocResp: e.allocResp, resp };
        this.insertDecoded(e.podUid, e.containerName, e.resourceName, info);
      } catch (err) {
        log('devicemanager').error(
          { podUid: e.podUid, containerName: e.containerName, err: (err as Error).message },
          'Cannot decode the checkpointed allocation response; entry skipped',
        );
      }
    }
  }

  /** One container's devices with their NUMA nodes (upstream getContainerDevices). */
  getContainerDevices(podUid: string, container: string): ResourceDeviceInstances {
    const out: ResourceDeviceInstances = {};
    for (const [resource, info] of this.devs.get(podUid)?.get(container) ?? []) {
      const devices: Record<string, { numaNodes: number[] }> = {};
      for (const [numa, ids] of info.deviceIds)
        for (const id of ids ?? []) {
          const d = (devices[id] ??= { numaNodes: [] });
          if (numa !== NODE_WITHOUT_TOPOLOGY) d.numaNodes.push(numa);
        }
      if (Object.keys(devices).length > 0) out[resource] = devices;
    }
    return out;
  }

  /**
   * Merges the cached responses of one container's resources (upstream deviceRunContainerOptions):
   * envs and annotations by key, devices and mounts by container path, the first one wins and a
   * conflicting later one is logged; CDI names deduplicated. Resources are taken in name order
   * (upstream: Go map order). Undefined when the container holds no device.
   */
  deviceRunContainerOptions(podUid: string, container: string): DeviceRunContainerOptions | undefined {
    const resources = this.devs.get(podUid)?.get(container);
    if (!resources) return undefined;
    const merge = new OptionsMerger({ podUid, container });
    for (const resource of [...resources.keys()].sort(byName)) {
      const resp = resources.get(resource)!.resp;
      if (resp) merge.add(resp);
    }
    return merge.opts;
  }
}

/** Builds DeviceRunContainerOptions from several responses, first value of a key wins. */
class OptionsMerger {
  readonly opts: DeviceRunContainerOptions = { envs: [], mounts: [], devices: [], annotations: [], cdiDevices: [] };
  private readonly envs = new Map<string, string>();
  private readonly devices = new Map<string, string>();
  private readonly mounts = new Map<string, string>();
  private readonly annotations = new Map<string, string>();
  private readonly cdi = new Set<string>();

  constructor(private readonly where: { podUid: string; container: string }) {}

  add(resp: ContainerAllocateResponse): void {
    for (const k of Object.keys(resp.envs ?? {}).sort(byName))
      if (this.claim(this.envs, 'environment variable', k, resp.envs[k]!))
        this.opts.envs.push({ name: k, value: resp.envs[k]! });
    for (const d of resp.devices ?? [])
      if (this.claim(this.devices, 'device', d.containerPath, d.hostPath))
        this.opts.devices.push({
          pathOnHost: d.hostPath,
          pathInContainer: d.containerPath,
          permissions: d.permissions,
        });
    for (const m of resp.mounts ?? [])
      if (this.claim(this.mounts, 'mount', m.containerPath, m.hostPath))
        this.opts.mounts.push({
          name: m.containerPath,
          containerPath: m.containerPath,
          hostPath: m.hostPath,
          readOnly: m.readOnly,
          selinuxRelabel: false,
        });
    for (const k of Object.keys(resp.annotations ?? {}).sort(byName))
      if (this.claim(this.annotations, 'annotation', k, resp.annotations[k]!))
        this.opts.annotations.push({ name: k, value: resp.annotations[k]! });
    for (const { name } of resp.cdiDevices ?? []) {
      if (this.cdi.has(name)) continue;
      this.cdi.add(name);
      this.opts.cdiDevices.push({ name });
    }
  }

  /** True when `key` is new; a repeat with another value is logged (upstream: error log, first kept). */
  private claim(seen: Map<string, string>, what: string, key: string, value: string): boolean {
    const had = seen.get(key);
    if (had === undefined) {
      seen.set(key, value);
      return true;
    }
    if (had !== value)
      log('devicemanager').error(
        { ...this.where, key, kept: had, dropped: value },
        `Conflicting ${what} from device plugins`,
      );
    return false;
  }
}
