/**
 * Loads the CSI v1 (csi.v1) and kubelet plugin registration (pluginregistration) protos under
 * src/volume/csi/proto/, once per process, with the CRI client's loader options (camelCase fields,
 * int64 as decimal strings, enums as names, defaults present).
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../../cri/proto.js';
import { findPackageFile } from '../../util/package-file.js';

export const CSI_IDENTITY_SERVICE = 'csi.v1.Identity';
export const CSI_NODE_SERVICE = 'csi.v1.Node';
export const CSI_CONTROLLER_SERVICE = 'csi.v1.Controller';
export const REGISTRATION_SERVICE = 'pluginregistration.Registration';

const cache = new Map<string, protoLoader.PackageDefinition>();

/** The absolute path of one of the files in src/volume/csi/proto/ ('csi.proto', 'api.proto'). */
export function csiProtoPath(file: 'csi.proto' | 'api.proto'): string {
  return findPackageFile(dirname(fileURLToPath(import.meta.url)), `proto/${file}`, `src/volume/csi/proto/${file}`);
}

function definitionOf(file: 'csi.proto' | 'api.proto'): protoLoader.PackageDefinition {
  let def = cache.get(file);
  if (!def) cache.set(file, (def = protoLoader.loadSync(csiProtoPath(file), LOADER_OPTIONS)));
  return def;
}

/** The method table of one service of csi.proto or api.proto (keys are the RPC names). */
export function csiServiceDefinition(service: string): protoLoader.ServiceDefinition {
  const file = service.startsWith('csi.') ? 'csi.proto' : 'api.proto';
  const def = definitionOf(file)[service];
  if (!def || 'format' in def || 'type' in def) throw new Error(`${service} missing from ${file}`);
  return def as protoLoader.ServiceDefinition;
}
