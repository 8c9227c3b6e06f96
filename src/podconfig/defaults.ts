/**
 * Upstream API defaulting (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go) for the pod fields a
 * kubelet reads, applied to a freshly decoded manifest before validation. Written defensively:
 * a field of the wrong type is left alone for validation to report.
 */
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../api/pod.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function objects(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObj) : [];
}

/** Sets `o[key] = value` when the field is absent, null, or (for `zeroIsUnset`) 0 or ''. */
function dflt(o: Obj, key: string, value: unknown, zeroIsUnset = false): void {
  const cur = o[key];
  if (cur === undefined || cur === null || (zeroIsUnset && (cur === 0 || cur === ''))) o[key] = value;
}

/** Upstream's rule: Always when the tag is `latest` or there is neither tag nor digest. */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : '';
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  return tag === 'latest' || (tag === '' && digest === '') ? 'Always' : 'IfNotPresent';
}

const DefaultSchedulerName = 'default-scheduler';
const DefaultTerminationMessagePath = '/dev/termination-log';
/** Mode of secret, configMap, downwardAPI and projected volume files (0644). */
const DefaultVolumeFileMode = 0o644;

/** Applies API defaults in place to a decoded Pod object. */
export function setPodDefaults(pod: Obj): void {
  if (!isObj(pod.metadata)) dflt(pod, 'metadata', {});
  if (isObj(pod.metadata)) dflt(pod.metadata, 'namespace', 'default', true);
  const spec = pod.spec;
  if (!isObj(spec)) return;

  dflt(spec, 'restartPolicy', 'Always', true);
  dflt(spec, 'dnsPolicy', 'ClusterFirst', true);
  dflt(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  dflt(spec, 'schedulerName', DefaultSchedulerName, true);
  dflt(spec, 'securityContext', {});
  dflt(spec, 'enableServiceLinks', true);

  for (const v of objects(spec.volumes)) setVolumeDefaults(v);

  const all = [...objects(spec.initContainers), ...objects(spec.containers), ...objects(spec.ephemeralContainers)];
  for (const c of all) setContainerDefaults(c);

  if (spec.hostNetwork === true) {
    // defaultHostNetworkPorts: with the host's network the host port is the container port.
    for (const c of all) {
      for (const p of objects(c.ports)) {
        if ((p.hostPort === undefined || p.hostPort === 0) && typeof p.containerPort === 'number')
          p.hostPort = p.containerPort;
      }
    }
  }
}

function setVolumeDefaults(v: Obj): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = v[k];
    if (isObj(src)) dflt(src, 'defaultMode', DefaultVolumeFileMode);
  }
  if (isObj(v.hostPath)) dflt(v.hostPath, 'type', '');
}

function setContainerDefaults(c: Obj): void {
  if (typeof c.image === 'string' && c.image !== '') dflt(c, 'imagePullPolicy', defaultImagePullPolicy(c.image), true);
  dflt(c, 'terminationMessagePath', DefaultTerminationMessagePath, true);
  dflt(c, 'terminationMessagePolicy', 'File', true);

  for (const p of objects(c.ports)) dflt(p, 'protocol', 'TCP', true);

  for (const e of objects(c.env)) {
    if (isObj(e.valueFrom) && isObj(e.valueFrom.fieldRef)) dflt(e.valueFrom.fieldRef, 'apiVersion', 'v1', true);
  }

  for (const k of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const probe = c[k];
    if (!isObj(probe)) continue;
    dflt(probe, 'timeoutSeconds', 1, true);
    dflt(probe, 'periodSeconds', 10, true);
    dflt(probe, 'successThreshold', 1, true);
    dflt(probe, 'failureThreshold', 3, true);
    setHandlerDefaults(probe);
  }
  if (isObj(c.lifecycle)) {
    for (const k of ['postStart', 'preStop']) {
      const h = c.lifecycle[k];
      if (isObj(h)) setHandlerDefaults(h);
    }
  }

  // SetDefaults_Pod: a limit with no request requests the limit.
  const res = c.resources;
  if (isObj(res) && isObj(res.limits)) {
    if (res.requests === undefined || res.requests === null) res.requests = {};
    if (isObj(res.requests)) {
      for (const [name, q] of Object.entries(res.limits)) dflt(res.requests, name, q);
    }
  }
}

function setHandlerDefaults(h: Obj): void {
  if (isObj(h.httpGet)) {
    dflt(h.httpGet, 'path', '/', true);
    dflt(h.httpGet, 'scheme', 'HTTP', true);
  }
}
