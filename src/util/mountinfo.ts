/**
 * /proc/self/mountinfo, parsed in one place (the volume mounter, the cgroup mounts, the tmpfs
 * test of volume stats). The file is large on a node (every pod adds its mounts: ~250 KiB at
 * idle here), and a substring V8 cuts out of it keeps the whole text alive: what a caller keeps
 * for long goes through `detachString`.
 */
import { readFileSync } from 'node:fs';

export const MOUNTINFO = '/proc/self/mountinfo';

export interface MountInfo {
  mountPoint: string;
  fsType: string;
  source: string;
  superOptions: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\ooo). */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mounts of a mountinfo text; lines without the " - " separator are skipped. */
export function parseMountInfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const right = line.slice(sep + 3).split(' ');
    out.push({
      mountPoint: unescapeMount(left[4] ?? ''),
      fsType: right[0] ?? '',
      source: unescapeMount(right[1] ?? ''),
      superOptions: right[2] ?? '',
    });
  }
  return out;
}

/** The inverse of unescapeMount for the characters the kernel escapes (show_mountinfo's " \t\n\\"). */
function escapeMount(s: string): string {
  return s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The mount points strictly below `prefix` (which ends in "/"), deepest first, each once. Most
 * asks find none (a pod's subPath or volume directory on a node of many mounts): a text that does
 * not hold the escaped prefix at all is not parsed, and only lines that hold it are (issue 30: a
 * 100-pod delete read and parsed the whole table several times a pod).
 */
export function mountPointsUnder(text: string, prefix: string): string[] {
  const escaped = escapeMount(prefix);
  if (!text.includes(escaped)) return [];
  const lines = text.split('\n').filter((l) => l.includes(escaped));
  const points = parseMountInfo(lines.join('\n'))
    .map((m) => m.mountPoint)
    .filter((p) => p.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** This process's mounts, read synchronously; none when the file cannot be read. */
export function readMountInfoSync(path = MOUNTINFO): MountInfo[] {
  try {
    return parseMountInfo(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/**
 * A copy of s that shares no memory with the text it was cut from. V8 represents a substring
 * as a slice of its parent, so one mount point kept in a map would keep the whole mountinfo text
 * (two such texts were 0.5 MiB of an idle agent's 22 MiB heap snapshot).
 */
export function detachString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
