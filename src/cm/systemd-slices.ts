/**
 * The systemd driver's slice operations over systemd's D-Bus API (systemd/): the properties
 * runc's systemd manager gives a slice it creates (no default dependencies, accounting on, the
 * parent slice wanted) plus the limits, and a start-up connection that fails with an error an
 * operator can act on.
 */
import { KubeletError } from '../errors.js';
import {
  SystemdManager,
  slice,
  type SystemdManagerOptions,
  type SystemdUnitManager,
  type UnitProperty,
} from './systemd/index.js';
import type { SliceProperties, SliceUnits } from './systemd-cgroup-manager.js';

/** cgroupDriver is systemd but no systemd manager answers. */
export class SystemdUnavailableError extends KubeletError {
  /** fromRuntime: the driver came from the runtime's RuntimeConfig, whatever cgroupDriver says. */
  constructor(detail: string, options?: { cause?: unknown; fromRuntime?: boolean }) {
    const why = options?.fromRuntime
      ? 'the container runtime reports the systemd cgroup driver (CRI RuntimeConfig), which wins over cgroupDriver,'
      : 'cgroupDriver is "systemd"';
    const fix = options?.fromRuntime
      ? "or set SystemdCgroup = false in containerd's runc options and restart it"
      : "or set cgroupDriver: cgroupfs (and SystemdCgroup = false in containerd's runc options)";
    super(
      'KTS_ERR_SYSTEMD_UNAVAILABLE',
      `${why} but systemd's manager cannot be reached over D-Bus (${detail}); run the agent on a node whose PID 1 is systemd, ${fix}`,
      options,
    );
  }
}

/** The limits of `p` as unit properties (those it sets). */
function limitProperties(p: SliceProperties): UnitProperty[] {
  const out: UnitProperty[] = [];
  if (p.CPUShares !== undefined) out.push(slice.cpuShares(p.CPUShares));
  if (p.CPUWeight !== undefined) out.push(slice.cpuWeight(p.CPUWeight));
  if (p.CPUQuotaPerSecUSec !== undefined) out.push(slice.cpuQuotaPerSecUSec(p.CPUQuotaPerSecUSec));
  if (p.CPUQuotaPeriodUSec !== undefined) out.push(slice.cpuQuotaPeriodUSec(p.CPUQuotaPeriodUSec));
  if (p.MemoryLimit !== undefined) out.push(slice.memoryLimit(p.MemoryLimit));
  if (p.MemoryMax !== undefined) out.push(slice.memoryMax(p.MemoryMax));
  if (p.TasksMax !== undefined) out.push(slice.tasksMax(p.TasksMax));
  return out;
}

export function sliceUnits(manager: SystemdUnitManager): SliceUnits {
  return {
    startSlice: (unit, p) =>
      manager.startTransientUnit(unit, [
        ...(p.Description !== undefined ? [slice.description(p.Description)] : []),
        ...(p.Wants !== undefined ? [slice.wants([p.Wants])] : []),
        slice.defaultDependencies(false),
        slice.memoryAccounting(true),
        slice.cpuAccounting(true),
        slice.tasksAccounting(true),
        ...limitProperties(p),
      ]),
    setSliceProperties: async (unit, p) => {
      const props = limitProperties(p);
      if (props.length > 0) await manager.setUnitProperties(unit, true, props);
    },
    stopSlice: (unit) => manager.stopUnit(unit),
  };
}

/** Connects to systemd (its private socket, then the system bus) for the systemd cgroup driver. */
export async function connectSystemdSlices(
  opts?: SystemdManagerOptions & { fromRuntime?: boolean },
): Promise<{ slices: SliceUnits; close(): void }> {
  let manager: SystemdManager;
  try {
    manager = await SystemdManager.connect(opts);
  } catch (err) {
    throw new SystemdUnavailableError(err instanceof Error ? err.message : String(err), {
      cause: err,
      fromRuntime: opts?.fromRuntime,
    });
  }
  return { slices: sliceUnits(manager), close: () => manager.close() };
}
