/**
 * Finds and loads src/cri/proto/api.proto (runtime.v1). The compiled code runs from
 * dist/src/cri/, so the file is looked up next to this module first (in case a build step copies
 * it) and then under the package root (found by walking up to package.json).
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { findPackageFile } from '../util/package-file.js';

/**
 * camelCase field names, int64 as decimal strings (converted to bigint by convert.ts), enums as
 * their names, and every field present (defaults) so that absent and zero look the same as they
 * do on the wire.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

export const RUNTIME_SERVICE = 'runtime.v1.RuntimeService';
export const IMAGE_SERVICE = 'runtime.v1.ImageService';

let cachedPath: string | undefined;
let cachedDefinition: protoLoader.PackageDefinition | undefined;
let cachedClientDefinition: protoLoader.PackageDefinition | undefined;

/**
 * The agent's client: int64 left as protobufjs Long values, which convert.ts turns into bigint
 * with a shift. As decimal strings each cost a Long division loop and a BigInt parse: at 100 pods
 * the relist's 200 timestamps a second made that a visible share of the agent's CPU and garbage
 * (issue 30). Servers (tests' fakes) keep LOADER_OPTIONS: their requests arrive as strings.
 */
const { longs: _asStrings, ...CLIENT_LOADER_OPTIONS } = LOADER_OPTIONS;

export function protoPath(): string {
  cachedPath ??= findPackageFile(dirname(fileURLToPath(import.meta.url)), 'proto/api.proto', 'src/cri/proto/api.proto');
  return cachedPath;
}

/** The runtime.v1 package definition, loaded once per process. */
export function packageDefinition(): protoLoader.PackageDefinition {
  cachedDefinition ??= protoLoader.loadSync(protoPath(), LOADER_OPTIONS);
  return cachedDefinition;
}

/** The method table of one service for the agent's client (keys are the upstream RPC names: "ListContainers", ...). */
export function serviceDefinition(service: string): protoLoader.ServiceDefinition {
  cachedClientDefinition ??= protoLoader.loadSync(protoPath(), CLIENT_LOADER_OPTIONS);
  const def = cachedClientDefinition[service];
  if (!def || !('Version' in def || 'ListImages' in def)) throw new Error(`${service} missing from api.proto`);
  return def as protoLoader.ServiceDefinition;
}
