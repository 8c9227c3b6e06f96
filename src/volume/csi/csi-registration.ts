/**
 * The CSI plugin type's registration handler (upstream: pkg/volume/csi/csi_plugin.go
 * RegistrationHandler): accepts a driver that speaks CSI v1, keeps the registered drivers (name →
 * endpoint, highest version), and tells its owner when one comes or goes (the next step builds
 * the CSINode object and the node annotation from NodeGetInfo there).
 */
import { PluginRegistrationError } from '../../errors.js';
import { CsiNodeClient, type NodeInfo } from './node-client.js';
import type { PluginHandler } from '../../pluginmanager/index.js';

export interface CsiVersion {
  major: number;
  minor: number;
  patch: number;
}

export interface CsiDriver {
  name: string;
  endpoint: string;
  highestSupportedVersion: CsiVersion;
}

/** "1.0.0", "v1.2", "v1.5.0" → parts; anything else undefined (upstream utilversion.ParseGeneric). */
export function parseVersion(v: string): CsiVersion | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(v.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) } : undefined;
}

function compare(a: CsiVersion, b: CsiVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

const show = (v: CsiVersion): string => `${v.major}.${v.minor}.${v.patch}`;

/** The highest v1.x version in `versions` (upstream highestSupportedVersion); throws if none. */
export function highestSupportedVersion(versions: string[]): CsiVersion {
  let best: CsiVersion | undefined;
  for (const v of versions) {
    const p = parseVersion(v);
    if (p && p.major === 1 && (!best || compare(p, best) > 0)) best = p;
  }
  if (!best) {
    throw new PluginRegistrationError(
      `none of the versions ${JSON.stringify(versions)} is a supported CSI version (v1.x)`,
    );
  }
  return best;
}

export interface CsiRegistrationEvents {
  /** After NodeGetInfo answered: the next step installs the driver into the CSINode object here. */
  onRegister?(driver: CsiDriver, nodeInfo: NodeInfo): void | Promise<void>;
  onDeregister?(driver: CsiDriver): void | Promise<void>;
}

export class CsiRegistrationHandler implements PluginHandler {
  private readonly drivers = new Map<string, CsiDriver>();

  constructor(private readonly events: CsiRegistrationEvents = {}) {}

  get(name: string): CsiDriver | undefined {
    return this.drivers.get(name);
  }

  validatePlugin(name: string, endpoint: string, versions: string[]): void {
    this.validateVersions('ValidatePlugin', name, endpoint, versions);
  }

  /**
   * Records the driver, asks it for its node ID, topology and volume limit (NodeGetInfo, bounded
   * by `timeoutMs`) and tells the owner; a failure unregisters the driver again and is thrown
   * (the reconciler then answers NotifyRegistrationStatus(false)), as upstream does.
   */
  async registerPlugin(name: string, endpoint: string, versions: string[], timeoutMs: number): Promise<void> {
    const version = this.validateVersions('RegisterPlugin', name, endpoint, versions);
    const driver = { name, endpoint, highestSupportedVersion: version };
    this.drivers.set(name, driver);
    const client = new CsiNodeClient(endpoint, timeoutMs);
    try {
      const info = await client.nodeGetInfo();
      await this.events.onRegister?.(driver, info);
    } catch (err) {
      if (this.drivers.get(name) === driver) this.drivers.delete(name);
      throw new PluginRegistrationError(
        `RegisterPlugin for CSI driver ${JSON.stringify(name)} failed: ${(err as Error).message}`,
        { cause: err },
      );
    } finally {
      client.close();
    }
  }

  async deRegisterPlugin(name: string, endpoint: string): Promise<void> {
    const driver = this.drivers.get(name);
    // A newer registration of the same name (another socket) replaced this one: keep it.
    if (!driver || driver.endpoint !== endpoint) return;
    this.drivers.delete(name);
    await this.events.onDeregister?.(driver);
  }

  private validateVersions(caller: string, name: string, endpoint: string, versions: string[]): CsiVersion {
    const fail = (why: string) =>
      new PluginRegistrationError(`${caller} for CSI driver ${JSON.stringify(name)} failed: ${why}`);
    if (versions.length === 0) throw fail('the plugin returned an empty list of supported versions');
    if (!endpoint.startsWith('/') && !endpoint.startsWith('unix:///')) {
      throw fail(`endpoint ${JSON.stringify(endpoint)} is not an absolute unix socket path`);
    }
    let version: CsiVersion;
    try {
      version = highestSupportedVersion(versions);
    } catch (err) {
      throw fail((err as Error).message);
    }
    const existing = this.drivers.get(name);
    if (existing && compare(existing.highestSupportedVersion, version) >= 0) {
      throw fail(
        `another driver with the same name is registered with a higher or equal version: ${show(existing.highestSupportedVersion)}`,
      );
    }
    return version;
  }
}
