/**
 * The host IDs the kubelet may hand out to pod user namespaces (upstream kubelet_pods.go
 * getKubeletMappings). When the node has a `kubelet` user, its subordinate ID range, read from
 * /etc/subuid and /etc/subgid (what upstream's `getsubids kubelet` and `getsubids -g kubelet`
 * print from the same files), is the range; the two files must give the same single range.
 * Without such a user, upstream's default: every whole block of idsPerPod IDs from idsPerPod up
 * (the block of IDs 0..idsPerPod-1, host root included, is never used) that stops short of
 * 4294967295, the kernel's invalid ID.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../errors.js';

/** upstream kubeletUser. */
export const KUBELET_USER = 'kubelet';
/** The kernel's (uid_t)-1: no mapping may reach it. */
export const INVALID_ID = 0xffff_ffff;

export interface IdRange {
  first: number;
  length: number;
}

/** Where the node's user and subordinate ID databases are (tests point them elsewhere). */
export interface IdFiles {
  passwd: string;
  subuid: string;
  subgid: string;
}

export const SYSTEM_ID_FILES: IdFiles = { passwd: '/etc/passwd', subuid: '/etc/subuid', subgid: '/etc/subgid' };

/** upstream's default range for idsPerPod: whole blocks from idsPerPod, ending before INVALID_ID. */
export function defaultMappings(idsPerPod: number): IdRange {
  const blocks = Math.floor((INVALID_ID - idsPerPod) / idsPerPod);
  return { first: idsPerPod, length: blocks * idsPerPod };
}

/** The numeric UID of `user` in a passwd file's text, or undefined when it has no line. */
export function passwdUid(text: string, user: string): string | undefined {
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === user && f.length >= 3) return f[2];
  }
  return undefined;
}

/**
 * The one subordinate range of `user` (by name or UID) in a subuid/subgid file's text. Like
 * upstream's parse of getsubids' output: exactly one range, two unsigned 32-bit numbers.
 */
export function subIdRange(text: string, user: string, uid: string | undefined, file: string): IdRange {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .filter((l) => {
      const owner = l.split(':')[0];
      return owner === user || (uid !== undefined && owner === uid);
    });
  if (lines.length === 0) throw new ConfigError([`${file}: no subordinate ID range for user "${user}"`]);
  if (lines.length > 1) throw new ConfigError([`${file}: user "${user}" must have exactly one range`]);
  const f = lines[0]!.split(':');
  const nums = f.slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
  if (f.length !== 3 || !nums.every((n) => Number.isInteger(n) && n <= INVALID_ID))
    throw new ConfigError([`${file}: invalid line ${JSON.stringify(lines[0])}`]);
  return { first: nums[0]!, length: nums[1]! };
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** upstream getKubeletMappings(idsPerPod): the kubelet user's range, or the default one. */
export async function getKubeletMappings(idsPerPod: number, files: IdFiles = SYSTEM_ID_FILES): Promise<IdRange> {
  const passwd = (await readOptional(files.passwd)) ?? '';
  const uid = passwdUid(passwd, KUBELET_USER);
  if (uid === undefined) return defaultMappings(idsPerPod);
  const read = async (file: string): Promise<IdRange> =>
    subIdRange((await readOptional(file)) ?? '', KUBELET_USER, uid, file);
  const users = await read(files.subuid);
  const groups = await read(files.subgid);
  if (users.first !== groups.first || users.length !== groups.length)
    throw new ConfigError([`"${KUBELET_USER}" has different mappings for users and groups`]);
  return users;
}
