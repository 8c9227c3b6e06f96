/**
 * Container environment, command and args as upstream builds them (kubelet_pods.go
 * makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs, and the forked
 * third_party/forked/golang/expansion):
 *
 *  - `$(VAR)` (src/fieldpath expansion) expands to an earlier variable of the same container;
 *  - env values are expanded in order, each seeing only the ones before it;
 *  - command and args are expanded against the final environment;
 *  - valueFrom.fieldRef and resourceFieldRef read the downward API (src/fieldpath);
 *    configMapKeyRef, secretKeyRef and envFrom read the cached API objects (API server mode);
 *    anything that cannot be resolved is an EnvError, reported as CreateContainerConfigError.
 */
import type { Container, EnvVar, Pod } from '../api/types.js';
import type { KeyValue } from '../cri/types.js';
import { EnvError, expand, fieldRefValue, mappingFor, type FieldPathContext } from '../fieldpath/index.js';
import type { PodObjectSource } from '../volume/types.js';

/** What env needs besides the pod: the downward API's context, resources and API objects. */
export interface EnvContext extends FieldPathContext {
  /**
   * Resolves valueFrom.resourceFieldRef for a container (src/fieldpath resourceFieldRefValue
   * with the node's allocatable bound); without it resourceFieldRef is an EnvError.
   */
  resourceFieldRef?: (
    fs: { containerName?: string; resource: string; divisor?: string | number },
    container: Container,
  ) => string;
  /** ConfigMaps, Secrets and tokens (API server mode); without it configMap/secret refs are EnvErrors. */
  objects?: PodObjectSource;
}

/** A configMap or secret that env reads (configMapKeyRef, secretKeyRef, envFrom). */
interface ObjectRef {
  kind: 'configMap' | 'secret';
  name: string;
  /** A missing optional object reads as no data instead of an EnvError. */
  optional: boolean | undefined;
}

/** A configMap's or secret's key/value map as env sees it (secret values decoded). */
function objectData(
  pod: Pod,
  ctx: EnvContext,
  { kind, name, optional }: ObjectRef,
  what: string,
): Record<string, string> | undefined {
  if (!ctx.objects) throw new EnvError(`${what}: ${kind} references need API server mode (--kubeconfig)`);
  const ns = pod.metadata?.namespace ?? 'default';
  const obj = kind === 'configMap' ? ctx.objects.configMap(ns, name) : ctx.objects.secret(ns, name);
  if (obj === undefined) throw new EnvError(`${what}: ${kind} "${name}" is not synced yet`);
  if (obj === null) {
    if (optional) return undefined;
    throw new EnvError(`${what}: ${kind} "${name}" not found`);
  }
  const data = obj.data ?? {};
  return kind === 'secret'
    ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]))
    : { ...data };
}

const ENV_NAME_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** upstream envFrom: every key of the configMap/secret, with its prefix; invalid names are skipped. */
function envFromValues(pod: Pod, container: Container, ctx: EnvContext, env: Map<string, string>): void {
  for (const f of container.envFrom ?? []) {
    const ref = f.configMapRef ?? f.secretRef;
    const kind = f.configMapRef ? 'configMap' : 'secret';
    if (!ref?.name)
      throw new EnvError(`container ${container.name}: envFrom needs configMapRef or secretRef with a name`);
    const data = objectData(
      pod,
      ctx,
      { kind, name: ref.name, optional: ref.optional },
      `container ${container.name}: envFrom`,
    );
    for (const [k, v] of Object.entries(data ?? {})) {
      const name = `${f.prefix ?? ''}${k}`;
      if (ENV_NAME_RE.test(name)) env.set(name, v);
    }
  }
}

/** The container's environment in spec order (a later duplicate name overrides the value). */
export function makeEnvironmentVariables(pod: Pod, container: Container, ctx: EnvContext): KeyValue[] {
  const env = new Map<string, string>();
  envFromValues(pod, container, ctx, env);
  for (const v of container.env ?? []) {
    env.set(v.name, envValue({ pod, container, ctx }, v, env));
  }
  return [...env].map(([key, value]) => ({ key, value }));
}

/** Whose environment is being built: the same for every variable of one container. */
interface EnvScope {
  pod: Pod;
  container: Container;
  ctx: EnvContext;
}

/** One env entry's value; env holds the variables before it, which $(VAR) may refer to. */
function envValue({ pod, container, ctx }: EnvScope, v: EnvVar, env: ReadonlyMap<string, string>): string {
  if (v.valueFrom) {
    if (v.valueFrom.fieldRef)
      return fieldRefValue(pod, v.valueFrom.fieldRef.fieldPath, v.valueFrom.fieldRef.apiVersion, ctx);
    if (v.valueFrom.resourceFieldRef && ctx.resourceFieldRef)
      return ctx.resourceFieldRef(
        v.valueFrom.resourceFieldRef as { containerName?: string; resource: string; divisor?: string },
        container,
      );
    const keyRef = v.valueFrom.configMapKeyRef ?? v.valueFrom.secretKeyRef;
    if (keyRef) {
      const kind = v.valueFrom.configMapKeyRef ? 'configMap' : 'secret';
      const what = `container ${container.name}: env ${v.name}`;
      const data = objectData(pod, ctx, { kind, name: keyRef.name ?? '', optional: keyRef.optional }, what);
      if (data === undefined) return '';
      const value = data[keyRef.key];
      if (value === undefined && !keyRef.optional)
        throw new EnvError(`${what}: key "${keyRef.key}" not found in ${kind} "${keyRef.name}"`);
      return value ?? '';
    }
    const kind =
      Object.keys(v.valueFrom)
        .filter((k) => (v.valueFrom as Record<string, unknown>)[k] !== undefined)
        .join(', ') || 'empty valueFrom';
    throw new EnvError(`container ${container.name}: env ${v.name}: ${kind} is not supported by this kubelet`);
  }
  const value = v.value ?? '';
  return value === '' ? '' : expand(value, mappingFor(env));
}

/** Command and args with $(VAR) expanded against the container's final environment. */
export function expandCommandAndArgs(
  container: Container,
  envs: readonly KeyValue[],
): { command: string[]; args: string[] } {
  const mapping = mappingFor(new Map(envs.map((e) => [e.key, e.value])));
  return {
    command: (container.command ?? []).map((c) => expand(c, mapping)),
    args: (container.args ?? []).map((a) => expand(a, mapping)),
  };
}
