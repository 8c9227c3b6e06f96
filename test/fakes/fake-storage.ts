/**
 * An in-memory StorageObjectSource (what src/apimode serves from the API server): tests put
 * claims, volumes, CSIDrivers, VolumeAttachments and Secrets in its maps and change them to
 * make a claim bind or a volume attach. `calls` records the lookups.
 */
import type {
  V1CSIDriver,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import type { StorageObjectSource } from '../../src/volume/types.js';

/** RFC 7386 merge patch (what the API server applies to the status subresource). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class FakeStorage implements StorageObjectSource {
  /** namespace/name → claim. */
  readonly claims = new Map<string, V1PersistentVolumeClaim>();
  readonly volumes = new Map<string, V1PersistentVolume>();
  readonly drivers = new Map<string, V1CSIDriver>();
  readonly attachments = new Map<string, V1VolumeAttachment>();
  /** node.status.volumesAttached names. */
  readonly attached = new Set<string>();
  /** namespace/name → decoded data. */
  readonly secrets = new Map<string, Record<string, string>>();
  readonly patches: Array<{ namespace: string; name: string; patch: object }> = [];
  readonly calls: string[] = [];

  async persistentVolumeClaim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | null> {
    this.calls.push(`pvc ${namespace}/${name}`);
    return this.claims.get(`${namespace}/${name}`) ?? null;
  }

  async persistentVolume(name: string): Promise<V1PersistentVolume | null> {
    this.calls.push(`pv ${name}`);
    return this.volumes.get(name) ?? null;
  }

  async csiDriver(name: string): Promise<V1CSIDriver | null> {
    this.calls.push(`csidriver ${name}`);
    return this.drivers.get(name) ?? null;
  }

  async volumeAttachment(name: string): Promise<V1VolumeAttachment | null> {
    this.calls.push(`va ${name}`);
    return this.attachments.get(name) ?? null;
  }

  attachedVolumes(): ReadonlySet<string> {
    return this.attached;
  }

  async secret(namespace: string, name: string): Promise<Record<string, string> | null> {
    this.calls.push(`secret ${namespace}/${name}`);
    return this.secrets.get(`${namespace}/${name}`) ?? null;
  }

  /** Recorded, and applied to the claim as the API server applies a merge patch. */
  async patchPersistentVolumeClaimStatus(namespace: string, name: string, patch: object): Promise<void> {
    const key = `${namespace}/${name}`;
    const copy = JSON.parse(JSON.stringify(patch)) as object;
    this.patches.push({ namespace, name, patch: copy });
    this.claims.set(key, mergePatch(this.claims.get(key), copy) as V1PersistentVolumeClaim);
  }

  /** A claim `name` in `namespace`, bound to PV `pvName` when given (and the PV pointing back). */
  addBoundClaim(namespace: string, name: string, pv: { pvName: string; driver: string; handle: string }): void {
    const uid = `pvc-uid-${name}`;
    this.claims.set(`${namespace}/${name}`, {
      metadata: { name, namespace, uid },
      spec: { volumeName: pv.pvName },
      status: { phase: 'Bound' },
    });
    this.volumes.set(pv.pvName, {
      metadata: { name: pv.pvName },
      spec: {
        accessModes: ['ReadWriteOnce'],
        claimRef: { name, namespace, uid },
        csi: { driver: pv.driver, volumeHandle: pv.handle },
      },
    });
  }
}
