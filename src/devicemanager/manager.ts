/**
 * The device manager (upstream cm/devicemanager/manager.go ManagerImpl): keeps each resource's
 * healthy and unhealthy devices from the plugins' ListAndWatch lists, allocates devices to
 * containers at admission (calling the plugin's Allocate), hands the runtime what a container
 * needs at creation, reports capacity to node status and keeps it all in the checkpoint.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import type { Container, Pod } from '../api/types.js';
import { isRestartableInitContainer, podUID } from '../api/pod.js';
import { DeviceAllocationError, DevicePluginError } from '../errors.js';
import { metrics } from '../metrics/index.js';
import { log } from '../util/log.js';
import { parseIntValue } from '../util/quantity.js';
import { devicesToAllocate, sortIds, type AllocationInput, type PreferredAllocation } from './allocator.js';
import { readCheckpointFile, writeCheckpointFile, type CheckpointData } from './checkpoint.js';
import {
  CHECKPOINT_FILE,
  DEVICE_PLUGINS_DIR,
  ENDPOINT_STOP_GRACE_MS,
  HEALTHY,
  NODE_WITHOUT_TOPOLOGY,
} from './constants.js';
import { Endpoint, type EndpointTiming } from './endpoint.js';
import type { PluginClient } from './plugin-client.js';
import { PodDevices, type ResourceDevices } from './pod-devices.js';
import { RegistrationServer, type ClientHandler } from './registration-server.js';
import type {
  Device,
  DeviceCapacity,
  DeviceManager,
  DeviceManagerStartOptions,
  DevicePluginOptions,
  DeviceRunContainerOptions,
  ResourceDeviceInstances,
} from './types.js';

export interface DeviceManagerOptions {
  /** The kubelet's --root-dir; the manager works in <rootDir>/device-plugins. */
  rootDir: string;
  /** Clock (milliseconds since the epoch), for tests. */
  now?: () => number;
  /** endpointStopGracePeriod (default 5 min), shortened by tests. */
  endpointStopGraceMs?: number;
  /** Deadline of Allocate and GetPreferredAllocation (default 30 s). */
  rpcTimeoutMs?: number;
  /** Deadline of the blocking dial at registration (default 10 s). */
  dialTimeoutMs?: number;
  /**
   * Called after a plugin's device list or its disconnection changed the devices (a prompt node
   * status update; upstream's node status waits for its next pass). Default: none.
   */
  onDevicesChanged?: () => void;
}

const limitsOf = (c: Container): Record<string, string | number> =>
  (c.resources?.limits ?? {}) as Record<string, string | number>;

export class ManagerImpl implements DeviceManager, ClientHandler {
  readonly dir: string;
  private readonly timing: EndpointTiming;
  private readonly server: RegistrationServer;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly healthyDevices = new Map<string, Set<string>>();
  private readonly unhealthyDevices = new Map<string, Set<string>>();
  private readonly allDevices = new Map<string, Map<string, Device>>();
  private allocatedDevices = new Map<string, Set<string>>();
  private readonly podDevices = new PodDevices();
  /** The devices of the pod being admitted that its later containers may reuse (one pod at a time). */
  private readonly devicesToReuse = new Map<string, ResourceDevices>();
  private activePods: () => Pod[] = () => [];
  private sourcesReady: () => boolean = () => true;
  private runningAtStart = new Set<string>();
  /** Allocations run one at a time: each reads and changes the sets across an RPC. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly onDevicesChanged: () => void;

  constructor(opts: DeviceManagerOptions) {
    this.onDevicesChanged = opts.onDevicesChanged ?? (() => undefined);
    this.dir = join(opts.rootDir, DEVICE_PLUGINS_DIR);
    this.timing = {
      now: opts.now ?? Date.now,
      graceMs: opts.endpointStopGraceMs ?? ENDPOINT_STOP_GRACE_MS,
      ...(opts.rpcTimeoutMs === undefined ? {} : { rpcTimeoutMs: opts.rpcTimeoutMs }),
    };
    this.server = new RegistrationServer({
      dir: this.dir,
      handler: this,
      ...(opts.dialTimeoutMs === undefined ? {} : { dialTimeoutMs: opts.dialTimeoutMs }),
    });
  }

  get pluginHandler(): RegistrationServer {
    return this.server;
  }

  /** The registration socket's path. */
  get socketPath(): string {
    return this.server.socketPath;
  }

  async start(opts: DeviceManagerStartOptions): Promise<void> {
    this.activePods = opts.activePods;
    this.sourcesReady = opts.sourcesReady;
    this.runningAtStart = new Set((opts.initialRunningContainers ?? []).map((c) => `${c.podUid}/${c.containerName}`));
    this.readCheckpoint();
    await this.server.start();
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }

  healthy(): string | undefined {
    return this.server.healthy();
  }

  // --- ClientHandler: the plugins ---

  pluginConnected(resource: string, client: PluginClient, opts: DevicePluginOptions): void {
    this.endpoints.set(resource, new Endpoint(resource, client, opts, this.timing));
    log('devicemanager').info({ resource, socketPath: client.socketPath }, 'Device plugin connected');
  }

  /** A full list replaces the resource's devices (upstream genericDeviceUpdateCallback), then the checkpoint. */
  pluginListAndWatch(resource: string, client: PluginClient, devices: Device[]): void {
    if (this.endpoints.get(resource)?.client !== client) return; // a replaced plugin's late message
    const healthy = new Set<string>();
    const unhealthy = new Set<string>();
    const all = new Map<string, Device>();
    for (const d of devices) {
      all.set(d.ID, d);
      (d.health === HEALTHY ? healthy : unhealthy).add(d.ID);
    }
    this.healthyDevices.set(resource, healthy);
    this.unhealthyDevices.set(resource, unhealthy);
    this.allDevices.set(resource, all);
    this.writeCheckpoint();
    log('devicemanager').info(
      { resource, total: devices.length, healthy: healthy.size },
      'Processed device updates for resource',
    );
    this.onDevicesChanged();
  }

  /** Every device turns unhealthy and the endpoint stops; only for the plugin that serves the resource now. */
  pluginDisconnected(resource: string, client: PluginClient): void {
    const ep = this.endpoints.get(resource);
    if (!ep || ep.client !== client) return;
    const unhealthy = this.unhealthyDevices.get(resource) ?? new Set<string>();
    for (const id of this.healthyDevices.get(resource) ?? []) unhealthy.add(id);
    this.unhealthyDevices.set(resource, unhealthy);
    this.healthyDevices.set(resource, new Set());
    ep.setStopTime(this.timing.now());
    log('devicemanager').info({ resource }, 'Endpoint became unhealthy');
    this.onDevicesChanged();
  }

  // --- node status ---

  getCapacity(): DeviceCapacity {
    const capacity: Record<string, number> = {};
    const allocatable: Record<string, number> = {};
    const removed = new Set<string>();
    for (const [resource, devices] of this.healthyDevices) {
      if (this.dropIfExpired(resource, this.healthyDevices)) removed.add(resource);
      else capacity[resource] = allocatable[resource] = devices.size;
    }
    for (const [resource, devices] of this.unhealthyDevices) {
      if (this.dropIfExpired(resource, this.unhealthyDevices)) removed.add(resource);
      else capacity[resource] = (capacity[resource] ?? 0) + devices.size;
    }
    if (removed.size > 0) this.writeCheckpoint();
    return { capacity, allocatable, removed: [...removed].sort() };
  }

  private dropIfExpired(resource: string, from: Map<string, Set<string>>): boolean {
    const ep = this.endpoints.get(resource);
    if (ep && !ep.stopGracePeriodExpired()) return false;
    this.endpoints.delete(resource);
    from.delete(resource);
    return true;
  }

  shouldResetExtendedResourceCapacity(): boolean {
    return !existsSync(join(this.dir, CHECKPOINT_FILE));
  }

  isDevicePluginResource(resource: string): boolean {
    return this.healthyDevices.has(resource) || this.allocatedDevices.has(resource);
  }

  sanitizeAllocatable(pod: Pod, allocatable: Readonly<Record<string, number>>): Record<string, number> {
    const out = { ...allocatable };
    if (!this.podDevices.hasPod(podUID(pod))) return out;
    for (const [resource, devices] of this.allocatedDevices)
      if ((out[resource] ?? -1) < devices.size) out[resource] = devices.size;
    return out;
  }

  // --- admission ---

  allocate(pod: Pod, container: Container): Promise<void> {
    const run = this.queue.then(() => this.allocateNow(pod, container));
    this.queue = run.catch(() => {});
    return run;
  }

  private async allocateNow(pod: Pod, container: Container): Promise<void> {
    const uid = podUID(pod);
    for (const key of [...this.devicesToReuse.keys()]) if (key !== uid) this.devicesToReuse.delete(key);
    let reuse = this.devicesToReuse.get(uid);
    if (!reuse) this.devicesToReuse.set(uid, (reuse = new Map()));
    await this.allocateContainerResources(pod, container, reuse);
    const init = pod.spec?.initContainers?.find((c) => c.name === container.name);
    if (init && !isRestartableInitContainer(init))
      this.podDevices.addContainerAllocatedResources(uid, container.name, reuse);
    else this.podDevices.removeContainerAllocatedResources(uid, container.name, reuse);
  }

  private async allocateContainerResources(pod: Pod, container: Container, reuse: ResourceDevices): Promise<void> {
    let updated = false;
    let wrote = false;
    for (const [resource, quantity] of Object.entries(limitsOf(container))) {
      if (!this.isDevicePluginResource(resource)) continue;
      if (!updated) {
        this.updateAllocatedDevices();
        updated = true;
      }
      const input = this.allocationInput(pod, container, resource, parseIntValue(quantity));
      const devs = await devicesToAllocate(
        { ...input, reusable: reuse.get(resource) ?? new Set() },
        this.preferred(resource),
      );
      if (!devs || devs.size === 0) continue;
      await this.callAllocate(podUID(pod), container.name, resource, devs);
      wrote = true;
    }
    if (wrote) this.writeCheckpoint();
  }

  private allocationInput(pod: Pod, container: Container, resource: string, required: number): AllocationInput {
    const uid = podUID(pod);
    return {
      podUid: uid,
      containerName: container.name,
      resource,
      required,
      held: this.podDevices.containerDevices(uid, container.name, resource),
      healthy: this.healthyDevices.get(resource),
      inUse: this.allocatedDevices.get(resource) ?? new Set(),
      reusable: new Set(),
      runningAtStart: this.runningAtStart.has(`${uid}/${container.name}`),
      sourcesReady: this.sourcesReady(),
    };
  }

  /** GetPreferredAllocation of the resource's plugin, when it advertises it. */
  private preferred(resource: string): PreferredAllocation | undefined {
    const ep = this.endpoints.get(resource);
    if (!ep?.opts?.getPreferredAllocationAvailable) return undefined;
    return async (available, mustInclude, size) => {
      try {
        return await ep.getPreferredAllocation(available, mustInclude, size);
      } catch (err) {
        throw new DeviceAllocationError(
          `device plugin GetPreferredAllocation rpc failed with err: ${(err as Error).message}`,
          { cause: err },
        );
      }
    };
  }

  /** Marks the devices taken, calls Allocate, records the answer; on failure the marks are undone. */
  private async callAllocate(uid: string, containerName: string, resource: string, devs: Set<string>): Promise<void> {
    const inUse = this.allocatedDevices.get(resource) ?? new Set<string>();
    for (const id of devs) inUse.add(id);
    this.allocatedDevices.set(resource, inUse);
    const ep = this.endpoints.get(resource);
    try {
      if (!ep) throw new DeviceAllocationError(`unknown Device Plugin ${resource}`);
      const end = metrics.devicePluginAllocDuration.startTimer({ resource_name: resource });
      const resp = await ep.allocate(sortIds(devs)).finally(() => end());
      const first = resp.containerResponses[0];
      if (!first) throw new DeviceAllocationError(`no containers return in allocation response ${resource}`);
      this.podDevices.insert({ podUid: uid, container: containerName, resource }, this.withNuma(resource, devs), first);
    } catch (err) {
      this.allocatedDevices = this.podDevices.devices();
      throw err;
    }
  }

  /** The chosen devices by NUMA node, from their topology (-1 without). */
  private withNuma(resource: string, devs: Set<string>): Map<number, string[]> {
    const out = new Map<number, string[]>();
    const add = (numa: number, id: string): void => void out.set(numa, [...(out.get(numa) ?? []), id]);
    for (const id of sortIds(devs)) {
      const nodes = this.allDevices.get(resource)?.get(id)?.topology?.nodes ?? [];
      if (nodes.length === 0) add(NODE_WITHOUT_TOPOLOGY, id);
      for (const n of nodes) add(Number(n.ID), id);
    }
    return out;
  }

  updateAllocatedDevices(): void {
    const active = this.activePods();
    if (!this.sourcesReady()) return;
    const gone = this.podDevices.pods();
    for (const p of active) gone.delete(podUID(p));
    if (gone.size === 0) return;
    log('devicemanager').info({ podUids: [...gone].sort() }, 'Pods to be removed');
    this.podDevices.delete(gone);
    this.allocatedDevices = this.podDevices.devices();
  }

  // --- container creation ---

  async deviceRunContainerOptions(pod: Pod, container: Container): Promise<DeviceRunContainerOptions | undefined> {
    const uid = podUID(pod);
    let reallocate = false;
    for (const [resource, quantity] of Object.entries(limitsOf(container))) {
      if (!this.isDevicePluginResource(resource) || parseIntValue(quantity) === 0) continue;
      await this.callPreStartContainerIfNeeded(uid, container.name, resource);
      if (!this.activePods().some((p) => podUID(p) === uid)) continue;
      if (this.podDevices.containerDevices(uid, container.name, resource) === undefined) reallocate = true;
    }
    if (reallocate) {
      log('devicemanager').info({ podUid: uid, container: container.name }, 'Re-allocating device plugin resources');
      await this.allocate(pod, container);
    }
    return this.podDevices.deviceRunContainerOptions(uid, container.name);
  }

  private async callPreStartContainerIfNeeded(uid: string, containerName: string, resource: string): Promise<void> {
    const ep = this.endpoints.get(resource);
    if (!ep) throw new DevicePluginError(`endpoint not found in cache for a registered resource: ${resource}`);
    if (!ep.opts?.preStartRequired) return;
    const devices = this.podDevices.containerDevices(uid, containerName, resource);
    if (!devices)
      throw new DevicePluginError(
        `no devices found allocated in local cache for pod ${uid}, container ${containerName}, resource ${resource}`,
      );
    try {
      await ep.preStartContainer(sortIds(devices));
    } catch (err) {
      throw new DevicePluginError(`device plugin PreStartContainer rpc failed with err: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  // --- pod resources API ---

  getDevices(podUid: string, containerName: string): ResourceDeviceInstances {
    return this.podDevices.getContainerDevices(podUid, containerName);
  }

  getAllocatableDevices(): ResourceDeviceInstances {
    const out: ResourceDeviceInstances = {};
    for (const [resource, devices] of this.allDevices) {
      const healthy = this.healthyDevices.get(resource);
      if (!healthy) continue;
      const list: Record<string, { numaNodes: number[] }> = {};
      for (const [id, d] of devices)
        if (healthy.has(id)) list[id] = { numaNodes: (d.topology?.nodes ?? []).map((n) => Number(n.ID)) };
      out[resource] = list;
    }
    return out;
  }

  // --- checkpoint ---

  /** Restores allocations; each checkpointed resource reads 0 behind a stopped endpoint until its plugin is back. */
  private readCheckpoint(): void {
    let data: CheckpointData | undefined;
    try {
      data = readCheckpointFile(this.dir);
    } catch (err) {
      log('devicemanager').error(
        { err: (err as Error).message },
        'Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date',
      );
      return;
    }
    if (!data) return;
    this.podDevices.fromCheckpointData(data.podDeviceEntries ?? []);
    this.allocatedDevices = this.podDevices.devices();
    for (const resource of data.registeredDevices?.keys() ?? []) {
      this.healthyDevices.set(resource, new Set());
      this.unhealthyDevices.set(resource, new Set());
      this.endpoints.set(resource, new Endpoint(resource, undefined, undefined, this.timing));
    }
  }

  /** Failures are logged, as upstream: the state in memory stays right, only a restart would lose it. */
  private writeCheckpoint(): void {
    const registered = new Map([...this.healthyDevices].map(([r, ids]) => [r, sortIds(ids)]));
    const entries = this.podDevices.toCheckpointData();
    try {
      writeCheckpointFile(this.dir, {
        podDeviceEntries: entries.length > 0 ? entries : null,
        registeredDevices: registered,
      });
    } catch (err) {
      log('devicemanager').error({ err: (err as Error).message }, 'Failed to write checkpoint file');
    }
  }
}
