/**
 * Loads the CSI v1 (csi.v1) proto under src/volume/csi/proto/, once per process, with the CRI
 * client's loader options (camelCase fields, int64 as decimal strings, enums as names, defaults
 * present). The plugin registration proto lives with the plugin manager (src/pluginmanager/proto/).
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../../cri/proto.js';
import { findPackageFile } from '../../util/package-file.js';

export const CSI_IDENTITY_SERVICE = 'csi.v1.Identity';
export const CSI_NODE_SERVICE = 'csi.v1.Node';
export const CSI_CONTROLLER_SERVICE = 'csi.v1.Controller';

let cached: protoLoader.PackageDefinition | undefined;

/** The absolute path of src/volume/csi/proto/csi.proto. */
export function csiProtoPath(): string {
  return findPackageFile(dirname(fileURLToPath(import.meta.url)), 'proto/csi.proto', 'src/volume/csi/proto/csi.proto');
}

/** The method table of one service of csi.proto (keys are the RPC names). */
export function csiServiceDefinition(service: string): protoLoader.ServiceDefinition {
  cached ??= protoLoader.loadSync(csiProtoPath(), LOADER_OPTIONS);
  const def = cached[service];
  if (!def || 'format' in def || 'type' in def) throw new Error(`${service} missing from csi.proto`);
  return def as protoLoader.ServiceDefinition;
}
