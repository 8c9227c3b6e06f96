/**
 * Loads the device plugin API v1beta1 (src/devicemanager/proto/deviceplugin-v1beta1.proto, vendored
 * from upstream) once per process, with the CRI client's loader options, and converts a
 * ContainerAllocateResponse between its wire bytes (kept as received for the checkpoint) and the
 * decoded object.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from '../cri/proto.js';
import { DevicePluginError } from '../errors.js';
import { findPackageFile } from '../util/package-file.js';
import type { ContainerAllocateResponse } from './types.js';

export const REGISTRATION_SERVICE = 'v1beta1.Registration';
export const DEVICE_PLUGIN_SERVICE = 'v1beta1.DevicePlugin';
const FILE = 'deviceplugin-v1beta1.proto';

let cached: protoLoader.PackageDefinition | undefined;

/** The absolute path of the vendored proto. */
export function devicePluginProtoPath(): string {
  return findPackageFile(dirname(fileURLToPath(import.meta.url)), `proto/${FILE}`, `src/devicemanager/proto/${FILE}`);
}

/** The method table of v1beta1.Registration or v1beta1.DevicePlugin (keys are the RPC names). */
export function devicePluginService(service: string): protoLoader.ServiceDefinition {
  cached ??= protoLoader.loadSync(devicePluginProtoPath(), LOADER_OPTIONS);
  const def = cached[service];
  if (!def || 'format' in def || 'type' in def) throw new Error(`${service} missing from ${FILE}`);
  return def as protoLoader.ServiceDefinition;
}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;
const FIELD_CONTAINER_RESPONSES = 1;

/** The raw bytes of each `container_responses` (field 1) of an AllocateResponse, in wire order. */
export function containerResponseBytes(allocateResponse: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < allocateResponse.length) {
    const [tag, afterTag] = readVarint(allocateResponse, pos);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (wire === WIRE_LEN) {
      const [len, start] = readVarint(allocateResponse, afterTag);
      if (field === FIELD_CONTAINER_RESPONSES) out.push(allocateResponse.subarray(start, start + len));
      pos = start + len;
    } else pos = skipScalar(allocateResponse, afterTag, wire);
  }
  return out;
}

/** Decodes one ContainerAllocateResponse from its own bytes (as AllocResp holds them). */
export function decodeContainerResponse(bytes: Uint8Array): ContainerAllocateResponse {
  const method = devicePluginService(DEVICE_PLUGIN_SERVICE)['Allocate']!;
  const framed = Buffer.concat([
    Buffer.from([(FIELD_CONTAINER_RESPONSES << 3) | WIRE_LEN]),
    varint(bytes.length),
    bytes,
  ]);
  const decoded = method.responseDeserialize(framed) as { containerResponses: ContainerAllocateResponse[] };
  return decoded.containerResponses[0]!;
}

/** Encodes one ContainerAllocateResponse (for tests and for entries built here). */
export function encodeContainerResponse(resp: Partial<ContainerAllocateResponse>): Buffer {
  const method = devicePluginService(DEVICE_PLUGIN_SERVICE)['Allocate']!;
  return (
    containerResponseBytes(method.responseSerialize({ containerResponses: [resp] }) as Buffer)[0] ?? Buffer.alloc(0)
  );
}

function readVarint(buf: Buffer, pos: number): [number, number] {
  let value = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new DevicePluginError('AllocateResponse: truncated varint');
    const b = buf[pos++]!;
    value += (b & 0x7f) * mul;
    if (b < 0x80) return [value, pos];
    mul *= 128;
  }
}

function skipScalar(buf: Buffer, pos: number, wire: number): number {
  if (wire === WIRE_VARINT) return readVarint(buf, pos)[1];
  if (wire === WIRE_I64) return pos + 8;
  if (wire === WIRE_I32) return pos + 4;
  throw new DevicePluginError(`AllocateResponse: unsupported wire type ${wire}`);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
