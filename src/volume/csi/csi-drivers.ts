/**
 * The CSI plugin's way to its drivers (upstream csiClientGetter and the node capability checks):
 * a driver is looked up by name among the registered ones on every operation (it may have
 * re-registered on another socket), one client per endpoint, the Node capabilities asked once
 * per endpoint; and a lock per volume, so that a publish, a teardown and the orphan sweep of the
 * same driver and handle never interleave their stage / unstage decisions.
 */
import { errorMessage, VolumeError } from '../../errors.js';
import { KeyedLock } from '../../util/keyed-lock.js';
import type { CsiDrivers } from './csi-types.js';
import { CsiNodeClient, type NodeServiceCapability } from './node-client.js';

export type NodeCapabilities = ReadonlySet<NodeServiceCapability>;

/** gRPC codes after which the driver may still be doing the work (upstream isFinalError's list). */
const UNCERTAIN_CODES = new Set([1, 4, 8, 10, 14]);
const UNAVAILABLE = 14;

/** The gRPC code of a driver call's error, found along the cause chain of the errors wrapping it. */
function grpcCodeOf(err: unknown): number | undefined {
  for (let e = err as { grpcCode?: number; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.grpcCode === 'number') return e.grpcCode;
  }
  return undefined;
}

/** upstream isFinalError: the call ended and left nothing behind (undefined code: never reached). */
export function isFinalCsiError(err: unknown): boolean {
  const code = grpcCodeOf(err);
  return code !== undefined && !UNCERTAIN_CODES.has(code);
}

/** A VolumeError naming what was being done, keeping the driver's error as cause. */
export function volumeErrorFrom(what: string, err: unknown): VolumeError {
  return new VolumeError(`${what}: ${errorMessage(err)}`, { cause: err });
}

export class CsiDriverAccess {
  private readonly clients = new Map<string, CsiNodeClient>();
  private readonly capabilities = new Map<string, Promise<NodeCapabilities>>();
  private readonly locks = new KeyedLock();

  constructor(private readonly timeoutMs?: number) {}

  /** The registered driver's client; upstream's error text when it is not registered. */
  client(drivers: CsiDrivers | undefined, driver: string): CsiNodeClient {
    const registered = drivers?.get(driver);
    if (!registered) throw new VolumeError(`driver name ${driver} not found in the list of registered CSI drivers`);
    let client = this.clients.get(registered.endpoint);
    if (!client) {
      client = new CsiNodeClient(registered.endpoint, this.timeoutMs);
      this.clients.set(registered.endpoint, client);
    }
    return client;
  }

  /**
   * After a call that could not reach the driver: the endpoint's client is dropped, so the next
   * call dials afresh instead of failing fast in the old channel's reconnect back-off (a
   * restarted driver is reached on the next try), and its capabilities are asked again.
   */
  forgetIfUnreachable(client: CsiNodeClient, err: unknown): void {
    if (grpcCodeOf(err) !== UNAVAILABLE) return;
    if (this.clients.get(client.endpoint) === client) this.clients.delete(client.endpoint);
    this.capabilities.delete(client.endpoint);
    client.close();
  }

  /** NodeGetCapabilities, once per endpoint (a failure is not kept: the next call asks again). */
  nodeCapabilities(client: CsiNodeClient): Promise<NodeCapabilities> {
    let caps = this.capabilities.get(client.endpoint);
    if (!caps) {
      caps = client.nodeGetCapabilities();
      this.capabilities.set(client.endpoint, caps);
      caps.catch(() => this.capabilities.delete(client.endpoint));
    }
    return caps;
  }

  /** Runs fn after every earlier holder of key is done. */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(key, fn);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    this.capabilities.clear();
  }
}

/** The lock key of one volume of one driver. */
export const volumeKey = (driver: string, handle: string): string => `${driver}^${handle}`;
