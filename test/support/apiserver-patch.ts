/**
 * Patch semantics of the test apiserver.
 *
 * - JSON merge patch (RFC 7386): objects merge recursively, null deletes, anything else replaces.
 * - Strategic merge patch, simplified: like a merge patch, except that lists named in MERGE_KEYS
 *   merge element by element on their key (conditions by `type`, containerStatuses by `name`,
 *   addresses by `type`, podIPs/hostIPs by `ip`, ...), an element `{"$patch": "delete", key}`
 *   removes it, an element `{"$patch": "replace"}` makes the others the whole list, and
 *   `$setElementOrder/<list>` / `$retainKeys` directives are dropped. Other
 *   lists (images, taints, ...) are replaced whole, as the real strategy does for atomic lists.
 *   This covers what the kubelet patches on pods/status and nodes/status.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** List field name → merge key (upstream patchMergeKey tags of PodStatus and NodeStatus). */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  conditions: 'type',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  ephemeralContainerStatuses: 'name',
  // PodSpec's list kubectl debug patches (pods/ephemeralcontainers).
  ephemeralContainers: 'name',
  addresses: 'type',
  podIPs: 'ip',
  hostIPs: 'ip',
  ownerReferences: 'uid',
  volumesInUse: '',
  // PodSpec: what a `resize` patch names (upstream patchMergeKey of containers and resizePolicy).
  containers: 'name',
  initContainers: 'name',
  resizePolicy: 'resourceName',
};

export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const key = MERGE_KEYS[k];
    if (key && Array.isArray(v) && (Array.isArray(out[k]) || out[k] === undefined))
      out[k] = mergeList((out[k] as unknown[] | undefined) ?? [], v, key);
    else out[k] = strategicMergePatch(out[k], v);
  }
  return out;
}

function mergeList(current: unknown[], patch: unknown[], key: string): unknown[] {
  // A `{"$patch": "replace"}` element: the other elements replace the list (how the kubelet
  // patches node addresses, whose merge key `type` cannot hold two InternalIPs).
  if (patch.some((p) => isObj(p) && p.$patch === 'replace'))
    return patch.filter((p) => !(isObj(p) && p.$patch === 'replace')).map((p) => structuredClone(p));
  const out = current.map((e) => structuredClone(e));
  for (const p of patch) {
    if (!isObj(p)) continue;
    const i = out.findIndex((e) => isObj(e) && e[key] === p[key]);
    if (p.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = strategicMergePatch(out[i], p);
    } else {
      out.push(strategicMergePatch({}, p));
    }
  }
  return out;
}
