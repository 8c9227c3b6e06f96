/**
 * One device plugin's gRPC client (upstream plugin/v1beta1/client.go): a blocking dial of its
 * unix socket with a deadline, GetDevicePluginOptions, then the ListAndWatch stream, each message
 * a full device list, until the stream ends; unary calls with a deadline for the endpoint.
 */
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { DevicePluginError } from '../errors.js';
import { DIAL_TIMEOUT_MS, MESSAGES, RPC_TIMEOUT_MS } from './constants.js';
import { DEVICE_PLUGIN_SERVICE, devicePluginService } from './proto.js';
import type { Device, DevicePluginOptions } from './types.js';

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // upstream dials with authority "localhost"
  'grpc.default_authority': 'localhost',
  'grpc.enable_retries': 0,
};

/** The text of a gRPC failure, as Go's status error prints it. */
export function grpcErrorText(err: Error): string {
  const e = err as Partial<grpc.ServiceError>;
  if (typeof e.code !== 'number') return err.message;
  const name = grpc.status[e.code] ?? String(e.code);
  return `rpc error: code = ${goCodeName(name)} desc = ${e.details || err.message}`;
}

/** grpc-js names codes DEADLINE_EXCEEDED; Go's codes.Code prints DeadlineExceeded. */
function goCodeName(name: string): string {
  return name
    .toLowerCase()
    .split('_')
    .map((w) => (w === 'ok' ? 'OK' : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
}

export class PluginClient {
  private readonly client: grpc.Client;
  private readonly service: ServiceDefinition = devicePluginService(DEVICE_PLUGIN_SERVICE);
  private stream: grpc.ClientReadableStream<{ devices: Device[] }> | undefined;
  private closed = false;

  constructor(
    readonly resource: string,
    readonly socketPath: string,
  ) {
    this.client = new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  }

  /** Waits until the socket answers (upstream grpc.WithBlock, 10 s), then asks for the options. */
  async connect(dialTimeoutMs = DIAL_TIMEOUT_MS): Promise<DevicePluginOptions> {
    await new Promise<void>((resolve, reject) =>
      this.client.waitForReady(Date.now() + dialTimeoutMs, (err) =>
        err ? reject(new DevicePluginError(MESSAGES.failedToDial(err.message), { cause: err })) : resolve(),
      ),
    );
    try {
      return await this.unary<DevicePluginOptions>('GetDevicePluginOptions', {}, RPC_TIMEOUT_MS);
    } catch (err) {
      throw new DevicePluginError(`failed to get device plugin options: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Runs ListAndWatch until the stream ends (the plugin stopped, or disconnect()); each message is
   * handed to `onList`. Resolves with why it ended; never rejects.
   */
  run(onList: (devices: Device[]) => void): Promise<string> {
    const method = this.method('ListAndWatch');
    return new Promise((resolve) => {
      if (this.closed) return resolve('the client is closed');
      const stream = this.client.makeServerStreamRequest<object, { devices: Device[] }>(
        method.path,
        method.requestSerialize as (v: object) => Buffer,
        method.responseDeserialize as (b: Buffer) => { devices: Device[] },
        {},
      );
      this.stream = stream;
      stream.on('data', (msg: { devices: Device[] }) => onList(msg.devices ?? []));
      stream.on('error', (err: Error) => resolve(grpcErrorText(err)));
      stream.on('end', () => resolve('the stream ended'));
    });
  }

  /**
   * One unary call with a deadline. `deserialize` replaces the method's own (Allocate keeps the
   * reply's wire bytes). Failures reject with the gRPC error text as Go prints it.
   */
  unary<T>(name: string, request: object, timeoutMs: number, deserialize?: (b: Buffer) => T): Promise<T> {
    const method = this.method(name);
    if (this.closed) return Promise.reject(new DevicePluginError(`${name}: the client is closed`));
    return new Promise<T>((resolve, reject) => {
      try {
        this.client.makeUnaryRequest<object, T>(
          method.path,
          method.requestSerialize as (v: object) => Buffer,
          deserialize ?? (method.responseDeserialize as (b: Buffer) => T),
          request,
          new grpc.Metadata(),
          { deadline: Date.now() + Math.max(0, timeoutMs) },
          (err, value) =>
            err ? reject(new DevicePluginError(grpcErrorText(err), { cause: err })) : resolve(value as T),
        );
      } catch (err) {
        reject(new DevicePluginError(`${name}: request not encodable: ${String(err)}`, { cause: err }));
      }
    });
  }

  /** The raw request serializer/deserializer of one method, for callers that keep wire bytes. */
  method(name: string): MethodDefinition<object, unknown> {
    return this.service[name] as MethodDefinition<object, unknown>;
  }

  /** Closes the connection; a running ListAndWatch ends. */
  disconnect(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream?.cancel();
    this.client.close();
  }
}
