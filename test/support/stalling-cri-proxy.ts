/**
 * A pass-through CRI proxy on a unix socket, between the agent and the real containerd, that can
 * stall chosen methods: a request of a stalled method is held (not forwarded) until the stall
 * ends, then forwarded as containerd would process requests queued while it was frozen. The
 * bytes are passed through undecoded, so the agent talks to the real runtime in every other
 * respect. Streaming methods answer UNIMPLEMENTED (the agent then relies on relists).
 *
 * Used to freeze exactly the pod status reads (PodSandboxStatus, ContainerStatus) while the
 * relist's lists go through: the moment a frozen containerd leaves the agent in, deterministically.
 */
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { grpcTarget } from '../../src/cri/channel.js';
import { IMAGE_SERVICE, RUNTIME_SERVICE } from '../../src/cri/index.js';
import { serviceDefinition } from '../../src/cri/proto.js';

const identity = (b: Buffer) => b;

export interface StallingCriProxy {
  endpoint: string;
  /** Methods (upstream names) held while stalled. */
  stall(methods: readonly string[]): void;
  /** Ends the stall: held requests go to the runtime now. */
  release(): void;
  /** Requests of stalled methods seen while stalled. */
  held: number;
  /** Requests seen, by method. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

export async function startStallingCriProxy(dir: string, upstreamEndpoint: string): Promise<StallingCriProxy> {
  const socketPath = join(dir, 'cri-proxy.sock');
  const client = new grpc.Client(grpcTarget(upstreamEndpoint), grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 16 * 2 ** 20,
    'grpc.max_send_message_length': 16 * 2 ** 20,
  });
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 16 * 2 ** 20,
    'grpc.max_send_message_length': 16 * 2 ** 20,
  });
  let stalled = new Set<string>();
  let waiters: Array<() => void> = [];
  const proxy: StallingCriProxy = {
    endpoint: `unix://${socketPath}`,
    held: 0,
    calls: new Map(),
    stall(methods) {
      stalled = new Set(methods);
    },
    release() {
      stalled = new Set();
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
    async close() {
      proxy.release();
      server.forceShutdown();
      client.close();
    },
  };
  for (const service of [RUNTIME_SERVICE, IMAGE_SERVICE]) {
    const def = serviceDefinition(service) as unknown as Record<
      string,
      { path: string; requestStream: boolean; responseStream: boolean }
    >;
    const passthrough: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, m] of Object.entries(def)) {
      passthrough[name] = {
        path: m.path,
        requestStream: m.requestStream,
        responseStream: m.responseStream,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      };
      if (m.requestStream || m.responseStream) {
        impl[name] = (call: grpc.ServerWritableStream<Buffer, Buffer>) =>
          call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: `${name} is not proxied` });
        continue;
      }
      impl[name] = async (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        proxy.calls.set(name, (proxy.calls.get(name) ?? 0) + 1);
        if (stalled.has(name)) {
          proxy.held++;
          await new Promise<void>((r) => waiters.push(r));
        }
        client.makeUnaryRequest(m.path, identity, identity, call.request, new grpc.Metadata(), {}, (err, reply) =>
          cb(err, reply),
        );
      };
    }
    server.addService(passthrough as grpc.ServiceDefinition, impl);
  }
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return proxy;
}
