/**
 * A unary gRPC client over a unix socket for the CSI and plugin registration services. Every call
 * has a deadline (a driver that stalls must not stall the kubelet) and every failure is a CsiError
 * naming the method: KTS_ERR_CSI_TIMEOUT for a missed deadline, KTS_ERR_CSI otherwise.
 */
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { CsiError } from '../errors.js';

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // A restarted driver is found again quickly (upstream's CSI client redials on each call).
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 3000,
  'grpc.enable_retries': 0,
};

type Method = MethodDefinition<object, unknown>;

/** The gRPC target for a socket path or a unix:// endpoint. */
export function unixTarget(endpoint: string): string {
  const path = endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint;
  if (!path.startsWith('/'))
    throw new CsiError(
      'KTS_ERR_CSI',
      'dial',
      `endpoint ${JSON.stringify(endpoint)} is not an absolute unix socket path`,
    );
  return `unix://${path}`;
}

function csiErrorFrom(method: string, err: grpc.ServiceError | Error): CsiError {
  const code = 'code' in err && typeof err.code === 'number' ? err.code : undefined;
  const details = 'details' in err && typeof err.details === 'string' && err.details ? err.details : err.message;
  const name = code === undefined ? '' : `${grpc.status[code] ?? `CODE_${code}`}: `;
  const errorCode = code === grpc.status.DEADLINE_EXCEEDED ? 'KTS_ERR_CSI_TIMEOUT' : 'KTS_ERR_CSI';
  return new CsiError(errorCode, method, `${name}${details}`, {
    ...(code === undefined ? {} : { grpcCode: code }),
    cause: err,
  });
}

export class UnixGrpcClient {
  readonly target: string;
  private readonly client: grpc.Client;
  private closed = false;

  constructor(endpoint: string) {
    this.target = unixTarget(endpoint);
    this.client = new grpc.Client(this.target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  }

  /** One unary call of `service` with a deadline `timeoutMs` from now; the reply is proto-loader decoded. */
  unary<T>(service: ServiceDefinition, name: string, request: object, timeoutMs: number): Promise<T> {
    const method = service[name] as Method | undefined;
    if (!method) return Promise.reject(new CsiError('KTS_ERR_CSI', name, 'not in the loaded proto'));
    if (this.closed) return Promise.reject(new CsiError('KTS_ERR_CSI', name, 'the client is closed'));
    return new Promise<T>((resolve, reject) => {
      try {
        this.client.makeUnaryRequest<object, T>(
          method.path,
          method.requestSerialize as (v: object) => Buffer,
          method.responseDeserialize as (b: Buffer) => T,
          request,
          new grpc.Metadata(),
          { deadline: Date.now() + Math.max(0, timeoutMs) },
          (err, value) => (err ? reject(csiErrorFrom(name, err)) : resolve(value as T)),
        );
      } catch (err) {
        // requestSerialize throws synchronously for a request it cannot encode.
        reject(new CsiError('KTS_ERR_CSI', name, `request not encodable: ${String(err)}`, { cause: err }));
      }
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }
}
