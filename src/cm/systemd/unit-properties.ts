/**
 * Typed builders for the unit properties a pod slice needs, with the D-Bus types systemd expects
 * (systemd's org.freedesktop.systemd1(5) / systemd.resource-control(5); runc
 * libcontainer/cgroups/systemd/common.go and v1.go/v2.go build the same a(sv) entries).
 * 64-bit values accept a bigint or a safe integer number.
 */
import type { DBusValue } from './dbus-values.js';
import type { UnitProperty } from './types.js';

type U64 = bigint | number;

/** Any property: `sig` must be the D-Bus type systemd declares for `name`. */
export function unitProperty(name: string, sig: string, value: DBusValue): UnitProperty {
  return { name, value: { sig, value } };
}

const bool = (name: string) => (v: boolean) => unitProperty(name, 'b', v);
const u64 = (name: string) => (v: U64) => unitProperty(name, 't', typeof v === 'number' ? BigInt(v) : v);

export const slice = {
  description: (v: string) => unitProperty('Description', 's', v),
  wants: (units: string[]) => unitProperty('Wants', 'as', units),
  defaultDependencies: bool('DefaultDependencies'),
  memoryAccounting: bool('MemoryAccounting'),
  cpuAccounting: bool('CPUAccounting'),
  ioAccounting: bool('IOAccounting'),
  tasksAccounting: bool('TasksAccounting'),
  delegate: bool('Delegate'),
  /** cgroup v2 cpu.weight (1..10000). */
  cpuWeight: u64('CPUWeight'),
  /** cgroup v1 cpu.shares. */
  cpuShares: u64('CPUShares'),
  /** CPU time per second of wall time, in µs: quota × 1e6 / period (runc's CPUQuotaPerSecUSec). */
  cpuQuotaPerSecUSec: u64('CPUQuotaPerSecUSec'),
  cpuQuotaPeriodUSec: u64('CPUQuotaPeriodUSec'),
  /** cgroup v2 memory.max, bytes; 2^64-1 (UNLIMITED) for no limit. */
  memoryMax: u64('MemoryMax'),
  /** cgroup v1 memory.limit_in_bytes. */
  memoryLimit: u64('MemoryLimit'),
  tasksMax: u64('TasksMax'),
};

/** systemd's "infinity" for 64-bit limits (CGROUP_LIMIT_MAX, and what runc passes for -1). */
export const UNLIMITED = 2n ** 64n - 1n;

/**
 * The object path of a unit as systemd builds it (sd_bus_path_encode, "bus_path_escape"): the
 * prefix /org/freedesktop/systemd1/unit/ and the name with every byte other than [A-Za-z0-9]
 * written as "_" and two lowercase hex digits; a leading digit is escaped too, and "" becomes "_"
 * (systemd src/basic/bus-label.c). GetUnit returns the same path for a loaded unit.
 */
export function unitObjectPath(name: string): string {
  const escaped = [...Buffer.from(name, 'utf8')]
    .map((b, i) =>
      isLetter(b) || (i > 0 && isDigit(b)) ? String.fromCharCode(b) : `_${b.toString(16).padStart(2, '0')}`,
    )
    .join('');
  return `/org/freedesktop/systemd1/unit/${escaped === '' ? '_' : escaped}`;
}

function isLetter(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}
