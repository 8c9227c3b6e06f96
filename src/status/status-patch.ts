/**
 * The strategic merge patch of a pod status (upstream statusutil.PatchPodStatus, whose
 * CreateTwoWayMergePatch this reduces): the new status, plus null for every field the old one
 * had and the new one lacks, so that the API server drops it. Without the nulls a merge keeps
 * them: a container gone from waiting to running to terminated would read all three states on
 * the API (kubectl describe shows the first, `Waiting`), a condition turned True would keep the
 * reason of its False. Lists with a merge key (conditions by type, container statuses by name)
 * are paired element by element; elements and other lists are replaced as they are.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The patchMergeKey of PodStatus's lists. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  conditions: 'type',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  ephemeralContainerStatuses: 'name',
};

function pairedList(key: string, old: unknown[], next: unknown[]): unknown[] {
  return next.map((e) => {
    // A directive ({type, $patch: delete}) goes as it is.
    const o = isObj(e) && e.$patch === undefined ? old.find((x) => isObj(x) && x[key] === e[key]) : undefined;
    return isObj(e) && isObj(o) ? objectPatch(o, e) : e;
  });
}

function objectPatch(old: Obj, next: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === undefined) continue;
    const o = old[k];
    const key = MERGE_KEYS[k];
    if (isObj(v) && isObj(o)) out[k] = objectPatch(o, v);
    else if (key && Array.isArray(v) && Array.isArray(o)) out[k] = pairedList(key, o, v);
    else out[k] = v;
  }
  for (const k of Object.keys(old)) if (old[k] !== undefined && old[k] !== null && out[k] === undefined) out[k] = null;
  return out;
}

/** The patch that turns `old` (what the API holds, as far as the kubelet knows) into `next`. */
export function podStatusPatch(old: unknown, next: object): object {
  return isObj(old) ? objectPatch(old, next as Obj) : next;
}
