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

  async patchPersistentVolumeClaimStatus(namespace: string, name: string, patch: object): Promise<void> {
    this.patches.push({ namespace, name, patch });
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
