/**
 * Loads the vendored podresources v1 proto (src/podresources/proto/podresources-v1.proto, upstream
 * staging/src/k8s.io/kubelet/pkg/apis/podresources/v1/api.proto) once per process, with the CRI
 * client's loader options (camelCase fields, int64 as decimal strings, defaults present).
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../cri/proto.js';
import { findPackageFile } from '../util/package-file.js';

export const POD_RESOURCES_SERVICE = 'v1.PodResourcesLister';
const FILE = 'podresources-v1.proto';

let cached: protoLoader.PackageDefinition | undefined;

export function podResourcesProtoPath(): string {
  return findPackageFile(dirname(fileURLToPath(import.meta.url)), `proto/${FILE}`, `src/podresources/proto/${FILE}`);
}

/** The v1 package definition (service v1.PodResourcesLister and its messages). */
export function podResourcesDefinition(): protoLoader.PackageDefinition {
  cached ??= protoLoader.loadSync(podResourcesProtoPath(), LOADER_OPTIONS);
  return cached;
}

/** The method table of v1.PodResourcesLister (List, Get, GetAllocatableResources). */
export function podResourcesService(): protoLoader.ServiceDefinition {
  return podResourcesDefinition()[POD_RESOURCES_SERVICE] as protoLoader.ServiceDefinition;
}
