/**
 * Container environment, command and args as upstream builds them (kubelet_pods.go
 * makeEnvironmentVariables, kubecontainer.ExpandContainerCommandAndArgs, and the forked
 * third_party/forked/golang/expansion):
 *
 *  - the Service variables come first (service-env.ts: the master `kubernetes` Service always,
 *    the pod's namespace's with enableServiceLinks); envFrom and env override them, and
 *    `$(VAR)` may refer to them;
 *  - `$(VAR)` (src/fieldpath expansion) expands to an earlier variable of the same container;
 *  - env values are expanded in order, each seeing only the ones before it;
 *  - command and args are expanded against the final environment;
 *  - valueFrom.fieldRef and resourceFieldRef read the downward API (src/fieldpath);
 *    configMapKeyRef, secretKeyRef and envFrom read the cached API objects (API server mode);
 *    anything that cannot be resolved is an EnvError, reported as CreateContainerConfigError.
 */
import type { Container, EnvVar, Pod } from '../api/types.js';
import { isStaticPod } from '../api/pod.js';
import type { KeyValue } from '../cri/types.js';
import { EnvError, expand, fieldRefValue, mappingFor, type FieldPathContext } from '../fieldpath/index.js';
import type { PodObjectSource } from '../volume/types.js';
import { serviceEnvVarMap, type ServiceLister } from './service-env.js';

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
  /** The Service informer (API server mode); without it no Service variables (standalone, as upstream's empty lister). */
  services?: ServiceLister;
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

/**
 * The Service variables of the pod (upstream makeEnvironmentVariables' first step). A pod from
 * the API server waits until the Services were listed once: KUBERNETES_SERVICE_HOST is what its
 * in-cluster clients need, and a container started without it would never get it.
 */
function serviceEnv(pod: Pod, services: ServiceLister | undefined): Map<string, string> {
  if (!services) return new Map();
  if (!isStaticPod(pod) && !services.hasSynced())
    throw new EnvError('services have not yet been read at least once, cannot construct envvars');
  // Defaulting makes it true; a pod that skipped defaulting reads as the default too.
  const links = pod.spec?.enableServiceLinks ?? true;
  return serviceEnvVarMap(services.list(), pod.metadata?.namespace ?? 'default', links);
}

/**
 * The container's environment: envFrom and env in spec order (a later duplicate name overrides
 * the value), then the Service variables the container does not set itself.
 */
export function makeEnvironmentVariables(pod: Pod, container: Container, ctx: EnvContext): KeyValue[] {
  const services = serviceEnv(pod, ctx.services);
  const env = new Map<string, string>();
  envFromValues(pod, container, ctx, env);
  for (const v of container.env ?? []) {
    const value = envValue({ pod, container, ctx, services }, v, env);
    if (value !== undefined) env.set(v.name, value);
  }
  for (const [k, v] of services) if (!env.has(k)) env.set(k, v);
  return [...env].map(([key, value]) => ({ key, value }));
}

/** Whose environment is being built: the same for every variable of one container. */
interface EnvScope {
  pod: Pod;
  container: Container;
  ctx: EnvContext;
  /** The Service variables, which $(VAR) may refer to after the container's own. */
  services: ReadonlyMap<string, string>;
}

/**
 * One env entry's value; env holds the variables before it, which $(VAR) may refer to.
 * undefined: an optional configMap/secret key that is missing, which upstream leaves out.
 */
function envValue(scope: EnvScope, v: EnvVar, env: ReadonlyMap<string, string>): string | undefined {
  const { pod, container, ctx } = scope;
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
      const value = data?.[keyRef.key];
      if (value === undefined && data !== undefined && !keyRef.optional)
        throw new EnvError(`${what}: key "${keyRef.key}" not found in ${kind} "${keyRef.name}"`);
      return value;
    }
    const kind =
      Object.keys(v.valueFrom)
        .filter((k) => (v.valueFrom as Record<string, unknown>)[k] !== undefined)
        .join(', ') || 'empty valueFrom';
    throw new EnvError(`container ${container.name}: env ${v.name}: ${kind} is not supported by this kubelet`);
  }
  const value = v.value ?? '';
  return value === '' ? '' : expand(value, mappingFor(env, scope.services));
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
