/**
 * The device manager checkpoint, <root-dir>/device-plugins/kubelet_internal_checkpoint, byte
 * compatible with upstream (cm/devicemanager/checkpoint/checkpoint.go, checkpointmanager): Go's
 * encoding/json of `{"Data":{"PodDeviceEntries":[…],"RegisteredDevices":{…}},"Checksum":N}`, where
 * N is FNV-32a over go-spew's `%#v` of Data (hashutil.DeepHashObject). So a node taken over from
 * upstream keeps its allocations, and upstream accepts what we write.
 *
 * The checksum is computed over the arrays in file order and distinguishes a nil slice or map
 * (`null` in the file, `<nil>` in the hash) from an empty one (`[]`/`{}`, `[]`/`map[]`), so the
 * decoded form keeps that distinction and keeps AllocResp as the raw bytes read.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DeviceCheckpointError } from '../errors.js';
import { fnv32a, goJsonString, spewBytes } from '../util/go-hash.js';
import { CHECKPOINT_FILE } from './constants.js';

/** DevicesPerNUMA: NUMA node → device IDs (null: a nil slice). */
export type DevicesPerNuma = Map<number, string[] | null>;

export interface PodDevicesEntry {
  podUid: string;
  containerName: string;
  resourceName: string;
  /** null: a nil map. */
  deviceIds: DevicesPerNuma | null;
  /** The ContainerAllocateResponse's wire bytes as the plugin sent them; null: nil. */
  allocResp: Buffer | null;
}

export interface CheckpointData {
  /** null: nil (upstream writes null when there is no entry). */
  podDeviceEntries: PodDevicesEntry[] | null;
  /** resource → healthy device IDs, in file order; null: nil. */
  registeredDevices: Map<string, string[] | null> | null;
}

/** upstream errors.ErrCorruptCheckpoint's text. */
const CORRUPT = 'checkpoint is corrupted';

/** checksum.New(data): FNV-32a of go-spew's `%#v` of checkpointData. */
export function checkpointChecksum(data: CheckpointData): number {
  const entries = data.podDeviceEntries === null ? '<nil>' : `[${data.podDeviceEntries.map(spewEntry).join(' ')}]`;
  const registered = data.registeredDevices === null ? '<nil>' : spewStringMap(data.registeredDevices);
  return fnv32a(
    `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${entries} ` +
      `RegisteredDevices:(map[string][]string)${registered}}`,
  );
}

function spewEntry(e: PodDevicesEntry): string {
  const ids = e.deviceIds === null ? '<nil>' : spewNumaMap(e.deviceIds);
  const resp = e.allocResp === null ? '<nil>' : spewBytes(e.allocResp);
  return (
    `{PodUID:(string)${e.podUid} ContainerName:(string)${e.containerName} ResourceName:(string)${e.resourceName} ` +
    `DeviceIDs:(checkpoint.DevicesPerNUMA)${ids} AllocResp:([]uint8)${resp}}`
  );
}

/** go-spew with SortKeys: int64 keys numerically. */
function spewNumaMap(m: DevicesPerNuma): string {
  const keys = [...m.keys()].sort((a, b) => a - b);
  return `map[${keys.map((k) => `${k}:${spewStrings(m.get(k)!)}`).join(' ')}]`;
}

/** go-spew with SortKeys: string keys bytewise. */
function spewStringMap(m: Map<string, string[] | null>): string {
  const keys = [...m.keys()].sort(compareBytes);
  return `map[${keys.map((k) => `${k}:${spewStrings(m.get(k)!)}`).join(' ')}]`;
}

function spewStrings(list: string[] | null): string {
  return list === null ? '<nil>' : `[${list.join(' ')}]`;
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The file's text: Go's json.Marshal of Data{Data, Checksum} (map keys sorted as Go sorts them). */
export function encodeCheckpoint(data: CheckpointData): string {
  const entries = data.podDeviceEntries === null ? 'null' : `[${data.podDeviceEntries.map(jsonEntry).join(',')}]`;
  const registered =
    data.registeredDevices === null
      ? 'null'
      : jsonObject([...data.registeredDevices].map(([k, v]) => [k, jsonStrings(v)]));
  return `{"Data":{"PodDeviceEntries":${entries},"RegisteredDevices":${registered}},"Checksum":${checkpointChecksum(data)}}`;
}

function jsonEntry(e: PodDevicesEntry): string {
  const ids = e.deviceIds === null ? 'null' : jsonObject([...e.deviceIds].map(([k, v]) => [String(k), jsonStrings(v)]));
  const resp = e.allocResp === null ? 'null' : `"${e.allocResp.toString('base64')}"`;
  return (
    `{"PodUID":${goJsonString(e.podUid)},"ContainerName":${goJsonString(e.containerName)},` +
    `"ResourceName":${goJsonString(e.resourceName)},"DeviceIDs":${ids},"AllocResp":${resp}}`
  );
}

/** encoding/json sorts map keys by their string form, bytewise ("-1" < "0" < "10" < "2"). */
function jsonObject(pairs: Array<[string, string]>): string {
  const sorted = [...pairs].sort(([a], [b]) => compareBytes(a, b));
  return `{${sorted.map(([k, v]) => `${goJsonString(k)}:${v}`).join(',')}}`;
}

function jsonStrings(list: string[] | null): string {
  return list === null ? 'null' : `[${list.map(goJsonString).join(',')}]`;
}

/**
 * Parses and verifies a checkpoint's text, as upstream's GetCheckpoint does (json.Unmarshal into a
 * checkpoint whose entries and map start empty, then the checksum): throws DeviceCheckpointError.
 */
export function decodeCheckpoint(text: string): CheckpointData {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new DeviceCheckpointError(`${CHECKPOINT_FILE}: not JSON: ${(err as Error).message}`, { cause: err });
  }
  const top = asObject(raw, 'the checkpoint');
  const body = top['Data'] === undefined ? {} : asObject(top['Data'], 'Data');
  const data: CheckpointData = {
    podDeviceEntries: body['PodDeviceEntries'] === undefined ? [] : nullable(body['PodDeviceEntries'], decodeEntries),
    registeredDevices:
      body['RegisteredDevices'] === undefined
        ? new Map()
        : nullable(body['RegisteredDevices'], (v) => decodeStringMap(v, 'RegisteredDevices')),
  };
  const sum = top['Checksum'];
  if (typeof sum !== 'number' || sum !== checkpointChecksum(data))
    throw new DeviceCheckpointError(`${CHECKPOINT_FILE}: ${CORRUPT} (checksum mismatch)`);
  return data;
}

function nullable<T>(v: unknown, decode: (v: unknown) => T): T | null {
  return v === null ? null : decode(v);
}

function decodeEntries(v: unknown): PodDevicesEntry[] {
  if (!Array.isArray(v)) throw shape('PodDeviceEntries is not an array');
  return v.map((item, i) => {
    const o = asObject(item, `PodDeviceEntries[${i}]`);
    return {
      podUid: str(o['PodUID'], 'PodUID'),
      containerName: str(o['ContainerName'], 'ContainerName'),
      resourceName: str(o['ResourceName'], 'ResourceName'),
      deviceIds: o['DeviceIDs'] === undefined ? null : nullable(o['DeviceIDs'], decodeNumaMap),
      allocResp: o['AllocResp'] === undefined ? null : nullable(o['AllocResp'], decodeBase64),
    };
  });
}

function decodeNumaMap(v: unknown): DevicesPerNuma {
  const out: DevicesPerNuma = new Map();
  for (const [k, ids] of decodeStringMap(v, 'DeviceIDs')) {
    if (!/^-?\d+$/.test(k)) throw shape(`DeviceIDs key ${JSON.stringify(k)} is not a NUMA node number`);
    out.set(Number(k), ids);
  }
  return out;
}

function decodeStringMap(v: unknown, what: string): Map<string, string[] | null> {
  const o = asObject(v, what);
  const out = new Map<string, string[] | null>();
  for (const [k, list] of Object.entries(o)) {
    if (list !== null && !(Array.isArray(list) && list.every((s) => typeof s === 'string')))
      throw shape(`${what}[${JSON.stringify(k)}] is not a list of strings`);
    out.set(k, list as string[] | null);
  }
  return out;
}

function decodeBase64(v: unknown): Buffer {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0)
    throw shape('AllocResp is not base64');
  return Buffer.from(v, 'base64');
}

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw shape(`${what} is not an object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, what: string): string {
  if (v === undefined) return '';
  if (typeof v !== 'string') throw shape(`${what} is not a string`);
  return v;
}

function shape(why: string): DeviceCheckpointError {
  return new DeviceCheckpointError(`${CHECKPOINT_FILE}: ${why}`);
}

/** Reads and verifies <dir>/kubelet_internal_checkpoint; undefined when there is none. */
export function readCheckpointFile(dir: string): CheckpointData | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DeviceCheckpointError(`${CHECKPOINT_FILE}: cannot read: ${(err as Error).message}`, { cause: err });
  }
  return decodeCheckpoint(text);
}

/** Writes the checkpoint as upstream's file store does: a temporary file (0600) in the same directory, synced, renamed. */
export function writeCheckpointFile(dir: string, data: CheckpointData): void {
  const target = join(dir, CHECKPOINT_FILE);
  const tmp = join(dir, `.${CHECKPOINT_FILE}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, encodeCheckpoint(data));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, target);
}
