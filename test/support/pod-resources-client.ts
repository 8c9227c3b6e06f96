/**
 * A client of the agent's pod resources API v1 (<root-dir>/pod-resources/kubelet.sock), built from
 * the vendored proto as a monitoring agent (the DCGM exporter, say) builds its own: List, Get and
 * GetAllocatableResources, each with a 5 s deadline.
 */
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { podResourcesService } from '../../src/podresources/proto.js';

export interface ContainerDevices {
  resourceName: string;
  deviceIds: string[];
}

export interface PodResources {
  name: string;
  namespace: string;
  containers: { name: string; devices: ContainerDevices[]; cpuIds: string[] }[];
}

export interface PodResourcesClient {
  list(): Promise<PodResources[]>;
  get(name: string, namespace: string): Promise<PodResources>;
  allocatable(): Promise<ContainerDevices[]>;
  close(): void;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- proto-loader's untyped client */

/** The pod resources socket under an agent's root dir. */
export const podResourcesSocket = (rootDir: string): string => join(rootDir, 'pod-resources', 'kubelet.sock');

export function podResourcesClient(socket: string): PodResourcesClient {
  const Client = grpc.makeGenericClientConstructor(podResourcesService() as any, 'PodResourcesLister');
  const client = new Client(`unix:${socket}`, grpc.credentials.createInsecure()) as any;
  const call = (method: string, req: object): Promise<any> =>
    new Promise((resolve, reject) =>
      client[method](req, { deadline: Date.now() + 5000 }, (err: Error | null, r: any) =>
        err ? reject(err) : resolve(r),
      ),
    );
  return {
    list: async () => (await call('List', {})).podResources ?? [],
    get: async (name, namespace) => (await call('Get', { podName: name, podNamespace: namespace })).podResources,
    allocatable: async () => (await call('GetAllocatableResources', {})).devices ?? [],
    close: () => client.close(),
  };
}
