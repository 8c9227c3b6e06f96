/**
 * A tiny gRPC server on a unix socket for the CSI unit tests: the real wire protocol, with the
 * handlers a test gives (each an async function of the decoded request), so a test can answer,
 * fail with a gRPC status, or stall a call.
 */
import * as grpc from '@grpc/grpc-js';
import { REGISTRATION_SERVICE, registrationServiceDefinition } from '../../../src/pluginmanager/index.js';
import { csiServiceDefinition } from '../../../src/volume/csi/proto.js';

export type Handler = (request: Record<string, unknown>) => Promise<object> | object;

export interface TestServer {
  socketPath: string;
  /** Requests received, in order, by method name. */
  calls: Array<{ method: string; request: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/** A Promise that never settles: the handler stalls until the client's deadline. */
export const stall = (): Promise<object> => new Promise(() => {});

/** The method table of a CSI service or of the plugin registration service. */
function serviceDefinition(service: string): ReturnType<typeof csiServiceDefinition> {
  return service === REGISTRATION_SERVICE ? registrationServiceDefinition() : csiServiceDefinition(service);
}

export async function startServer(
  socketPath: string,
  services: Record<string, Record<string, Handler>>,
): Promise<TestServer> {
  const server = new grpc.Server();
  const calls: TestServer['calls'] = [];
  for (const [service, handlers] of Object.entries(services)) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [method, handler] of Object.entries(handlers)) {
      impl[method] = (call: grpc.ServerUnaryCall<Record<string, unknown>, object>, cb: grpc.sendUnaryData<object>) => {
        calls.push({ method, request: call.request });
        Promise.resolve()
          .then(() => handler(call.request))
          .then(
            (reply) => cb(null, reply),
            (err: Error & { code?: number }) => cb({ code: err.code ?? grpc.status.INTERNAL, details: err.message }),
          );
      };
    }
    server.addService(serviceDefinition(service) as unknown as grpc.ServiceDefinition, impl);
  }
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    socketPath,
    calls,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()),
  };
}

/** Polls `cond` every 20 ms until it holds or `ms` passes. */
export async function waitFor(cond: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
