/**
 * The manager's view of one resource's plugin (upstream cm/devicemanager/endpoint.go): the client
 * and its options, and the time it stopped. A stopped endpoint refuses calls; its resource is
 * still reported until the grace period (5 min) is over. After an agent restart each
 * checkpointed resource gets a stopped endpoint with no client until its plugin registers again.
 */
import { DevicePluginError } from '../errors.js';
import { MESSAGES, PRE_START_TIMEOUT_MS, RPC_TIMEOUT_MS } from './constants.js';
import type { PluginClient } from './plugin-client.js';
import { containerResponseBytes } from './proto.js';
import type { DevicePluginOptions } from './types.js';

/** An Allocate answer: the first container response's wire bytes (for the checkpoint). */
export interface AllocateResult {
  containerResponses: Buffer[];
}

export interface EndpointTiming {
  /** Milliseconds since the epoch (tests move it). */
  now: () => number;
  /** endpointStopGracePeriod. */
  graceMs: number;
  /** Deadline of Allocate and GetPreferredAllocation (ours; upstream has none). */
  rpcTimeoutMs?: number;
}

export class Endpoint {
  private stopTime: number | undefined;

  constructor(
    readonly resource: string,
    /** undefined for a stopped endpoint made from the checkpoint. */
    readonly client: PluginClient | undefined,
    readonly opts: DevicePluginOptions | undefined,
    private readonly timing: EndpointTiming,
  ) {
    if (!client) this.stopTime = timing.now();
  }

  isStopped(): boolean {
    return this.stopTime !== undefined;
  }

  setStopTime(t: number): void {
    this.stopTime = t;
  }

  stopGracePeriodExpired(): boolean {
    return this.stopTime !== undefined && this.timing.now() - this.stopTime > this.timing.graceMs;
  }

  /** Allocate for one container (one ContainerAllocateRequest), keeping each response's bytes. */
  async allocate(devs: string[]): Promise<AllocateResult> {
    const client = this.live();
    const method = client.method('Allocate');
    const request = { containerRequests: [{ devicesIds: devs }] };
    const raw = await client.unary<Buffer>('Allocate', request, this.rpcTimeout(), (b) => {
      method.responseDeserialize(b); // refuses a reply that is not an AllocateResponse
      return b;
    });
    return { containerResponses: containerResponseBytes(raw) };
  }

  /** PreStartContainer with upstream's 30 s deadline. */
  async preStartContainer(devs: string[]): Promise<void> {
    await this.live().unary('PreStartContainer', { devicesIds: devs }, PRE_START_TIMEOUT_MS);
  }

  /** GetPreferredAllocation for one container: the device IDs of the first container response. */
  async getPreferredAllocation(available: string[], mustInclude: string[], size: number): Promise<string[]> {
    const request = {
      containerRequests: [{ availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size }],
    };
    const resp = await this.live().unary<{ containerResponses: Array<{ deviceIDs: string[] }> }>(
      'GetPreferredAllocation',
      request,
      this.rpcTimeout(),
    );
    return resp.containerResponses[0]?.deviceIDs ?? [];
  }

  private live(): PluginClient {
    if (this.stopTime !== undefined || !this.client)
      throw new DevicePluginError(MESSAGES.endpointStopped(this.resource));
    return this.client;
  }

  private rpcTimeout(): number {
    return this.timing.rpcTimeoutMs ?? RPC_TIMEOUT_MS;
  }
}
