/**
 * User namespaces for `hostUsers: false` pods (upstream pkg/kubelet/userns UsernsManager).
 *
 * The kubelet's ID range (kubelet-mappings.ts) is cut into blocks of idsPerPod IDs; each such
 * pod gets a free block, container IDs 0..idsPerPod-1 mapping to it for users and groups alike,
 * so no two pods (and never the host's own IDs below idsPerPod) share a host ID. The block is
 * checkpointed in the pod directory (`<root-dir>/pods/<uid>/userns`, upstream's JSON), read back
 * at the next sandbox of the pod and at a restart (every pod directory's file is recorded
 * again), and released when the pod directory goes or housekeeping finds the pod unknown.
 *
 * Pods with hostUsers unset or true get mode NODE (the host's user namespace), as upstream
 * with its UserNamespacesSupport gate on. A hostUsers:false pod whose runtime handler does not
 * report user namespace support is an error here, with upstream's words; admission refuses it
 * first (admit.ts).
 */
import { randomInt } from 'node:crypto';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '../../api/types.js';
import type { IDMapping, UserNamespace } from '../../cri/types.js';
import { ConfigError, KubeletError, kubeletErrorClass } from '../../errors.js';
import type { IdRange } from './kubelet-mappings.js';

/** A user namespace allocation or mappings file that cannot be used; the pod's sandbox fails with it. */
export class UsernsError extends kubeletErrorClass('KTS_ERR_SANDBOX') {}

/** upstream userNsUnitLength: idsPerPod is a multiple of it. */
export const USERNS_UNIT_LENGTH = 65536;
/** upstream DefaultKubeletUserNamespacesIDsPerPod. */
export const DEFAULT_IDS_PER_POD = 65536;
/** upstream mappingsFile, in the pod directory. */
export const MAPPINGS_FILE = 'userns';

/** What the manager needs of the kubelet (upstream userNsPodsManager). */
export interface UsernsPods {
  podDir(uid: string): string;
  /** UIDs of the pod directories under <root-dir>/pods. */
  listPodsFromDisk(): Promise<string[]>;
  /** upstream HandlerSupportsUserNamespaces: throws when the handlers are unknown. */
  handlerSupportsUserNamespaces(handler: string): boolean;
  maxPods: number;
}

/** The checkpoint's JSON (upstream userNamespace / idMapping). */
interface MappingsFile {
  uidMappings: IDMapping[];
  gidMappings: IDMapping[];
}

const NODE_MODE: UserNamespace = { mode: 'NODE', uids: [], gids: [] };

/** upstream's refusal, word for word; shared with admission. */
export function unsupportedMessage(handler: string): string {
  return handler === ''
    ? "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
    : `can't set \`spec.hostUsers: false\`, RuntimeClass handler "${handler}" does not support user namespaces`;
}

/** Why `handler` cannot run a hostUsers:false pod, or undefined when it can. */
export function handlerRefusal(pods: Pick<UsernsPods, 'handlerSupportsUserNamespaces'>, handler: string) {
  try {
    return pods.handlerSupportsUserNamespaces(handler) ? undefined : unsupportedMessage(handler);
  } catch (err) {
    return `${unsupportedMessage(handler)}: ${(err as Error).message}`;
  }
}

/** upstream MakeUserNsManager's checks of the kubelet range against idsPerPod and maxPods. */
function checkRange(range: IdRange, idsPerPod: number, maxPods: number): string | undefined {
  const { first, length } = range;
  if (idsPerPod % USERNS_UNIT_LENGTH !== 0)
    return `kubelet user namespace length ${idsPerPod} is not a multiple of ${USERNS_UNIT_LENGTH}`;
  if (first % idsPerPod !== 0) return `kubelet user assigned ID ${first} is not a multiple of ${idsPerPod}`;
  // ID 0 (host root) must never be mapped.
  if (first < idsPerPod) return `kubelet user assigned ID ${first} must be greater or equal to ${idsPerPod}`;
  if (length % idsPerPod !== 0) return `kubelet user assigned IDs length ${length} is not a multiple of ${idsPerPod}`;
  // The last ID handed out stays below 4294967295, the kernel's invalid ID.
  if (first + length > 0xffff_ffff)
    return `kubelet user assigned IDs ${first}+${length} reach the invalid ID 4294967295`;
  if (length / idsPerPod < maxPods) return `kubelet user assigned IDs are not enough to support ${maxPods} pods`;
  return undefined;
}

/** A bit per block, allocated from a random start (upstream allocator.NewAllocationMap). */
class BlockMap {
  private readonly used: Uint8Array;
  constructor(readonly size: number) {
    this.used = new Uint8Array(size);
  }
  has(i: number): boolean {
    return this.used[i] === 1;
  }
  set(i: number, v: boolean): void {
    this.used[i] = v ? 1 : 0;
  }
  /** A free block, marked used; undefined when every block is taken. */
  allocateNext(): number | undefined {
    const start = randomInt(this.size);
    for (let k = 0; k < this.size; k++) {
      const i = (start + k) % this.size;
      if (this.used[i] === 0) {
        this.used[i] = 1;
        return i;
      }
    }
    return undefined;
  }
}

export class UsernsManager {
  private readonly used: BlockMap;
  /** pod UID → the first host ID of its block. */
  private readonly usedBy = new Map<string, number>();
  private readonly off: number;
  /** Serializes the read-check-allocate-write of getOrCreate (upstream's lock). */
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly pods: UsernsPods,
    readonly idsPerPod: number,
    range: IdRange,
  ) {
    this.off = range.first / idsPerPod;
    this.used = new BlockMap(range.length / idsPerPod);
  }

  /** upstream MakeUserNsManager: checks the range, then records every pod directory's checkpoint. */
  static async create(pods: UsernsPods, range: IdRange, idsPerPod = DEFAULT_IDS_PER_POD): Promise<UsernsManager> {
    const problem = checkRange(range, idsPerPod, pods.maxPods);
    if (problem) throw new ConfigError([`user namespaces: ${problem}`]);
    const m = new UsernsManager(pods, idsPerPod, range);
    let found: string[];
    try {
      found = await pods.listPodsFromDisk();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return m;
      throw new ConfigError([`user namespaces: read pods from disk: ${(err as Error).message}`]);
    }
    for (const uid of found) {
      try {
        await m.recordPodMappings(uid);
      } catch (err) {
        throw new ConfigError([`user namespaces: record pod mappings for existing pod "${uid}": ${errText(err)}`]);
      }
    }
    return m;
  }

  private file(uid: string): string {
    return join(this.pods.podDir(uid), MAPPINGS_FILE);
  }

  private async readMappings(uid: string): Promise<string> {
    try {
      return await readFile(this.file(uid), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw err;
    }
  }

  /** upstream recordPodMappings: a pod directory without the file is a pod without a user namespace. */
  private async recordPodMappings(uid: string): Promise<void> {
    const content = await this.readMappings(uid);
    if (content !== '') this.parseAndRecord(uid, content);
  }

  /** upstream isSet: is the block holding host ID `id` taken (out of range counts as taken)? */
  isSet(id: number): boolean {
    const i = Math.floor(id / this.idsPerPod) - this.off;
    return i < 0 || i >= this.used.size || this.used.has(i);
  }

  /** upstream allocateOne: a free block for the pod; its first host ID and length. */
  allocateOne(uid: string): { first: number; length: number } {
    const i = this.used.allocateNext();
    if (i === undefined) throw new UsernsError('could not find an empty slot to allocate a user namespace');
    const first = (i + this.off) * this.idsPerPod;
    this.usedBy.set(uid, first);
    return { first, length: this.idsPerPod };
  }

  /** upstream record: marks [from, from+length) as the pod's (idempotent for the same range). */
  record(uid: string, from: number, length: number): void {
    if (length !== this.idsPerPod) throw new UsernsError(`wrong user namespace length ${length}`);
    if (from % this.idsPerPod !== 0) throw new UsernsError(`wrong user namespace offset specified ${from}`);
    const prev = this.usedBy.get(uid);
    if (prev !== undefined && prev !== from)
      throw new UsernsError(`different user namespace range already used by pod "${uid}"`);
    const i = from / this.idsPerPod - this.off;
    if (i < 0 || i >= this.used.size) throw new UsernsError(`id ${from} is out of range`);
    if (prev === from) return;
    if (this.used.has(i)) throw new UsernsError(`range picked for pod "${uid}" already taken`);
    this.used.set(i, true);
    this.usedBy.set(uid, from);
  }

  /** upstream podAllocated. */
  podAllocated(uid: string): boolean {
    return this.usedBy.has(uid);
  }

  /** upstream Release: frees the pod's block and removes its checkpoint. */
  async release(uid: string): Promise<void> {
    const from = this.usedBy.get(uid);
    if (from === undefined) return;
    this.usedBy.delete(uid);
    this.used.set(from / this.idsPerPod - this.off, false);
    await rm(this.file(uid), { force: true }).catch(() => undefined);
  }

  /** upstream parseUserNsFileAndRecord: only what this manager writes is accepted. */
  parseAndRecord(uid: string, content: string): MappingsFile {
    const ns = parseMappings(content);
    const u = ns.uidMappings[0]!;
    this.record(uid, u.hostId, u.length);
    return ns;
  }

  /**
   * upstream GetOrCreateUserNamespaceMappings: NODE unless hostUsers is false; then the pod's
   * checkpointed block, or a new one (checkpointed before it is returned).
   */
  getOrCreateUserNamespaceMappings(pod: Pod, handler: string): Promise<UserNamespace> {
    if (pod.spec?.hostUsers !== false) return Promise.resolve(NODE_MODE);
    const refusal = handlerRefusal(this.pods, handler);
    if (refusal) return Promise.reject(new KubeletError('KTS_ERR_SANDBOX', refusal));
    const next = this.chain.then(() => this.podMappings(pod.metadata?.uid ?? ''));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async podMappings(uid: string): Promise<UserNamespace> {
    const content = await this.readMappings(uid);
    let ns: MappingsFile;
    try {
      ns = content !== '' ? this.parseAndRecord(uid, content) : await this.create(uid);
    } catch (err) {
      const what = content !== '' ? 'user namespace' : 'create user namespace';
      throw new KubeletError('KTS_ERR_SANDBOX', `${what}: ${errText(err)}`, { cause: err });
    }
    return { mode: 'POD', uids: ns.uidMappings, gids: ns.gidMappings };
  }

  private async create(uid: string): Promise<MappingsFile> {
    const { first, length } = this.allocateOne(uid);
    const one = (): IDMapping[] => [{ hostId: first, containerId: 0, length }];
    const ns: MappingsFile = { uidMappings: one(), gidMappings: one() };
    try {
      await writeDurably(this.pods.podDir(uid), JSON.stringify(ns));
    } catch (err) {
      await this.release(uid);
      throw err;
    }
    return ns;
  }

  /**
   * upstream CleanupOrphanedPodUsernsAllocations: frees the blocks of pods neither `known` (the
   * desired pods, their workers and the runtime's pods) nor with a pod directory any more.
   */
  async cleanupOrphaned(known: ReadonlySet<string>): Promise<void> {
    const found = await this.pods.listPodsFromDisk();
    const onDisk = new Set(found);
    for (const uid of found) if (!known.has(uid)) await this.release(uid);
    for (const uid of [...this.usedBy.keys()]) if (!onDisk.has(uid)) await this.release(uid);
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const isMapping = (m: unknown): m is IDMapping =>
  typeof m === 'object' &&
  m !== null &&
  ['hostId', 'containerId', 'length'].every((k) => Number.isInteger((m as Record<string, unknown>)[k]));

/** The checkpoint's content, checked as upstream's parseUserNsFileAndRecord checks it. */
function parseMappings(content: string): MappingsFile {
  let raw: { uidMappings?: unknown; gidMappings?: unknown };
  try {
    raw = JSON.parse(content) as typeof raw;
  } catch (err) {
    throw new UsernsError(`invalid user namespace mappings file: ${errText(err)}`, { cause: err });
  }
  const uids = Array.isArray(raw?.uidMappings) ? raw.uidMappings : [];
  const gids = Array.isArray(raw?.gidMappings) ? raw.gidMappings : [];
  if (uids.length !== 1)
    throw new UsernsError('invalid user namespace configuration: no more than one mapping allowed.');
  if (uids.length !== gids.length)
    throw new UsernsError('invalid user namespace configuration: GID and UID mappings should be identical.');
  const [u, g] = [uids[0], gids[0]];
  if (!isMapping(u) || !isMapping(g)) throw new UsernsError('invalid user namespace mappings file: bad mapping');
  if (u.hostId !== g.hostId || u.containerId !== g.containerId || u.length !== g.length)
    throw new UsernsError('invalid user namespace configuration: GID and UID mapping should be identical');
  if (u.containerId !== 0) throw new UsernsError('invalid user namespace configuration: UID 0 must be mapped');
  return { uidMappings: [{ ...u }], gidMappings: [{ ...g }] };
}

/** Atomic (temp file + rename) and durable (the directory synced) write of the checkpoint. */
async function writeDurably(dir: string, data: string): Promise<void> {
  const tmp = join(dir, `.${MAPPINGS_FILE}.tmp`);
  await writeFile(tmp, data, { mode: 0o600 });
  await rename(tmp, join(dir, MAPPINGS_FILE));
  const fd = await open(dir, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}
