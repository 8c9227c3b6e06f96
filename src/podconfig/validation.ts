/**
 * Pod validation for the fields a kubelet acts on, after upstream's ValidatePod
 * (k8s.io/kubernetes/pkg/apis/core/validation). Every problem names its field path
 * (`spec.containers[1].name`) and says what is wrong with the value found.
 */
import type { Pod } from '../api/types.js';
import {
  hostAliasProblems,
  isDns1123Label,
  isDns1123Subdomain,
  isPodUID,
  LABEL_MSG,
  SUBDOMAIN_MSG,
  UID_MSG,
} from '../util/pod-identity.js';
import { FILE_MODE_MESSAGE, ID_MESSAGE, isValidFileMode, isValidId, octal } from '../api/pod.js';
import { isQualifiedName, QUALIFIED_NAME_PART } from '../util/resource-names.js';
import { tryParseQuantity } from '../util/quantity.js';
import { isObj, type Obj } from './defaults.js';
import { securityProfileProblems } from './profile-validation.js';

export { isDns1123Label, isDns1123Subdomain };

export interface Problem {
  field: string;
  message: string;
}

const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

function isIanaSvcName(s: string): boolean {
  return s.length <= 15 && IANA_SVC_NAME.test(s) && /[a-z]/.test(s) && !s.includes('--');
}

const q = (v: unknown): string => JSON.stringify(v) ?? String(v);

class Checker {
  readonly problems: Problem[] = [];

  add(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  /** A string field; returns it when present and a string. */
  str(o: Obj, key: string, path: string, required = false): string | undefined {
    const v = o[key];
    if (v === undefined || v === null || v === '') {
      if (required) this.add(path, 'Required value');
      return v === '' ? '' : undefined;
    }
    if (typeof v !== 'string') {
      this.add(path, `must be a string, got ${q(v)}`);
      return undefined;
    }
    return v;
  }

  /** A DNS-1123 label field (names that become path components); returns it only when valid. */
  label(o: Obj, key: string, path: string, required = false): string | undefined {
    const v = this.str(o, key, path, required);
    if (!v) return undefined;
    if (!isDns1123Label(v)) {
      this.add(path, `${q(v)} ${LABEL_MSG}`);
      return undefined;
    }
    return v;
  }

  int(o: Obj, key: string, path: string, { min, max }: { min?: number; max?: number } = {}): number | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.add(path, `must be an integer, got ${q(v)}`);
      return undefined;
    }
    if (min !== undefined && v < min) this.add(path, `${v} must be greater than or equal to ${min}`);
    else if (max !== undefined && v > max) this.add(path, `${v} must be less than or equal to ${max}`);
    return v;
  }

  /** A volume file mode (defaultMode, items[].mode): 0..0777. */
  fileMode(o: Obj, key: string, path: string): void {
    const v = o[key];
    if (v !== undefined && v !== null && !isValidFileMode(v))
      this.add(path, `Invalid value: ${octal(v)}: ${FILE_MODE_MESSAGE}`);
  }

  /** A uid or gid (runAsUser, runAsGroup, fsGroup, supplementalGroups[i]). */
  id(v: unknown, path: string): void {
    if (v !== undefined && v !== null && !isValidId(v)) this.add(path, `Invalid value: ${q(v)}: ${ID_MESSAGE}`);
  }

  bool(o: Obj, key: string, path: string): void {
    const v = o[key];
    if (v !== undefined && v !== null && typeof v !== 'boolean') this.add(path, `must be true or false, got ${q(v)}`);
  }

  oneOf(o: Obj, key: string, path: string, allowed: readonly string[]): void {
    const v = this.str(o, key, path);
    if (v !== undefined && v !== '' && !allowed.includes(v))
      this.add(path, `${q(v)} is not supported; supported values: ${allowed.map((a) => q(a)).join(', ')}`);
  }

  object(o: Obj, key: string, path: string, required = false): Obj | undefined {
    const v = o[key];
    if (v === undefined || v === null) {
      if (required) this.add(path, 'Required value');
      return undefined;
    }
    if (!isObj(v)) {
      this.add(path, `must be an object, got ${q(v)}`);
      return undefined;
    }
    return v;
  }

  /** An array of objects; each element that is not an object is reported. */
  list(o: Obj, key: string, path: string): Array<[Obj, string]> {
    const v = o[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.add(path, `must be a list, got ${q(v)}`);
      return [];
    }
    const out: Array<[Obj, string]> = [];
    v.forEach((e, i) => {
      if (isObj(e)) out.push([e, `${path}[${i}]`]);
      else this.add(`${path}[${i}]`, `must be an object, got ${q(e)}`);
    });
    return out;
  }

  stringList(o: Obj, key: string, path: string): string[] | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      this.add(path, `must be a list of strings, got ${q(v)}`);
      return undefined;
    }
    v.forEach((e, i) => {
      if (typeof e !== 'string') this.add(`${path}[${i}]`, `must be a string, got ${q(e)}`);
    });
    return v as string[];
  }

  /** A map of strings; `check.key` and `check.value` return a problem or undefined. */
  stringMap(
    o: Obj,
    key: string,
    path: string,
    check: { key: (k: string) => string | undefined; value?: (v: string) => string | undefined },
  ): void {
    const { key: checkKey, value: checkValue } = check;
    const m = this.object(o, key, path);
    if (!m) return;
    for (const [k, v] of Object.entries(m)) {
      const keyProblem = checkKey(k);
      if (keyProblem) this.add(`${path}`, `${q(k)} ${keyProblem}`);
      if (typeof v !== 'string') this.add(`${path}[${q(k)}]`, `must be a string, got ${q(v)}`);
      else if (checkValue) {
        const valueProblem = checkValue(v);
        if (valueProblem) this.add(`${path}[${q(k)}]`, `${q(v)} ${valueProblem}`);
      }
    }
  }
}

/** The first problem with the rest appended: `{field, message}` for an error naming the field. */
export function summarizeProblems(problems: readonly Problem[], prefix = ''): Problem {
  const [first, ...rest] = problems as [Problem, ...Problem[]];
  let message = first.message;
  if (rest.length > 0)
    message += ` (and ${rest.length} more: ${rest.map((p) => `${prefix}${p.field}: ${p.message}`).join('; ')})`;
  return { field: `${prefix}${first.field}`, message };
}

/** Validates a defaulted Pod object. Returns every problem found, in document order. */
export function validatePod(pod: Obj): Problem[] {
  const c = new Checker();
  validateMetadata(c, pod);
  const spec = c.object(pod, 'spec', 'spec', true);
  if (spec) validateSpec(c, spec);
  return c.problems;
}

/** Lists in the spec whose items' names become path components (log and volume directories). */
const NAMED_LISTS = ['initContainers', 'containers', 'ephemeralContainers', 'volumes'] as const;

/**
 * The fields the kubelet builds paths from (pod directory, log directories, the pod cgroup,
 * volume directories): name, namespace, UID, container and volume names, checked on a pod from any source. The apiserver
 * source is not otherwise validated, and a broken or hostile apiserver can send anything.
 */
export function validatePodIdentity(pod: Pod): Problem[] {
  const c = new Checker();
  const o: Obj = isObj(pod) ? pod : {};
  const meta = c.object(o, 'metadata', 'metadata', true);
  if (meta) checkIdentity(c, meta, true);
  const spec = isObj(o.spec) ? o.spec : {};
  for (const key of NAMED_LISTS) {
    for (const [item, path] of c.list(spec, key, `spec.${key}`)) c.label(item, 'name', `${path}.name`, true);
  }
  return c.problems;
}

/** Name, namespace and UID; a manifest may leave the last two to the kubelet (`required` false). */
function checkIdentity(c: Checker, meta: Obj, required: boolean): void {
  const name = c.str(meta, 'name', 'metadata.name', true);
  if (name && !isDns1123Subdomain(name)) c.add('metadata.name', `${q(name)} ${SUBDOMAIN_MSG}`);
  c.label(meta, 'namespace', 'metadata.namespace', required);
  // Upstream keeps a UID a static manifest sets; paths are built from it, so its form is checked.
  const uid = c.str(meta, 'uid', 'metadata.uid', required);
  if (uid && !isPodUID(uid)) c.add('metadata.uid', `${q(uid)} ${UID_MSG}`);
}

function validateMetadata(c: Checker, pod: Obj): void {
  const meta = c.object(pod, 'metadata', 'metadata', true);
  if (!meta) return;
  checkIdentity(c, meta, false);
  const qualified = (k: string) =>
    isQualifiedName(k)
      ? undefined
      : 'is not a valid qualified name ([prefix/]name, name at most 63 alphanumerics, "-", "_" or ".")';
  c.stringMap(meta, 'labels', 'metadata.labels', {
    key: qualified,
    value: (v) =>
      v === '' || (v.length <= 63 && QUALIFIED_NAME_PART.test(v))
        ? undefined
        : 'is not a valid label value (at most 63 alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric)',
  });
  c.stringMap(meta, 'annotations', 'metadata.annotations', { key: qualified });
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'] as const;

/**
 * upstream validateHostUsers: a pod in its own user namespace may not share the host's network,
 * PID or IPC namespace (UserNamespacesHostNetworkSupport, alpha and off, is refused). Upstream's
 * paths and words, its capitals included. Nor may any container use raw block devices (1.35:
 * AllowUserNamespacesWithVolumeDevices is false).
 */
function validateHostUsers(c: Checker, spec: Obj): void {
  if (spec.hostUsers !== false) return;
  const why = 'Forbidden: when `pod.Spec.HostUsers` is false';
  if (spec.hostNetwork === true) c.add('spec.hostNetwork', why);
  if (spec.hostPID === true) c.add('spec.HostPID', why);
  if (spec.hostIPC === true) c.add('spec.HostIPC', why);
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const ctrs = Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [];
    ctrs.forEach((ctr, i) => {
      const devices = isObj(ctr) ? ctr.volumeDevices : undefined;
      if (Array.isArray(devices) && devices.length > 0) c.add(`spec.${list}[${i}].volumeDevices`, why);
    });
  }
}

function validateSpec(c: Checker, spec: Obj): void {
  c.oneOf(spec, 'restartPolicy', 'spec.restartPolicy', RESTART_POLICIES);
  c.oneOf(spec, 'dnsPolicy', 'spec.dnsPolicy', DNS_POLICIES);
  if (spec.dnsPolicy === 'None' && !isObj(spec.dnsConfig))
    c.add('spec.dnsConfig', 'Required value: must provide dnsConfig when dnsPolicy is None');
  c.int(spec, 'terminationGracePeriodSeconds', 'spec.terminationGracePeriodSeconds', { min: 0 });
  c.int(spec, 'activeDeadlineSeconds', 'spec.activeDeadlineSeconds', { min: 1 });
  // upstream ValidatePodCreate: ephemeral containers come only through their subresource.
  if (Array.isArray(spec.ephemeralContainers) && spec.ephemeralContainers.length > 0)
    c.add('spec.ephemeralContainers', 'Forbidden: cannot be set on create');
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC', 'hostUsers', 'enableServiceLinks', 'shareProcessNamespace'])
    c.bool(spec, k, `spec.${k}`);
  validateHostUsers(c, spec);
  c.str(spec, 'nodeName', 'spec.nodeName');
  for (const k of ['hostname', 'subdomain']) c.label(spec, k, `spec.${k}`);
  validateHostAliases(c, spec);
  c.list(spec, 'tolerations', 'spec.tolerations').forEach(([t, path]) => {
    c.oneOf(t, 'operator', `${path}.operator`, ['Exists', 'Equal']);
    c.oneOf(t, 'effect', `${path}.effect`, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
  });

  validateSecurityContext(c, spec, 'spec.securityContext', true);
  const volumes = validateVolumes(c, spec);

  const containers = spec.containers;
  if (containers === undefined || containers === null || (Array.isArray(containers) && containers.length === 0)) {
    c.add('spec.containers', 'Required value: a pod needs at least one container');
  }
  const names = new Map<string, string>();
  for (const [ctr, path] of c.list(spec, 'initContainers', 'spec.initContainers'))
    validateContainer(c, ctr, path, { kind: 'init', spec, volumes, names });
  for (const [ctr, path] of c.list(spec, 'containers', 'spec.containers'))
    validateContainer(c, ctr, path, { kind: 'regular', spec, volumes, names });
}

/** upstream ValidateHostAliases: the lines of the managed /etc/hosts, so nothing can add a line. */
function validateHostAliases(c: Checker, spec: Obj): void {
  for (const p of hostAliasProblems(spec.hostAliases)) c.add(p.field, p.detail);
}

function validateVolumes(c: Checker, spec: Obj): Set<string> {
  const names = new Set<string>();
  for (const [v, path] of c.list(spec, 'volumes', 'spec.volumes')) {
    const name = c.str(v, 'name', `${path}.name`, true);
    if (name) {
      if (!isDns1123Label(name)) c.add(`${path}.name`, `${q(name)} ${LABEL_MSG}`);
      else if (names.has(name)) c.add(`${path}.name`, `Duplicate value: ${q(name)}`);
      names.add(name);
    }
    const sources = Object.keys(v).filter((k) => k !== 'name');
    if (sources.length > 1) c.add(path, `may not specify more than one volume source, found ${sources.join(', ')}`);
    if (isObj(v.hostPath)) c.str(v.hostPath, 'path', `${path}.hostPath.path`, true);
    validateVolumeModes(c, v, path);
  }
  return names;
}

/** upstream: defaultMode and every items[].mode of secret, configMap, downwardAPI and projected volumes are 0..0777. */
function validateVolumeModes(c: Checker, v: Obj, path: string): void {
  const itemModes = (src: Obj, p: string) => {
    for (const [item, ipath] of c.list(src, 'items', `${p}.items`)) c.fileMode(item, 'mode', `${ipath}.mode`);
  };
  for (const kind of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = v[kind];
    if (!isObj(src)) continue;
    c.fileMode(src, 'defaultMode', `${path}.${kind}.defaultMode`);
    itemModes(src, `${path}.${kind}`);
    if (kind !== 'projected') continue;
    for (const [s, spath] of c.list(src, 'sources', `${path}.projected.sources`)) {
      for (const k of ['secret', 'configMap', 'downwardAPI']) if (isObj(s[k])) itemModes(s[k], `${spath}.${k}`);
    }
  }
}

/** The ids a pod or container runs as (upstream validatePodSpecSecurityContext / ValidateSecurityContext). */
function validateSecurityContext(c: Checker, o: Obj, path: string, pod: boolean): void {
  const sc = c.object(o, 'securityContext', path);
  if (!sc) return;
  for (const p of securityProfileProblems(sc, path)) c.add(p.field, p.message);
  for (const k of pod ? ['runAsUser', 'runAsGroup', 'fsGroup'] : ['runAsUser', 'runAsGroup'])
    c.id(sc[k], `${path}.${k}`);
  if (!pod) return validateEscalation(c, sc, path);
  const groups = sc.supplementalGroups;
  if (groups === undefined || groups === null) return;
  if (!Array.isArray(groups)) c.add(`${path}.supplementalGroups`, `must be a list, got ${q(groups)}`);
  else groups.forEach((g, i) => c.id(g, `${path}.supplementalGroups[${i}]`));
}

/**
 * upstream ValidateSecurityContext: allowPrivilegeEscalation false (no_new_privs) cannot hold for
 * a privileged container, nor with CAP_SYS_ADMIN added (upstream compares that exact spelling), so
 * the pod is refused rather than run with escalation allowed. Upstream's words.
 */
function validateEscalation(c: Checker, sc: Obj, path: string): void {
  if (sc.allowPrivilegeEscalation !== false) return;
  if (sc.privileged === true)
    c.add(path, 'Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true');
  const add = isObj(sc.capabilities) && Array.isArray(sc.capabilities.add) ? sc.capabilities.add : [];
  if (add.includes('CAP_SYS_ADMIN'))
    c.add(path, 'Invalid value: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN');
}

/** What a container is checked against: its kind, the pod spec, its volumes and the names so far. */
interface ContainerScope {
  kind: 'init' | 'regular';
  spec: Obj;
  volumes: Set<string>;
  /** Container name → the path that declared it (names are unique across init and regular). */
  names: Map<string, string>;
}

function validateContainer(c: Checker, ctr: Obj, path: string, { kind, spec, volumes, names }: ContainerScope): void {
  const name = c.label(ctr, 'name', `${path}.name`, true);
  if (name) {
    if (names.has(name)) c.add(`${path}.name`, `Duplicate value: ${q(name)} is also the name of ${names.get(name)}`);
    else names.set(name, path);
  }
  const image = c.str(ctr, 'image', `${path}.image`, true);
  if (image !== undefined && image !== '' && image.trim() !== image)
    c.add(`${path}.image`, `${q(image)} must not have leading or trailing whitespace`);
  c.oneOf(ctr, 'imagePullPolicy', `${path}.imagePullPolicy`, ['Always', 'IfNotPresent', 'Never']);
  c.oneOf(ctr, 'terminationMessagePolicy', `${path}.terminationMessagePolicy`, ['File', 'FallbackToLogsOnError']);
  c.str(ctr, 'terminationMessagePath', `${path}.terminationMessagePath`);
  c.str(ctr, 'workingDir', `${path}.workingDir`);
  c.stringList(ctr, 'command', `${path}.command`);
  c.stringList(ctr, 'args', `${path}.args`);
  for (const k of ['tty', 'stdin', 'stdinOnce']) c.bool(ctr, k, `${path}.${k}`);

  if (kind === 'init') {
    const rp = c.str(ctr, 'restartPolicy', `${path}.restartPolicy`);
    if (rp && rp !== 'Always')
      c.add(`${path}.restartPolicy`, `${q(rp)} is not supported; an init container may only set "Always" (a sidecar)`);
    if (rp !== 'Always') {
      for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (ctr[p] !== undefined && ctr[p] !== null)
          c.add(`${path}.${p}`, 'Forbidden: may not be set for init containers without restartPolicy Always');
      }
    }
  } else {
    c.oneOf(ctr, 'restartPolicy', `${path}.restartPolicy`, RESTART_POLICIES);
  }

  validateSecurityContext(c, ctr, `${path}.securityContext`, false);
  validatePorts(c, ctr, path, spec.hostNetwork === true);
  validateEnv(c, ctr, path);
  validateResources(c, ctr, path);
  for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const probe = c.object(ctr, p, `${path}.${p}`);
    if (probe) validateProbe(c, probe, `${path}.${p}`, p !== 'readinessProbe');
  }
  const lifecycle = c.object(ctr, 'lifecycle', `${path}.lifecycle`);
  if (lifecycle) {
    for (const h of ['postStart', 'preStop']) {
      const handler = c.object(lifecycle, h, `${path}.lifecycle.${h}`);
      if (handler) validateHandler(c, handler, `${path}.lifecycle.${h}`, ['exec', 'httpGet', 'tcpSocket', 'sleep']);
    }
  }

  const mountPaths = new Set<string>();
  for (const [m, mpath] of c.list(ctr, 'volumeMounts', `${path}.volumeMounts`)) {
    const vname = c.str(m, 'name', `${mpath}.name`, true);
    if (vname && !volumes.has(vname)) c.add(`${mpath}.name`, `Not found: ${q(vname)} is not a volume of this pod`);
    const mp = c.str(m, 'mountPath', `${mpath}.mountPath`, true);
    if (mp) {
      if (mountPaths.has(mp)) c.add(`${mpath}.mountPath`, `Duplicate value: ${q(mp)} must be unique`);
      mountPaths.add(mp);
    }
    c.bool(m, 'readOnly', `${mpath}.readOnly`);
  }
}

function validatePorts(c: Checker, ctr: Obj, path: string, hostNetwork: boolean): void {
  const seen = new Set<string>();
  for (const [p, ppath] of c.list(ctr, 'ports', `${path}.ports`)) {
    const name = c.str(p, 'name', `${ppath}.name`);
    if (name) {
      if (!isIanaSvcName(name))
        c.add(
          `${ppath}.name`,
          `${q(name)} is not a valid port name (at most 15 lower case alphanumerics or '-', with at least one letter)`,
        );
      else if (seen.has(name)) c.add(`${ppath}.name`, `Duplicate value: ${q(name)}`);
      seen.add(name);
    }
    const containerPort = p.containerPort;
    if (containerPort === undefined || containerPort === null) c.add(`${ppath}.containerPort`, 'Required value');
    else c.int(p, 'containerPort', `${ppath}.containerPort`, { min: 1, max: 65535 });
    const hostPort = c.int(p, 'hostPort', `${ppath}.hostPort`, { min: 0, max: 65535 });
    if (hostNetwork && hostPort !== undefined && hostPort !== 0 && hostPort !== containerPort) {
      c.add(`${ppath}.hostPort`, `${hostPort} must match containerPort ${q(containerPort)} when hostNetwork is true`);
    }
    c.oneOf(p, 'protocol', `${ppath}.protocol`, ['TCP', 'UDP', 'SCTP']);
    c.str(p, 'hostIP', `${ppath}.hostIP`);
  }
}

function validateEnv(c: Checker, ctr: Obj, path: string): void {
  for (const [e, epath] of c.list(ctr, 'env', `${path}.env`)) {
    const name = c.str(e, 'name', `${epath}.name`, true);
    if (name && !ENV_VAR_NAME.test(name))
      c.add(
        `${epath}.name`,
        `${q(name)} is not a valid environment variable name (letters, digits, '_', '-' or '.', not starting with a digit)`,
      );
    c.str(e, 'value', `${epath}.value`);
    const from = c.object(e, 'valueFrom', `${epath}.valueFrom`);
    if (from) {
      if (typeof e.value === 'string' && e.value !== '')
        c.add(`${epath}.valueFrom`, 'Invalid value: may not be specified when `value` is not empty');
      const kinds = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter(
        (k) => from[k] !== undefined && from[k] !== null,
      );
      if (kinds.length !== 1)
        c.add(
          `${epath}.valueFrom`,
          `must specify exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef; found ${kinds.length}`,
        );
      const fieldRef = c.object(from, 'fieldRef', `${epath}.valueFrom.fieldRef`);
      if (fieldRef) c.str(fieldRef, 'fieldPath', `${epath}.valueFrom.fieldRef.fieldPath`, true);
    }
  }
}

function validateResources(c: Checker, ctr: Obj, path: string): void {
  const res = c.object(ctr, 'resources', `${path}.resources`);
  if (!res) return;
  const parsed: Record<'limits' | 'requests', Map<string, number>> = { limits: new Map(), requests: new Map() };
  for (const kind of ['limits', 'requests'] as const) {
    const list = c.object(res, kind, `${path}.resources.${kind}`);
    if (!list) continue;
    for (const [name, value] of Object.entries(list)) {
      const field = `${path}.resources.${kind}.${name}`;
      if (!isQualifiedName(name)) {
        c.add(`${path}.resources.${kind}`, `${q(name)} is not a valid resource name`);
        continue;
      }
      const v = typeof value === 'string' || typeof value === 'number' ? tryParseQuantity(value) : undefined;
      if (v === undefined) c.add(field, `${q(value)} is not a valid quantity (examples: "100m", "0.5", "64Mi", "1G")`);
      else if (v < 0) c.add(field, `${q(value)} must be greater than or equal to 0`);
      else parsed[kind].set(name, v);
    }
  }
  for (const [name, request] of parsed.requests) {
    const limit = parsed.limits.get(name);
    if (limit !== undefined && request > limit) {
      c.add(
        `${path}.resources.requests.${name}`,
        `${q((res.requests as Obj)[name])} must be less than or equal to the ${name} limit of ${q((res.limits as Obj)[name])}`,
      );
    }
  }
}

function validateProbe(c: Checker, probe: Obj, path: string, successMustBeOne: boolean): void {
  c.int(probe, 'initialDelaySeconds', `${path}.initialDelaySeconds`, { min: 0 });
  c.int(probe, 'timeoutSeconds', `${path}.timeoutSeconds`, { min: 1 });
  c.int(probe, 'periodSeconds', `${path}.periodSeconds`, { min: 1 });
  const success = c.int(probe, 'successThreshold', `${path}.successThreshold`, { min: 1 });
  if (successMustBeOne && success !== undefined && success !== 1)
    c.add(`${path}.successThreshold`, `${success} must be 1 for liveness and startup probes`);
  c.int(probe, 'failureThreshold', `${path}.failureThreshold`, { min: 1 });
  c.int(probe, 'terminationGracePeriodSeconds', `${path}.terminationGracePeriodSeconds`, { min: 1 });
  validateHandler(c, probe, path, ['exec', 'httpGet', 'tcpSocket', 'grpc']);
}

function validateHandler(c: Checker, h: Obj, path: string, kinds: readonly string[]): void {
  const present = kinds.filter((k) => h[k] !== undefined && h[k] !== null);
  if (present.length !== 1) {
    c.add(
      path,
      present.length === 0
        ? `must specify a handler (one of ${kinds.join(', ')})`
        : `may not specify more than one handler, found ${present.join(', ')}`,
    );
  }
  const exec = c.object(h, 'exec', `${path}.exec`);
  if (exec) {
    const cmd = c.stringList(exec, 'command', `${path}.exec.command`);
    if (!cmd || cmd.length === 0) c.add(`${path}.exec.command`, 'Required value');
  }
  const http = c.object(h, 'httpGet', `${path}.httpGet`);
  if (http) {
    validatePortRef(c, http, `${path}.httpGet.port`);
    c.oneOf(http, 'scheme', `${path}.httpGet.scheme`, ['HTTP', 'HTTPS']);
    c.str(http, 'path', `${path}.httpGet.path`);
    c.str(http, 'host', `${path}.httpGet.host`);
  }
  const tcp = c.object(h, 'tcpSocket', `${path}.tcpSocket`);
  if (tcp) validatePortRef(c, tcp, `${path}.tcpSocket.port`);
  const grpc = c.object(h, 'grpc', `${path}.grpc`);
  if (grpc) {
    if (grpc.port === undefined) c.add(`${path}.grpc.port`, 'Required value');
    c.int(grpc, 'port', `${path}.grpc.port`, { min: 1, max: 65535 });
  }
  const sleep = c.object(h, 'sleep', `${path}.sleep`);
  if (sleep) {
    if (sleep.seconds === undefined) c.add(`${path}.sleep.seconds`, 'Required value');
    c.int(sleep, 'seconds', `${path}.sleep.seconds`, { min: 0 });
  }
}

/**
 * An IntOrString port: a number 1–65535 or a port name. As upstream, a name is not checked
 * against the container's ports here; the prober reports a name it cannot resolve.
 */
function validatePortRef(c: Checker, o: Obj, path: string): void {
  const port = o.port;
  if (port === undefined || port === null || port === '') c.add(path, 'Required value');
  else if (typeof port === 'number') c.int(o, 'port', path, { min: 1, max: 65535 });
  else if (typeof port === 'string') {
    if (/^\d+$/.test(port)) c.add(path, `${q(port)} must be a number or a port name, not a numeric string`);
    else if (!isIanaSvcName(port)) c.add(path, `${q(port)} is not a valid port name`);
  } else c.add(path, `must be a port number or name, got ${q(port)}`);
}
