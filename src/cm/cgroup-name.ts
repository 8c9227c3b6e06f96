/**
 * Cgroup names and the two drivers' spellings of them (upstream cm/cgroup_manager_linux.go,
 * CgroupName with ToCgroupfs/ToSystemd and their parsers; runc's systemd ExpandSlice).
 *
 * A CgroupName is the list of components from the root: ['kubepods', 'burstable', 'pod<uid>'].
 *   cgroupfs: /kubepods/burstable/pod<uid>
 *   systemd:  /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid, - as _>.slice
 * systemd uses '-' to nest slices, so a '-' inside a component is written '_' (pod UIDs have them).
 * The systemd form is also the path below each hierarchy's root, where the slice's cgroup lives.
 */
import { KubeletError } from '../errors.js';
import type { CgroupDriver } from '../config/cgroup-drivers.js';

export type CgroupName = readonly string[];
export { CGROUP_DRIVERS, type CgroupDriver } from '../config/cgroup-drivers.js';

const SLICE = '.slice';

/** A slice name systemd refuses (from cgroupRoot under the systemd driver): the name and why (runc ExpandSlice's checks). */
export class InvalidSliceError extends KubeletError {
  constructor(
    readonly slice: string,
    reason: string,
  ) {
    super(
      'KTS_ERR_CONFIG',
      `invalid systemd slice name "${slice}": ${reason} (cgroupRoot must be a slice path, e.g. /kube.slice, under cgroupDriver: systemd)`,
    );
  }
}

export function cgroupNameToCgroupfs(name: CgroupName): string {
  return `/${name.join('/')}`;
}

/** upstream escapeSystemdCgroupName / unescapeSystemdCgroupName. */
const escapeSystemd = (part: string): string => part.replace(/-/g, '_');
const unescapeSystemd = (part: string): string => part.replace(/_/g, '-');

/** The slice unit of a name: ['kubepods','burstable'] → kubepods-burstable.slice; the root → '/'. */
export function systemdSliceName(name: CgroupName): string {
  if (name.length === 0 || (name.length === 1 && name[0] === '')) return '/';
  return `${name.map(escapeSystemd).join('-')}${SLICE}`;
}

/** upstream CgroupName.ToSystemd: the slice's full path, e.g. /kubepods.slice/kubepods-burstable.slice. */
export function cgroupNameToSystemd(name: CgroupName): string {
  const slice = systemdSliceName(name);
  return slice === '/' ? '/' : expandSlice(slice);
}

/** runc's ExpandSlice: a-b-c.slice → /a.slice/a-b.slice/a-b-c.slice; -.slice (the root) → /. */
export function expandSlice(slice: string): string {
  if (!slice.endsWith(SLICE)) throw new InvalidSliceError(slice, 'it does not end in .slice');
  if (slice.includes('/')) throw new InvalidSliceError(slice, 'it contains "/"');
  const base = slice.slice(0, -SLICE.length);
  if (base === '-') return '/';
  if (base === '') throw new InvalidSliceError(slice, 'it is empty');
  let path = '';
  let prefix = '';
  for (const component of base.split('-')) {
    if (component === '') throw new InvalidSliceError(slice, 'it has an empty component ("--", or "-" at either end)');
    path += `/${prefix}${component}${SLICE}`;
    prefix += `${component}-`;
  }
  return path;
}

/** upstream ParseSystemdToCgroupName: the last path element's own components, unescaped. */
export function parseSystemdToCgroupName(path: string): CgroupName {
  const leaf = path.split('/').filter(Boolean).pop() ?? '';
  if (leaf === '' || leaf === '-.slice') return [];
  return leaf
    .replace(/\.slice$/, '')
    .split('-')
    .map(unescapeSystemd);
}

/** upstream ParseCgroupfsToCgroupName. */
export function parseCgroupfsToCgroupName(path: string): CgroupName {
  return path.split('/').filter(Boolean);
}

/** How one driver names cgroups, in one place for the container manager, stats, PLEG and OOM. */
export interface CgroupNaming {
  readonly driver: CgroupDriver;
  /** The driver's form of a name (what the runtime gets as cgroup parent). */
  format(name: CgroupName): string;
  /** The path below each hierarchy's root of a name. */
  path(name: CgroupName): string;
  /** The name of a driver-form cgroup (cgroupRoot, a cgroup parent). */
  parse(formatted: string): CgroupName;
  /** The pod UID of a pod cgroup's last path element, if it is one. */
  podUidOfLeaf(leaf: string): string | undefined;
  /** Last path elements a container's cgroup may have below its pod's (runtime-specific for systemd). */
  containerLeaves(containerId: string): string[];
}

/** The UID of a pod's own name component, `pod<uid>` (util/pod-identity's podCgroupLeaf builds it). */
function podUidOfComponent(component: string): string | undefined {
  return component.startsWith('pod') && component.length > 3 ? component.slice(3) : undefined;
}

/** Scope names runtimes give a container under a systemd slice (containerd, CRI-O, cri-dockerd). */
const SYSTEMD_SCOPE_PREFIXES = ['cri-containerd-', 'crio-', 'docker-'];

export function cgroupNaming(driver: CgroupDriver): CgroupNaming {
  if (driver === 'systemd') {
    return {
      driver,
      format: cgroupNameToSystemd,
      path: cgroupNameToSystemd,
      parse: parseSystemdToCgroupName,
      podUidOfLeaf(leaf) {
        if (!leaf.endsWith(SLICE)) return undefined;
        return podUidOfComponent(parseSystemdToCgroupName(leaf).at(-1) ?? '');
      },
      containerLeaves: (id) => SYSTEMD_SCOPE_PREFIXES.map((p) => `${p}${id}.scope`),
    };
  }
  return {
    driver,
    format: cgroupNameToCgroupfs,
    path: cgroupNameToCgroupfs,
    parse: parseCgroupfsToCgroupName,
    podUidOfLeaf: podUidOfComponent,
    containerLeaves: (id) => [id],
  };
}

/**
 * The container id of a container cgroup's last path element under either driver (the id itself,
 * or <runtime>-<id>.scope), if it names one.
 */
export function containerIdOfLeaf(leaf: string): string | undefined {
  if (!leaf.endsWith('.scope')) return leaf || undefined;
  for (const p of SYSTEMD_SCOPE_PREFIXES)
    if (leaf.startsWith(p)) return leaf.slice(p.length, -'.scope'.length) || undefined;
  return undefined;
}

/** The QoS names below cgroupRoot (upstream qos_container_manager_linux.go). */
export function qosCgroupNames(root: CgroupName): {
  kubepods: CgroupName;
  burstable: CgroupName;
  besteffort: CgroupName;
} {
  const kubepods = [...root, 'kubepods'];
  return { kubepods, burstable: [...kubepods, 'burstable'], besteffort: [...kubepods, 'besteffort'] };
}
