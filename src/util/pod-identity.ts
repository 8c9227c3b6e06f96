/**
 * Pod identity as the apiserver accepts it, and the on-disk names the kubelet builds from it,
 * each defined here only: `<root-dir>/pods/<uid>`, the logs
 * `<podLogsDir>/<namespace>_<name>_<uid>/<container>/<restartCount>.log`, the pod cgroup
 * `pod<uid>`. The pod sources validate the identity (src/podconfig/validation.ts); every path
 * builder here also refuses a component that is not one safe path segment, so a value that got
 * past validation still cannot walk out of the directory it is joined to.
 */
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { PodNames } from '../api/pod.js';
import { pathComponent } from './path-component.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** What the apiserver generates (RFC 4122, any version), and the 32 hex digits of a static pod's md5 UID. */
const RFC4122_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const STATIC_POD_UID = /^[0-9a-fA-F]{32}$/;

export const LABEL_MSG =
  "is not a valid DNS-1123 label (lower case alphanumerics or '-', starting and ending with an alphanumeric, at most 63 characters)";
export const SUBDOMAIN_MSG =
  "is not a valid DNS-1123 subdomain (lower case alphanumerics, '-' or '.', starting and ending with an alphanumeric, at most 253 characters)";
export const UID_MSG =
  'is not a valid pod UID (an RFC 4122 UUID as the apiserver assigns, or the 32 hex digits of a static pod)';

/** Namespaces, container names, volume names: at most 63 characters. */
export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

/** Pod names: at most 253 characters. */
export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** One problem of a spec field: its path and what is wrong with it (upstream's field.Error). */
export interface FieldProblem {
  field: string;
  detail: string;
}

const quote = (v: unknown): string => JSON.stringify(v) ?? String(v);

/**
 * upstream ValidateHostAliases: a list of objects, each `ip` a valid IP and each hostname a
 * DNS-1123 subdomain. These become lines of the managed /etc/hosts, so both the pod sources'
 * validation and the hosts-file writer (for pods the apiserver sent) ask this one function.
 */
export function hostAliasProblems(aliases: unknown): FieldProblem[] {
  if (aliases === undefined || aliases === null) return [];
  if (!Array.isArray(aliases)) return [{ field: 'spec.hostAliases', detail: `must be a list, got ${quote(aliases)}` }];
  return aliases.flatMap((a: unknown, i) => hostAliasEntryProblems(a, `spec.hostAliases[${i}]`));
}

function hostAliasEntryProblems(alias: unknown, path: string): FieldProblem[] {
  if (typeof alias !== 'object' || alias === null || Array.isArray(alias))
    return [{ field: path, detail: `must be an object, got ${quote(alias)}` }];
  const { ip, hostnames } = alias as { ip?: unknown; hostnames?: unknown };
  const out: FieldProblem[] = [];
  if (ip === undefined || ip === null || ip === '') out.push({ field: `${path}.ip`, detail: 'Required value' });
  else if (typeof ip !== 'string' || isIP(ip) === 0)
    out.push({ field: `${path}.ip`, detail: `Invalid value: ${quote(ip)}: must be a valid IP address` });
  if (hostnames === undefined || hostnames === null) return out;
  if (!Array.isArray(hostnames))
    return [...out, { field: `${path}.hostnames`, detail: `must be a list, got ${quote(hostnames)}` }];
  hostnames.forEach((n: unknown, j) => {
    if (typeof n !== 'string' || !isDns1123Subdomain(n))
      out.push({ field: `${path}.hostnames[${j}]`, detail: `Invalid value: ${quote(n)}: ${SUBDOMAIN_MSG}` });
  });
  return out;
}

/**
 * The apiserver does not validate UIDs, it generates them; these are the forms a kubelet sees in
 * practice. Neither can hold '/', '.', NUL or anything else a path would treat specially.
 */
export function isPodUID(s: string): boolean {
  return RFC4122_UUID.test(s) || STATIC_POD_UID.test(s);
}

/** upstream getPodDir: `<root-dir>/pods/<uid>`. */
export function podDir(rootDir: string, uid: string): string {
  return join(rootDir, 'pods', pathComponent(uid, 'pod UID'));
}

/** upstream BuildPodLogsDirectory's last component: `<namespace>_<name>_<uid>`. */
export function podLogsDirName(pod: PodNames): string {
  return `${pathComponent(pod.namespace, 'pod namespace')}_${pathComponent(pod.name, 'pod name')}_${pathComponent(pod.uid, 'pod UID')}`;
}

/**
 * The UID in a pod log directory's name (after the last '_': namespaces and names hold none),
 * undefined for a name that is not `<namespace>_<name>_<uid>`.
 */
export function podUIDOfLogsDirName(dirName: string): string | undefined {
  const parts = dirName.split('_');
  return parts.length >= 3 ? parts[parts.length - 1] : undefined;
}

/** upstream BuildPodLogsDirectory: `<podLogsDir>/<namespace>_<name>_<uid>`. */
export function podLogsDirectory(podLogsDir: string, pod: PodNames): string {
  return join(podLogsDir, podLogsDirName(pod));
}

/** upstream BuildContainerLogsDirectory: `<podLogsDir>/<namespace>_<name>_<uid>/<container>`. */
export function containerLogsDirectory(podLogsDir: string, pod: PodNames, containerName: string): string {
  return join(podLogsDirectory(podLogsDir, pod), pathComponent(containerName, 'container name'));
}

/** The log file of one instance of a container: `<restartCount>.log`. */
export function containerLogFileName(restartCount: number): string {
  return `${restartCount}.log`;
}

/** The restart count in a container log file's name, undefined for any other file (rotated ones included). */
export function restartCountOfLogFileName(fileName: string): number | undefined {
  const m = /^(\d+)\.log$/.exec(fileName);
  return m ? Number(m[1]) : undefined;
}

/** upstream buildContainerLogsPath, relative to the sandbox's log directory: `<container>/<restartCount>.log`. */
export function containerLogPath(containerName: string, restartCount: number): string {
  return join(pathComponent(containerName, 'container name'), containerLogFileName(restartCount));
}

/** The last component of a pod's cgroup (upstream GetPodContainerName): `pod<uid>`. */
export function podCgroupLeaf(uid: string): string {
  return `pod${pathComponent(uid, 'pod UID')}`;
}
