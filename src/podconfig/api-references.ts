/**
 * PreventStaticPodAPIReferences (beta, on by default in v1.35): a pod from a file or a URL may not
 * name an API object, since the kubelet would read it from the apiserver on behalf of a pod the
 * apiserver never admitted (upstream tryDecodeSinglePod with podutil.HasAPIObjectReference).
 * The checks and their order, hence the resource named, are upstream's.
 */
import type { Pod } from '../api/types.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
const list = (v: unknown): Obj[] =>
  Array.isArray(v)
    ? v.flatMap((e: unknown): Obj[] => {
        const o = obj(e);
        return o ? [o] : [];
      })
    : [];
/** Every container of the pod: init, regular and ephemeral (upstream AllContainers). */
function allContainers(spec: Obj): Obj[] {
  return [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)];
}

/** Volume sources whose `secretRef` names a Secret (upstream VisitPodSecretNames). */
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos'];

/** upstream VisitPodSecretNames: pull secrets, env, envFrom and every volume that names a Secret. */
function namesSecret(spec: Obj): boolean {
  if (list(spec.imagePullSecrets).length > 0) return true;
  for (const c of allContainers(spec)) {
    if (list(c.envFrom).some((e) => obj(e.secretRef))) return true;
    if (list(c.env).some((e) => obj(obj(e.valueFrom)?.secretKeyRef))) return true;
  }
  return list(spec.volumes).some(
    (v) =>
      obj(v.secret) ||
      obj(v.azureFile) ||
      obj(obj(v.csi)?.nodePublishSecretRef) ||
      SECRET_REF_SOURCES.some((k) => obj(obj(v[k])?.secretRef)) ||
      list(obj(v.projected)?.sources).some((s) => obj(s.secret)),
  );
}

/** upstream VisitPodConfigmapNames. */
function namesConfigMap(spec: Obj): boolean {
  for (const c of allContainers(spec)) {
    if (list(c.envFrom).some((e) => obj(e.configMapRef))) return true;
    if (list(c.env).some((e) => obj(obj(e.valueFrom)?.configMapKeyRef))) return true;
  }
  return list(spec.volumes).some(
    (v) => obj(v.configMap) || list(obj(v.projected)?.sources).some((s) => obj(s.configMap)),
  );
}

/** The volume sources that need the API, with upstream's words; others (emptyDir, hostPath, …) do not. */
const VOLUME_REFERENCES: Array<[string, string]> = [
  ['configMap', 'configmaps (via configmap volumes)'],
  ['secret', 'secrets (via secret volumes)'],
  ['csi', 'csidrivers (via CSI volumes)'],
  ['glusterfs', 'endpoints (via glusterFS volumes)'],
  ['persistentVolumeClaim', 'persistentvolumeclaims'],
  ['ephemeral', 'persistentvolumeclaims (via ephemeral volumes)'],
  ['azureFile', 'secrets (via azureFile volumes)'],
];

const PROJECTED_REFERENCES: Array<[string, string]> = [
  ['configMap', 'configmaps (via projected volumes)'],
  ['secret', 'secrets (via projected volumes)'],
  ['serviceAccountToken', 'serviceaccounts (via projected volumes)'],
  ['clusterTrustBundle', 'clustertrustbundles'],
  ['podCertificate', 'podcertificates'],
];

function volumeReference(v: Obj): string | undefined {
  for (const [key, resource] of VOLUME_REFERENCES) if (obj(v[key])) return resource;
  for (const s of list(obj(v.projected)?.sources))
    for (const [key, resource] of PROJECTED_REFERENCES) if (obj(s[key])) return resource;
  return undefined;
}

/** upstream HasAPIObjectReference: the plural resource the pod refers to, or undefined. */
export function apiObjectReference(pod: Pod): string | undefined {
  const spec = obj(pod.spec) ?? {};
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') return 'serviceaccounts';
  if (namesSecret(spec)) return 'secrets';
  if (namesConfigMap(spec)) return 'configmaps';
  if (list(spec.resourceClaims).length > 0) return 'resourceclaims';
  for (const v of list(spec.volumes)) {
    const resource = volumeReference(v);
    if (resource) return resource;
  }
  return undefined;
}
