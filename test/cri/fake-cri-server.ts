/**
 * A gRPC server speaking runtime.v1 from our api.proto on a temporary unix socket, for unit tests
 * of the client: each test installs the handlers it needs; unhandled methods answer UNIMPLEMENTED.
 */
import * as grpc from '@grpc/grpc-js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { packageDefinition } from '../../src/cri/proto.js';
import { testTempDir } from '../support/temp-dir.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- handlers take and return proto-loader's untyped messages */
export type Handler = (request: any) => any | Promise<any>;

export class GrpcStatusError extends Error {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details);
  }
}

export interface FakeCriServer {
  endpoint: string;
  socketPath: string;
  handlers: Record<string, Handler>;
  requests: { method: string; request: any }[];
  close(): Promise<void>;
}

export async function startFakeCriServer(): Promise<FakeCriServer> {
  const dir = testTempDir('kts-fake-cri-');
  const socketPath = join(dir, 'cri.sock');
  const handlers: Record<string, Handler> = {};
  const requests: { method: string; request: any }[] = [];
  const pkg = grpc.loadPackageDefinition(packageDefinition()) as any;
  const server = new grpc.Server();
  for (const svc of [pkg.runtime.v1.RuntimeService.service, pkg.runtime.v1.ImageService.service]) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const name of Object.keys(svc)) {
      const method = svc[name];
      if (method.responseStream) {
        impl[name] = (call: grpc.ServerWritableStream<any, any>) => {
          call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: `method ${name} not implemented` });
        };
        continue;
      }
      impl[name] = (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
        requests.push({ method: name, request: call.request });
        const h = handlers[name];
        if (!h) {
          cb({ code: grpc.status.UNIMPLEMENTED, details: `method ${name} not implemented` });
          return;
        }
        Promise.resolve()
          .then(() => h(call.request))
          .then(
            (reply) => cb(null, reply ?? {}),
            (err) =>
              cb(
                err instanceof GrpcStatusError
                  ? { code: err.code, details: err.details }
                  : { code: grpc.status.UNKNOWN, details: String(err) },
              ),
          );
      };
    }
    server.addService(svc, impl);
  }
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    endpoint: `unix://${socketPath}`,
    socketPath,
    handlers,
    requests,
    async close() {
      server.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
