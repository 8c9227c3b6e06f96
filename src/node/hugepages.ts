/**
 * Huge pages (upstream v1helper hugepage names, cAdvisor's hugepage machine info and
 * cm.HugePageLimits): the page sizes the host offers under /sys/kernel/mm/hugepages, the
 * `hugepages-<size>` resource names, and the kernel's names of the hugetlb cgroup files
 * (hugetlb.2MB.limit_in_bytes on cgroup v1, hugetlb.2MB.max on v2).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import { isRestartableInitContainer } from '../api/pod.js';
import { tryParseQuantity } from '../util/quantity.js';

export const HUGEPAGES_DIR = '/sys/kernel/mm/hugepages';
const PREFIX = 'hugepages-';
const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
/** The kernel's size names in hugetlb cgroup files (mm/hugetlb_cgroup.c mem_fmt). */
const KERNEL = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** One page size of the host: its size in bytes and the pages the kernel holds (nr_hugepages). */
export interface HostHugePages {
  pageSize: number;
  pages: number;
}

/** The host's huge page pools; none when the kernel has no hugetlb support (no such directory). */
export function hostHugePages(dir = HUGEPAGES_DIR): HostHugePages[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const out: HostHugePages[] = [];
  for (const e of entries) {
    const m = /^hugepages-(\d+)kB$/.exec(e);
    if (!m) continue;
    const pages = Number(readFileSync(join(dir, e, 'nr_hugepages'), 'utf8').trim()) || 0;
    out.push({ pageSize: Number(m[1]) * 1024, pages });
  }
  return out.sort((a, b) => a.pageSize - b.pageSize);
}

let cachedSizes: readonly number[] | undefined;

/** The host's page sizes in bytes, read once (the pools' sizes do not change while the host runs). */
export function hostHugePageSizes(): readonly number[] {
  cachedSizes ??= hostHugePages().map((h) => h.pageSize);
  return cachedSizes;
}

/** A byte count in the largest binary unit that divides it ("2Mi", "1Gi", "512Ki"). */
export function binaryQuantity(bytes: number): string {
  let v = bytes;
  let i = 0;
  while (v !== 0 && v % 1024 === 0 && i < BINARY.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v}${BINARY[i]}`;
}

/** upstream HugePageResourceName: 2097152 → "hugepages-2Mi". */
export function hugePageResourceName(pageSize: number): string {
  return PREFIX + binaryQuantity(pageSize);
}

/** upstream HugePageSizeFromResourceName: "hugepages-2Mi" → 2097152; undefined for another name or a bad size. */
export function hugePageSizeFromResourceName(name: string): number | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const size = tryParseQuantity(name.slice(PREFIX.length));
  return size !== undefined && size > 0 && Number.isInteger(size) ? size : undefined;
}

/** The kernel's name of a page size in hugetlb cgroup files: 2097152 → "2MB", 1073741824 → "1GB". */
export function hugePageSizeName(pageSize: number): string {
  let v = pageSize;
  let i = 0;
  while (v >= 1024 && i < KERNEL.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v}${KERNEL[i]}`;
}

/** upstream HugePageLimits: page size → bytes, summing the hugepages-* entries of a resource list. */
export function hugePageLimits(resources: Readonly<Record<string, number>>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [name, value] of Object.entries(resources)) {
    const size = hugePageSizeFromResourceName(name);
    if (size !== undefined) out.set(size, (out.get(size) ?? 0) + value);
  }
  return out;
}

/** A container's hugepages-* limits (requests must equal them; a request alone counts as the limit). */
export function containerHugePages(c: Container): Record<string, number> {
  const out: Record<string, number> = {};
  const from = { ...(c.resources?.requests ?? {}), ...(c.resources?.limits ?? {}) } as Record<string, string>;
  for (const [name, raw] of Object.entries(from)) {
    if (!name.startsWith(PREFIX)) continue;
    out[name] = Math.ceil(tryParseQuantity(raw) ?? 0);
  }
  return out;
}

function addInto(sum: Record<string, number>, r: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(r)) sum[k] = (sum[k] ?? 0) + v;
}

/**
 * The pod's hugepages-* amounts as upstream's PodRequests sums them: the app containers and
 * sidecars together, or a regular init container's own amount when larger (init containers run
 * one at a time); pod-level spec.resources replaces the sum for the sizes it names.
 */
export function podHugePages(pod: Pod): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const c of pod.spec?.containers ?? []) addInto(sum, containerHugePages(c));
  const sidecars: Record<string, number> = {};
  const initMax: Record<string, number> = {};
  for (const c of pod.spec?.initContainers ?? []) {
    const own = containerHugePages(c);
    if (isRestartableInitContainer(c)) addInto(sidecars, own);
    else for (const [k, v] of Object.entries(own)) initMax[k] = Math.max(initMax[k] ?? 0, v + (sidecars[k] ?? 0));
  }
  addInto(sum, sidecars);
  for (const [k, v] of Object.entries(initMax)) sum[k] = Math.max(sum[k] ?? 0, v);
  const podLevel = pod.spec?.resources?.limits as Record<string, string> | undefined;
  for (const [k, raw] of Object.entries(podLevel ?? {}))
    if (k.startsWith(PREFIX)) sum[k] = Math.ceil(tryParseQuantity(raw) ?? 0);
  return sum;
}
