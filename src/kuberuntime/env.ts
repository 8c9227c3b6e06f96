/**
 * Container environment, command and args as upstream builds them (kubelet_pods.go
 * makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs, and the forked
 * third_party/forked/golang/expansion):
 *
 *  - `$(VAR)` expands to an earlier variable of the same container; an unknown `$(VAR)` stays as
 *    written; `$$` is a literal `$`; a lone `$` or an unclosed `$(` stays as written;
 *  - env values are expanded in order, each seeing only the ones before it;
 *  - command and args are expanded against the final environment;
 *  - valueFrom.fieldRef reads the downward API fields listed in FIELD_PATHS; anything a kubelet
 *    without an apiserver cannot resolve (configMapKeyRef, secretKeyRef, envFrom, ...) is an
 *    EnvError, reported as CreateContainerConfigError.
 */
import type { Container, EnvVar, Pod } from '../api/types.js';
import type { KeyValue } from '../cri/types.js';
import { kubeletErrorClass } from '../errors.js';
import type { PodObjectSource } from './types.js';

export class EnvError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

/** What the downward API needs that is not in the pod object. */
export interface EnvContext {
  nodeName: string;
  hostIP: string;
  podIP: string;
  podIPs: string[];
  /**
   * Resolves valueFrom.resourceFieldRef for a container (downward-api.ts resourceFieldRefValue
   * with the node's allocatable bound); without it resourceFieldRef is an EnvError.
   */
  resourceFieldRef?: (fs: { containerName?: string; resource: string; divisor?: string | number }, container: Container) => string;
  /** ConfigMaps, Secrets and tokens (API server mode); without it configMap/secret refs are EnvErrors. */
  objects?: PodObjectSource;
}

/** A configMap's or secret's key/value map as env sees it (secret values decoded). */
function objectData(pod: Pod, ctx: EnvContext, kind: 'configMap' | 'secret', name: string, optional: boolean | undefined, what: string): Record<string, string> | undefined {
  if (!ctx.objects) throw new EnvError(`${what}: ${kind} references need API server mode (--kubeconfig)`);
  const ns = pod.metadata?.namespace ?? 'default';
  const obj = kind === 'configMap' ? ctx.objects.configMap(ns, name) : ctx.objects.secret(ns, name);
  if (obj === undefined) throw new EnvError(`${what}: ${kind} "${name}" is not synced yet`);
  if (obj === null) {
    if (optional) return undefined;
    throw new EnvError(`${what}: ${kind} "${name}" not found`);
  }
  const data = obj.data ?? {};
  return kind === 'secret' ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])) : { ...data };
}

const ENV_NAME_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** upstream envFrom: every key of the configMap/secret, with its prefix; invalid names are skipped. */
function envFromValues(pod: Pod, container: Container, ctx: EnvContext, env: Map<string, string>): void {
  for (const f of container.envFrom ?? []) {
    const ref = f.configMapRef ?? f.secretRef;
    const kind = f.configMapRef ? 'configMap' : 'secret';
    if (!ref?.name) throw new EnvError(`container ${container.name}: envFrom needs configMapRef or secretRef with a name`);
    const data = objectData(pod, ctx, kind, ref.name, ref.optional, `container ${container.name}: envFrom`);
    for (const [k, v] of Object.entries(data ?? {})) {
      const name = `${f.prefix ?? ''}${k}`;
      if (ENV_NAME_RE.test(name)) env.set(name, v);
    }
  }
}

/** Expands $(VAR) references in input with mapping; see the file comment for the rules. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const { read, isVar, advance } = tryReadVariableName(input.slice(cursor + 1));
    out += isVar ? mapping(read) : read;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

function tryReadVariableName(input: string): { read: string; isVar: boolean; advance: number } {
  if (input[0] === '$') return { read: '$', isVar: false, advance: 1 };
  if (input[0] === '(') {
    const close = input.indexOf(')', 1);
    if (close >= 0) return { read: input.slice(1, close), isVar: true, advance: close + 1 };
    return { read: '$(', isVar: false, advance: 1 };
  }
  return { read: `$${input[0]}`, isVar: false, advance: 1 };
}

/** A mapping that resolves from the first map that has the name, else leaves `$(name)`. */
export function mappingFor(...contexts: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const vars of contexts) {
      const v = vars.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

/** The container's environment in spec order (a later duplicate name overrides the value). */
export function makeEnvironmentVariables(pod: Pod, container: Container, ctx: EnvContext): KeyValue[] {
  const env = new Map<string, string>();
  envFromValues(pod, container, ctx, env);
  for (const v of container.env ?? []) {
    env.set(v.name, envValue(pod, container, v, env, ctx));
  }
  return [...env].map(([key, value]) => ({ key, value }));
}

function envValue(pod: Pod, container: Container, v: EnvVar, env: ReadonlyMap<string, string>, ctx: EnvContext): string {
  if (v.valueFrom) {
    if (v.valueFrom.fieldRef) return fieldRefValue(pod, v.valueFrom.fieldRef.fieldPath, v.valueFrom.fieldRef.apiVersion, ctx);
    if (v.valueFrom.resourceFieldRef && ctx.resourceFieldRef) return ctx.resourceFieldRef(v.valueFrom.resourceFieldRef as { containerName?: string; resource: string; divisor?: string }, container);
    const keyRef = v.valueFrom.configMapKeyRef ?? v.valueFrom.secretKeyRef;
    if (keyRef) {
      const kind = v.valueFrom.configMapKeyRef ? 'configMap' : 'secret';
      const what = `container ${container.name}: env ${v.name}`;
      const data = objectData(pod, ctx, kind, keyRef.name ?? '', keyRef.optional, what);
      if (data === undefined) return '';
      const value = data[keyRef.key];
      if (value === undefined && !keyRef.optional) throw new EnvError(`${what}: key "${keyRef.key}" not found in ${kind} "${keyRef.name}"`);
      return value ?? '';
    }
    const kind = Object.keys(v.valueFrom).filter((k) => (v.valueFrom as Record<string, unknown>)[k] !== undefined).join(', ') || 'empty valueFrom';
    throw new EnvError(`container ${container.name}: env ${v.name}: ${kind} is not supported by this kubelet`);
  }
  const value = v.value ?? '';
  return value === '' ? '' : expand(value, mappingFor(env));
}

const SUBSCRIPT_RE = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** Downward API field values (upstream podFieldSelectorRuntimeValue + ExtractFieldPathAsString). */
export function fieldRefValue(pod: Pod, fieldPath: string, apiVersion: string | undefined, ctx: EnvContext): string {
  if (apiVersion && apiVersion !== 'v1') throw new EnvError(`fieldRef ${fieldPath}: unsupported apiVersion ${apiVersion}`);
  const sub = SUBSCRIPT_RE.exec(fieldPath);
  if (sub) {
    const map = sub[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[sub[2]!] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name': return pod.metadata?.name ?? '';
    case 'metadata.namespace': return pod.metadata?.namespace ?? '';
    case 'metadata.uid': return pod.metadata?.uid ?? '';
    case 'metadata.labels': return formatMap(pod.metadata?.labels);
    case 'metadata.annotations': return formatMap(pod.metadata?.annotations);
    case 'spec.nodeName': return pod.spec?.nodeName || ctx.nodeName;
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP': return ctx.hostIP;
    case 'status.hostIPs': return ctx.hostIP;
    case 'status.podIP': return ctx.podIPs[0] ?? ctx.podIP;
    case 'status.podIPs': return (ctx.podIPs.length > 0 ? ctx.podIPs : ctx.podIP ? [ctx.podIP] : []).join(',');
    default: throw new EnvError(`fieldRef ${fieldPath}: unsupported field path`);
  }
}

/** upstream fieldpath.FormatMap: sorted `key="value"` lines. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

/** Command and args with $(VAR) expanded against the container's final environment. */
export function expandCommandAndArgs(container: Container, envs: readonly KeyValue[]): { command: string[]; args: string[] } {
  const mapping = mappingFor(new Map(envs.map((e) => [e.key, e.value])));
  return {
    command: (container.command ?? []).map((c) => expand(c, mapping)),
    args: (container.args ?? []).map((a) => expand(a, mapping)),
  };
}
