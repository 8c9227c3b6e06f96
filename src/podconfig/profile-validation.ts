/**
 * Validation of the seccompProfile and appArmorProfile of a pod or container security context
 * (upstream pkg/apis/core/validation validateSeccompProfileField, validateLocalDescendingPath and
 * ValidateAppArmorProfileField). A Localhost seccomp profile names a file below
 * `<root-dir>/seccomp` that the runtime reads as root: it must be a relative path without `..`.
 */
import { isObj, type Obj } from './defaults.js';

export interface ProfileProblem {
  field: string;
  message: string;
}

const q = (v: unknown): string => JSON.stringify(v) ?? String(v);
const TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
/** upstream maxLocalhostProfileLength (PATH_MAX - 1). */
const MAX_APPARMOR_PROFILE_LENGTH = 4095;

/** upstream validateLocalDescendingPath: relative, and no `..` element. */
export function localDescendingPathProblems(path: string, field: string): ProfileProblem[] {
  const out: ProfileProblem[] = [];
  if (path.startsWith('/')) out.push({ field, message: `Invalid value: ${q(path)}: must be a relative path` });
  if (path.split('/').includes('..')) out.push({ field, message: `Invalid value: ${q(path)}: must not contain '..'` });
  return out;
}

/** The type: one of the three, required when the profile is set. */
function typeProblem(type: unknown, field: string, what: string): ProfileProblem | undefined {
  if (type === undefined || type === null || type === '')
    return { field, message: `Required value: type is required when ${what} is set` };
  if (typeof type !== 'string' || !TYPES.includes(type))
    return { field, message: `Unsupported value: ${q(type)}: supported values: ${TYPES.map(q).join(', ')}` };
  return undefined;
}

function seccompProblems(sp: Obj, path: string): ProfileProblem[] {
  const out: ProfileProblem[] = [];
  const bad = typeProblem(sp.type, `${path}.type`, 'seccompProfile');
  if (bad) out.push(bad);
  const local = sp.localhostProfile;
  const field = `${path}.localhostProfile`;
  if (sp.type === 'Localhost') {
    if (local === undefined || local === null)
      out.push({ field, message: 'Required value: must be set when seccomp type is Localhost' });
    else if (typeof local !== 'string') out.push({ field, message: `must be a string, got ${q(local)}` });
    else out.push(...localDescendingPathProblems(local, field));
  } else if (local !== undefined && local !== null) {
    out.push({ field, message: `Invalid value: ${q(local)}: can only be set when seccomp type is Localhost` });
  }
  return out;
}

function appArmorProblems(ap: Obj, path: string): ProfileProblem[] {
  const bad = typeProblem(ap.type, `${path}.type`, 'appArmorProfile');
  if (bad) return [bad];
  const local = ap.localhostProfile;
  const field = `${path}.localhostProfile`;
  if (ap.type !== 'Localhost') {
    if (local === undefined || local === null) return [];
    return [{ field, message: `Invalid value: ${q(local)}: can only be set when AppArmor type is Localhost` }];
  }
  if (typeof local !== 'string' || local.trim() === '')
    return [{ field, message: 'Required value: must be set when AppArmor type is Localhost' }];
  if (local.trim() !== local)
    return [{ field, message: `Invalid value: ${q(local)}: must not be padded with whitespace` }];
  if (local.length > MAX_APPARMOR_PROFILE_LENGTH)
    return [{ field, message: `Too long: may not be more than ${MAX_APPARMOR_PROFILE_LENGTH} bytes` }];
  return [];
}

/** Problems of the profiles of security context `sc` at `path` (spec.securityContext, ...). */
export function securityProfileProblems(sc: Obj, path: string): ProfileProblem[] {
  const out: ProfileProblem[] = [];
  for (const [key, check] of [
    ['seccompProfile', seccompProblems],
    ['appArmorProfile', appArmorProblems],
  ] as const) {
    const v = sc[key];
    if (v === undefined || v === null) continue;
    if (!isObj(v)) out.push({ field: `${path}.${key}`, message: `must be an object, got ${q(v)}` });
    else out.push(...check(v, `${path}.${key}`));
  }
  return out;
}
