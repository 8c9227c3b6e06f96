/**
 * A minimal device plugin for the device manager's unit tests: serves v1beta1.DevicePlugin from
 * the vendored proto on a unix socket (real gRPC), pushes its device list on ListAndWatch, answers
 * Allocate with one env per device and registers on kubelet.sock. Tests steer it directly. (The
 * full test device plugin for e2e lives in test/support/.)
 */
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { DEVICE_PLUGIN_SERVICE, REGISTRATION_SERVICE, devicePluginService } from '../../src/devicemanager/proto.js';
import { registrationServiceDefinition } from '../../src/pluginmanager/index.js';
import type { ContainerAllocateResponse, Device } from '../../src/devicemanager/types.js';

export interface MiniPluginOptions {
  dir: string;
  /** Socket file name in dir. */
  endpoint: string;
  devices: Array<[string, string]>;
  preStartRequired?: boolean;
  getPreferredAllocationAvailable?: boolean;
  /** The answer to GetPreferredAllocation (default: none). */
  preferred?: string[];
  /** Also serve pluginregistration GetInfo as type DevicePlugin with this resource name (plugins_registry mode). */
  registryName?: string;
  /** Fail this RPC with UNKNOWN and this text. */
  fail?: Partial<Record<'Allocate' | 'PreStartContainer' | 'GetPreferredAllocation', string>>;
}

type Call = { method: string; request: Record<string, unknown> };

export class MiniPlugin {
  readonly calls: Call[] = [];
  private readonly server = new grpc.Server();
  private readonly streams = new Set<grpc.ServerWritableStream<object, object>>();
  private devices: Device[];

  private constructor(readonly opts: MiniPluginOptions) {
    this.devices = toDevices(opts.devices);
  }

  get socketPath(): string {
    return join(this.opts.dir, this.opts.endpoint);
  }

  static async start(opts: MiniPluginOptions): Promise<MiniPlugin> {
    const p = new MiniPlugin(opts);
    p.server.addService(devicePluginService(DEVICE_PLUGIN_SERVICE) as unknown as grpc.ServiceDefinition, p.impl());
    if (opts.registryName !== undefined)
      p.server.addService(registrationServiceDefinition() as unknown as grpc.ServiceDefinition, {
        GetInfo: (_call: unknown, cb: grpc.sendUnaryData<object>) =>
          cb(null, { type: 'DevicePlugin', name: opts.registryName, endpoint: '', supportedVersions: ['v1beta1'] }),
        NotifyRegistrationStatus: (
          call: grpc.ServerUnaryCall<Record<string, unknown>, object>,
          cb: grpc.sendUnaryData<object>,
        ) => {
          p.calls.push({ method: 'NotifyRegistrationStatus', request: call.request });
          cb(null, {});
        },
      });
    await new Promise<void>((resolve, reject) =>
      p.server.bindAsync(`unix://${p.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    return p;
  }

  /** Calls Registration/Register on <dir>/kubelet.sock; rejects with the kubelet's error text. */
  register(resourceName: string, version = 'v1beta1', kubeletDir = this.opts.dir): Promise<void> {
    const method = devicePluginService(REGISTRATION_SERVICE)['Register']!;
    const client = new grpc.Client(`unix://${join(kubeletDir, 'kubelet.sock')}`, grpc.credentials.createInsecure());
    const request = { version, endpoint: this.opts.endpoint, resourceName, options: this.options() };
    return new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize as (v: object) => Buffer,
        method.responseDeserialize as (b: Buffer) => object,
        request,
        { deadline: Date.now() + 15_000 },
        (err) => {
          client.close();
          if (err) reject(new Error(err.details));
          else resolve();
        },
      ),
    );
  }

  /** A new full list, pushed on every open ListAndWatch stream. */
  setDevices(devices: Array<[string, string]>): void {
    this.devices = toDevices(devices);
    for (const s of this.streams) s.write({ devices: this.devices });
  }

  /** Stops serving: open streams end, as when the plugin process exits. */
  async stop(): Promise<void> {
    for (const s of this.streams) s.destroy();
    this.server.forceShutdown();
  }

  private options(): object {
    return {
      preStartRequired: this.opts.preStartRequired ?? false,
      getPreferredAllocationAvailable: this.opts.getPreferredAllocationAvailable ?? false,
    };
  }

  private impl(): grpc.UntypedServiceImplementation {
    const unary =
      (method: string, answer: (req: Record<string, unknown>) => object) =>
      (call: grpc.ServerUnaryCall<Record<string, unknown>, object>, cb: grpc.sendUnaryData<object>) => {
        this.calls.push({ method, request: call.request });
        const fail = this.opts.fail?.[method as 'Allocate'];
        if (fail) cb({ code: grpc.status.UNKNOWN, details: fail });
        else cb(null, answer(call.request));
      };
    return {
      GetDevicePluginOptions: unary('GetDevicePluginOptions', () => this.options()),
      ListAndWatch: (stream: grpc.ServerWritableStream<object, object>) => {
        this.calls.push({ method: 'ListAndWatch', request: {} });
        this.streams.add(stream);
        stream.on('cancelled', () => this.streams.delete(stream));
        stream.write({ devices: this.devices });
      },
      Allocate: unary('Allocate', (req) => ({
        containerResponses: (req['containerRequests'] as Array<{ devicesIds: string[] }>).map((c) =>
          allocation(c.devicesIds),
        ),
      })),
      GetPreferredAllocation: unary('GetPreferredAllocation', () => ({
        containerResponses: [{ deviceIDs: this.opts.preferred ?? [] }],
      })),
      PreStartContainer: unary('PreStartContainer', () => ({})),
    };
  }
}

function toDevices(list: Array<[string, string]>): Device[] {
  return list.map(([ID, health]) => ({ ID, health, topology: null }));
}

/** One env naming the devices, and one device node per device. */
export function allocation(ids: string[]): Partial<ContainerAllocateResponse> {
  return {
    envs: { TEST_DEVICES: ids.join(',') },
    devices: ids.map((id) => ({ containerPath: `/dev/${id}`, hostPath: `/dev/null`, permissions: 'rw' })),
  };
}
