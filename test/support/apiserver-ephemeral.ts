/**
 * The pods/{name}/ephemeralcontainers subresource of the test apiserver (upstream
 * pkg/registry/core/pod EphemeralContainersREST and ValidatePodEphemeralContainersUpdate): GET,
 * PUT and PATCH take and return a whole Pod, of which only spec.ephemeralContainers is taken.
 * Ephemeral containers can only be added: an existing one may be neither changed nor removed,
 * names are unique across every container list, and the fields upstream's
 * allowedEphemeralContainerFields leaves out are forbidden.
 */
import { isDeepStrictEqual } from 'node:util';
import { setPodDefaults } from '../../src/podconfig/defaults.js';
import type { Obj } from './apiserver-store.js';

const FIELD = 'spec.ephemeralContainers';

/** Fields an ephemeral container may not set (upstream allowedEphemeralContainerFields: false). */
const FORBIDDEN = [
  'ports',
  'resources',
  'resizePolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'restartPolicy',
  'restartPolicyRules',
];

const list = (spec: Obj | undefined, key: string): Obj[] => (spec?.[key] as Obj[] | undefined) ?? [];

function isSetValue(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** The first field error of one new ephemeral container, upstream's wording. */
function containerProblem(c: Obj, at: string, taken: Set<string>): string | undefined {
  const name = c.name;
  if (typeof name !== 'string' || name === '') return `${at}.name: Required value`;
  if (taken.has(name)) return `${at}.name: Duplicate value: "${name}"`;
  if (typeof c.image !== 'string' || c.image === '') return `${at}.image: Required value`;
  const bad = FORBIDDEN.find((f) => isSetValue(c[f]));
  if (bad) return `${at}.${bad}: Forbidden: cannot be set for an Ephemeral Container`;
  const mounts = (c.volumeMounts as Obj[] | undefined) ?? [];
  const sub = mounts.findIndex((m) => isSetValue(m.subPath) || isSetValue(m.subPathExpr));
  if (sub >= 0) return `${at}.volumeMounts[${sub}]: Forbidden: cannot be set for an Ephemeral Container`;
  return undefined;
}

/** The field error of an update from `current` to `next`'s ephemeral containers, if any. */
function updateProblem(current: Obj, next: Obj): string | undefined {
  const spec = current.spec as Obj | undefined;
  const before = list(spec, 'ephemeralContainers');
  const after = list(next.spec as Obj | undefined, 'ephemeralContainers');
  for (const old of before) {
    const i = after.findIndex((c) => c.name === old.name);
    if (i < 0) return `${FIELD}: Forbidden: existing ephemeral containers "${String(old.name)}" may not be removed`;
    if (!isDeepStrictEqual(after[i], old))
      return `${FIELD}[${i}]: Forbidden: existing ephemeral containers "${String(old.name)}" may not be changed`;
  }
  const taken = new Set(
    [...list(spec, 'containers'), ...list(spec, 'initContainers'), ...before].map((c) => String(c.name)),
  );
  const known = new Set(before.map((c) => c.name));
  const names = new Set([...list(spec, 'containers'), ...list(spec, 'initContainers')].map((c) => c.name));
  for (const [i, c] of after.entries()) {
    if (known.has(c.name)) continue;
    const problem = containerProblem(c, `${FIELD}[${i}]`, taken);
    if (problem) return problem;
    if (isSetValue(c.targetContainerName) && !names.has(c.targetContainerName))
      return `${FIELD}[${i}].targetContainerName: Not found: "${String(c.targetContainerName)}"`;
    taken.add(String(c.name));
  }
  return undefined;
}

/**
 * The pod `current` with `next`'s ephemeral containers (defaulted as the apiserver defaults
 * them), or the validation error's message (`Pod "x" is invalid: ...`).
 */
export function withEphemeralContainers(current: Obj, next: Obj): { pod: Obj } | { invalid: string } {
  const defaulted: Obj = structuredClone(next);
  setPodDefaults(defaulted);
  const problem = updateProblem(current, defaulted);
  if (problem) return { invalid: `Pod "${String(current.metadata?.name)}" is invalid: ${problem}` };
  const ephemeralContainers = list(defaulted.spec as Obj | undefined, 'ephemeralContainers');
  return { pod: { ...current, spec: { ...(current.spec as Obj), ephemeralContainers } } };
}
