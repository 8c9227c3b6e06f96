/**
 * The test device plugin's state directory (device-plugin.ts): what a test writes to steer it and
 * what the plugin makes there.
 * - `devices.json`: `[{"id": "d0", "health": "Healthy", "kind": "null"}, ...]`; health defaults to
 *   Healthy; kind `null` makes a `c 1 3` node, `zero` a `c 1 5` node (so a test can tell devices
 *   apart from inside a container by reading one). Re-read when it changes.
 * - `options.json`: `{"preStartRequired": bool, "getPreferredAllocationAvailable": bool, "cdi": bool,
 *   "cdiSpecDir": "<dir>"}`; re-read on every call.
 * - `dev/kts-<id>`: the device nodes (mknod, needs CAP_MKNOD); `share/`: the read-only mount.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/* eslint-disable @typescript-eslint/no-explicit-any -- requests are proto-loader's untyped messages */

export type DeviceKind = 'null' | 'zero';

export interface TestDevice {
  id: string;
  /** v1beta1's "Healthy" or "Unhealthy" (anything but "Healthy" counts as unhealthy). */
  health?: string;
  kind?: DeviceKind;
}

export interface PluginOptions {
  preStartRequired?: boolean;
  getPreferredAllocationAvailable?: boolean;
  /** Allocate also names each device as CDI device `kubelet-ts.test/dev=<id>`. */
  cdi?: boolean;
  /** Where to write the CDI spec for those names (a runtime's cdi_spec_dirs entry). */
  cdiSpecDir?: string;
}

export const DEFAULT_DEVICES: TestDevice[] = [
  { id: 'd0', kind: 'null' },
  { id: 'd1', kind: 'zero' },
];
export const CDI_KIND = 'kubelet-ts.test/dev';
export const DEVICES_ENV = 'KTS_DEVICES';
export const DEVICES_ANNOTATION = 'kubelet-ts.test/devices';
/** Where the read-only share is mounted in a container. */
export const SHARE_CONTAINER_PATH = '/kts-share';

const MAJOR_MINOR: Record<DeviceKind, [string, string]> = { null: ['1', '3'], zero: ['1', '5'] };

function readJson<T>(path: string, fallback: T): T {
  if (!existsSync(path)) return fallback;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    throw new Error(`${path}: not valid JSON: ${String(err)}`, { cause: err });
  }
}

export class PluginState {
  constructor(
    readonly dir: string,
    private readonly resourceName: string,
  ) {}

  get devicesPath(): string {
    return join(this.dir, 'devices.json');
  }

  get optionsPath(): string {
    return join(this.dir, 'options.json');
  }

  get shareDir(): string {
    return join(this.dir, 'share');
  }

  hostPath(id: string): string {
    return join(this.dir, 'dev', `kts-${id}`);
  }

  /** Writes the default devices.json unless the test wrote one, and the share directory. */
  init(devices: TestDevice[] = DEFAULT_DEVICES): void {
    mkdirSync(join(this.dir, 'dev'), { recursive: true });
    mkdirSync(this.shareDir, { recursive: true });
    writeFileSync(join(this.shareDir, 'resource'), `${this.resourceName}\n`);
    if (!existsSync(this.devicesPath)) writeFileSync(this.devicesPath, JSON.stringify(devices));
  }

  options(): PluginOptions {
    return readJson<PluginOptions>(this.optionsPath, {});
  }

  /** The current devices, each with its node made (once) under dev/. */
  devices(): TestDevice[] {
    const list = readJson<TestDevice[]>(this.devicesPath, []);
    for (const d of list) this.ensureNode(d);
    return list;
  }

  private ensureNode(d: TestDevice): void {
    const path = this.hostPath(d.id);
    if (existsSync(path) && statSync(path).isCharacterDevice()) return;
    const [major, minor] = MAJOR_MINOR[d.kind ?? 'null'];
    execFileSync('mknod', ['-m', '0666', path, 'c', major, minor], { stdio: 'pipe' });
  }

  /** One ContainerAllocateResponse for the device IDs the kubelet chose. */
  containerResponse(ids: string[]): any {
    const known = new Set(this.devices().map((d) => d.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new Error(`unknown device IDs ${unknown.join(', ')}`);
    const opts = this.options();
    if (opts.cdi && opts.cdiSpecDir !== undefined) this.writeCdiSpec(opts.cdiSpecDir);
    return {
      envs: { [DEVICES_ENV]: ids.join(',') },
      mounts: [{ containerPath: SHARE_CONTAINER_PATH, hostPath: this.shareDir, readOnly: true }],
      devices: ids.map((id, i) => ({ containerPath: `/dev/kts${i}`, hostPath: this.hostPath(id), permissions: 'rw' })),
      annotations: { [DEVICES_ANNOTATION]: ids.join(',') },
      cdiDevices: opts.cdi ? ids.map((id) => ({ name: `${CDI_KIND}=${id}` })) : [],
    };
  }

  /** A CDI spec naming every device: the runtime injects its node at /dev/kts-cdi-<id>. */
  private writeCdiSpec(specDir: string): void {
    const devices = this.devices().map((d) => ({
      name: d.id,
      containerEdits: { deviceNodes: [{ path: `/dev/kts-cdi-${d.id}`, hostPath: this.hostPath(d.id) }] },
    }));
    mkdirSync(specDir, { recursive: true });
    const spec = { cdiVersion: '0.5.0', kind: CDI_KIND, devices };
    writeFileSync(join(specDir, 'kubelet-ts-test-dev.json'), JSON.stringify(spec, null, 2));
  }
}

/** GetPreferredAllocation's choice: the must-include IDs, then the available ones in list order. */
export function preferredIds(req: any): string[] {
  const must: string[] = req.mustIncludeDeviceIDs ?? [];
  const rest = (req.availableDeviceIDs ?? []).filter((id: string) => !must.includes(id));
  return [...must, ...rest].slice(0, Math.max(must.length, req.allocationSize ?? 0));
}
