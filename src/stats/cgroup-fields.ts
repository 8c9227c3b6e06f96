/**
 * The cgroup stats table shared by the native reader (native/src/cgroup_stats.h) and its
 * TypeScript twin: one row of FIELD_COUNT uint64 slots per cgroup, MISSING where a file is
 * absent or holds no such key, and the file kinds that fill them. Keep both sides in step.
 */

export const MISSING = 0xffff_ffff_ffff_ffffn;

export const F = {
  cpuUsageNs: 0,
  cpuUserNs: 1,
  cpuSystemNs: 2,
  memUsage: 3,
  memLimit: 4,
  memInactiveFile: 5,
  memRss: 6,
  memPgfault: 7,
  memPgmajfault: 8,
  oomKill: 9,
  oom: 10,
  memFailcnt: 11,
  pids: 12,
  ioRead: 13,
  ioWrite: 14,
  memCache: 15,
  psiCpuSome: 16,
  psiCpuFull: 17,
  psiMemSome: 18,
  psiMemFull: 19,
  psiIoSome: 20,
  psiIoFull: 21,
  cpuPeriods: 22,
  cpuThrottled: 23,
  cpuThrottledNs: 24,
} as const;
export const FIELD_COUNT = 25;

export const K = {
  /** One decimal value into `slot`; "max" is missing. */
  single: 0,
  /** cgroup v1 memory.limit_in_bytes: ≥ 2^62 means unlimited (missing). */
  limitV1: 1,
  cpuStatV2: 2,
  memStatV2: 3,
  memEventsV2: 4,
  memStatV1: 5,
  oomControlV1: 6,
  ioStatV2: 7,
  blkioV1: 8,
  /** PSI file: "some … total=N" into `slot`, "full … total=N" into slot + 1. */
  psi: 9,
  cpuStatV1: 10,
} as const;
export type FileKind = (typeof K)[keyof typeof K];

/**
 * Why a file is read, one bit each. A pass reads only the files whose bit is in its mask: every
 * file costs a syscall (and on cgroupfs the kernel formats it anew: ~0.65 µs for a one-value
 * file, ~8 µs for a v1 memory.stat), so files with few consumers are read only when wanted:
 * limits change only on a resize; `cadvisor` files (io, and on v1 cpu user/system and failcnt)
 * only feed /metrics/cadvisor; `throttling` (v1 cpu.stat) has no consumer yet.
 */
export const NEED = { usage: 1, limits: 2, cadvisor: 4, psi: 8, throttling: 16 } as const;
/** Every file (the default of CgroupReader.read). */
export const NEED_ALL = 0xffff_ffff;

/** One file of one cgroup in a pass. */
export interface CgroupFileSpec {
  path: string;
  kind: FileKind;
  /** Row in the output table. */
  group: number;
  /** Target slot for single/limitV1/psi kinds (ignored by keyed kinds). */
  slot: number;
  /** NEED bit(s) of this file; absent or 0: read in every pass. */
  need?: number;
}

/** Whether a pass with `mask` reads this file. */
export const wanted = (spec: CgroupFileSpec, mask: number): boolean => !spec.need || (spec.need & mask) !== 0;

type KeyMap = Record<string, readonly [slot: number, scale: bigint]>;
const KEYED: Partial<Record<number, KeyMap>> = {
  [K.cpuStatV2]: {
    usage_usec: [F.cpuUsageNs, 1000n],
    user_usec: [F.cpuUserNs, 1000n],
    system_usec: [F.cpuSystemNs, 1000n],
    nr_periods: [F.cpuPeriods, 1n],
    nr_throttled: [F.cpuThrottled, 1n],
    throttled_usec: [F.cpuThrottledNs, 1000n],
  },
  [K.memStatV2]: {
    inactive_file: [F.memInactiveFile, 1n],
    anon: [F.memRss, 1n],
    pgfault: [F.memPgfault, 1n],
    pgmajfault: [F.memPgmajfault, 1n],
    file: [F.memCache, 1n],
  },
  [K.memEventsV2]: { oom: [F.oom, 1n], oom_kill: [F.oomKill, 1n], max: [F.memFailcnt, 1n] },
  [K.memStatV1]: {
    total_inactive_file: [F.memInactiveFile, 1n],
    total_rss: [F.memRss, 1n],
    total_pgfault: [F.memPgfault, 1n],
    total_pgmajfault: [F.memPgmajfault, 1n],
    total_cache: [F.memCache, 1n],
  },
  [K.oomControlV1]: { oom_kill: [F.oomKill, 1n] },
  [K.cpuStatV1]: {
    nr_periods: [F.cpuPeriods, 1n],
    nr_throttled: [F.cpuThrottled, 1n],
    throttled_time: [F.cpuThrottledNs, 1n],
  },
};

const U64_MAX = MISSING;
const DIGITS = /^[0-9]{1,20}$/;

/** An exact decimal uint64, or undefined (empty, not digits, overflow). */
function parseU64(s: string): bigint | undefined {
  if (!DIGITS.test(s)) return undefined;
  const v = BigInt(s);
  return v > U64_MAX ? undefined : v;
}

/** Space-separated tokens of each line (at most 8 per line, as the native parser). */
function lines(text: string): string[][] {
  const out: string[][] = [];
  for (const line of text.split('\n')) {
    const tok = line
      .split(' ')
      .filter((t) => t !== '')
      .slice(0, 8);
    if (tok.length > 0) out.push(tok);
  }
  return out;
}

function addTo(row: BigUint64Array, base: number, slot: number, v: bigint): void {
  const cur = row[base + slot] === MISSING ? 0n : row[base + slot]!;
  row[base + slot] = cur > MISSING - 1n - v ? MISSING - 1n : cur + v;
}

function trim(text: string): string {
  return text.replace(/^[ \n]+|[ \n]+$/g, '');
}

/** The TypeScript twin of ParseCgroupFile: one file's text into row[base .. base+FIELD_COUNT). */
// eslint-disable-next-line @typescript-eslint/max-params -- per cgroup file per stats pass, the native signature
export function parseCgroupFile(kind: number, slot: number, text: string, row: BigUint64Array, base = 0): void {
  if (kind === K.single || kind === K.limitV1) {
    if (slot >= FIELD_COUNT) return;
    const v = parseU64(trim(text));
    if (v === undefined || (kind === K.limitV1 && v >= 1n << 62n)) return;
    row[base + slot] = v;
    return;
  }
  const map = KEYED[kind];
  if (map) {
    for (const tok of lines(text)) {
      if (tok.length !== 2 || !Object.hasOwn(map, tok[0]!)) continue;
      const [s, scale] = map[tok[0]!]!;
      const v = parseU64(tok[1]!);
      if (v !== undefined && v * scale <= U64_MAX) row[base + s] = v * scale;
    }
    return;
  }
  if (kind === K.ioStatV2) {
    for (const tok of lines(text)) {
      for (const t of tok.slice(1)) {
        const r = t.startsWith('rbytes=') ? parseU64(t.slice(7)) : undefined;
        if (r !== undefined) addTo(row, base, F.ioRead, r);
        const w = t.startsWith('wbytes=') ? parseU64(t.slice(7)) : undefined;
        if (w !== undefined) addTo(row, base, F.ioWrite, w);
      }
    }
  } else if (kind === K.blkioV1) {
    for (const tok of lines(text)) {
      const v = tok.length === 3 ? parseU64(tok[2]!) : undefined;
      if (v === undefined) continue;
      if (tok[1] === 'Read') addTo(row, base, F.ioRead, v);
      if (tok[1] === 'Write') addTo(row, base, F.ioWrite, v);
    }
  } else if (kind === K.psi) {
    if (slot + 1 >= FIELD_COUNT) return;
    for (const tok of lines(text)) {
      const target = tok[0] === 'some' ? slot : tok[0] === 'full' ? slot + 1 : -1;
      if (target < 0) continue;
      for (const t of tok.slice(1)) {
        const v = t.startsWith('total=') ? parseU64(t.slice(6)) : undefined;
        if (v !== undefined) row[base + target] = v;
      }
    }
  }
}

/** A slot's value, or undefined when missing. */
export function field(row: BigUint64Array, group: number, f: number): bigint | undefined {
  const v = row[group * FIELD_COUNT + f]!;
  return v === MISSING ? undefined : v;
}
