/**
 * Loads the kubelet plugin registration proto (package pluginregistration, upstream
 * staging/src/k8s.io/kubelet/pkg/apis/pluginregistration/v1/api.proto) from
 * src/pluginmanager/proto/, once per process, with the CRI client's loader options.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../cri/proto.js';
import { findPackageFile } from '../util/package-file.js';

export const REGISTRATION_SERVICE = 'pluginregistration.Registration';

let cached: protoLoader.PackageDefinition | undefined;

/** The absolute path of src/pluginmanager/proto/api.proto. */
export function registrationProtoPath(): string {
  return findPackageFile(
    dirname(fileURLToPath(import.meta.url)),
    'proto/api.proto',
    'src/pluginmanager/proto/api.proto',
  );
}

/** The method table of pluginregistration.Registration (GetInfo, NotifyRegistrationStatus). */
export function registrationServiceDefinition(): protoLoader.ServiceDefinition {
  cached ??= protoLoader.loadSync(registrationProtoPath(), LOADER_OPTIONS);
  const def = cached[REGISTRATION_SERVICE];
  if (!def || 'format' in def || 'type' in def) throw new Error(`${REGISTRATION_SERVICE} missing from api.proto`);
  return def as protoLoader.ServiceDefinition;
}
