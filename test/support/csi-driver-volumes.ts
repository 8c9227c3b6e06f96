/**
 * The volumes of the test CSI driver (test/support/csi-driver.ts): a directory per volume under
 * <state-dir>/volumes/, bind-mounted at the staging path (NodeStageVolume) and from there (or from
 * the backing directory when the kubelet does not stage) at the pod's target path
 * (NodePublishVolume). Every operation is idempotent as the CSI spec asks: a second publish of a
 * mounted target succeeds, an unpublish of an absent target succeeds.
 */
import * as grpc from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, rmdir, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bindMount, mountAt, unmount } from '../../src/volume/mount.js';

const execFileAsync = promisify(execFile);

/* eslint-disable @typescript-eslint/no-explicit-any -- requests are proto-loader's untyped messages */

/** A gRPC error with a status code, as the handlers answer it. */
export class CsiError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** Volume context key the kubelet sets on inline (CSI ephemeral) volumes. */
const EPHEMERAL_KEY = 'csi.storage.k8s.io/ephemeral';
const DEFAULT_CAPACITY = 1 << 30;

interface VolumeMeta {
  name: string;
  capacityBytes: string;
}

function need(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new CsiError(grpc.status.INVALID_ARGUMENT, `${field} missing`);
  return value;
}

/** Volume ids are file names under volumes/: refuse anything that could leave that directory. */
function volumeId(value: unknown): string {
  const id = need(value, 'volume_id');
  if (!/^[A-Za-z0-9._-]+$/.test(id) || id.startsWith('.')) {
    throw new CsiError(grpc.status.INVALID_ARGUMENT, `volume_id ${JSON.stringify(id)} is not a plain name`);
  }
  return id;
}

/** Whether the mount at path is read-only (mountinfo's per-mount options, field 6). */
async function mountedReadOnly(path: string): Promise<boolean> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const line = text
    .split('\n')
    .filter((l) => l.split(' ')[4] === path)
    .pop();
  return (line?.split(' ')[5] ?? '').split(',').includes('ro');
}

async function isMountPoint(path: string): Promise<boolean> {
  return (await mountAt(path)) !== undefined;
}

async function unmountIfMounted(path: string): Promise<void> {
  while (await isMountPoint(path)) await unmount(path);
}

export class CsiVolumes {
  constructor(private readonly stateDir: string) {}

  backingDir(id: string): string {
    return join(this.stateDir, 'volumes', id);
  }

  private metaPath(id: string): string {
    return join(this.stateDir, 'volumes', `${id}.json`);
  }

  private async meta(id: string): Promise<VolumeMeta | undefined> {
    const text = await readFile(this.metaPath(id), 'utf8').catch(() => undefined);
    return text === undefined ? undefined : (JSON.parse(text) as VolumeMeta);
  }

  /** CreateVolume: the volume's id is its name, so that a retry with the same name finds it. */
  async create(req: any): Promise<any> {
    const id = volumeId(req.name);
    const capacity =
      String(req.capacityRange?.requiredBytes ?? '0') === '0'
        ? String(DEFAULT_CAPACITY)
        : String(req.capacityRange.requiredBytes);
    const existing = await this.meta(id);
    if (existing && existing.capacityBytes !== capacity) {
      throw new CsiError(grpc.status.ALREADY_EXISTS, `volume ${id} exists with ${existing.capacityBytes} bytes`);
    }
    await mkdir(this.backingDir(id), { recursive: true });
    await writeFile(this.metaPath(id), JSON.stringify({ name: id, capacityBytes: capacity }));
    return { volume: { volumeId: id, capacityBytes: capacity, volumeContext: {} } };
  }

  /** DeleteVolume: the data goes; a volume that is not there is already deleted. */
  async delete(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    await rm(this.backingDir(id), { recursive: true, force: true });
    await rm(this.metaPath(id), { force: true });
    return {};
  }

  /** The backing directory of a volume; an inline volume's is made on its first publish. */
  private async source(id: string, context: Record<string, string> | undefined): Promise<string> {
    const dir = this.backingDir(id);
    if (context?.[EPHEMERAL_KEY] === 'true') await mkdir(dir, { recursive: true });
    if (!existsSync(dir)) throw new CsiError(grpc.status.NOT_FOUND, `volume ${id} does not exist`);
    return dir;
  }

  async stage(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    const staging = need(req.stagingTargetPath, 'staging_target_path');
    if (!req.volumeCapability) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'volume_capability missing');
    const dir = await this.source(id, req.volumeContext);
    await mkdir(staging, { recursive: true });
    if (!(await isMountPoint(staging))) await bindMount(dir, staging);
    return {};
  }

  async unstage(req: any): Promise<any> {
    volumeId(req.volumeId);
    await unmountIfMounted(need(req.stagingTargetPath, 'staging_target_path'));
    return {};
  }

  async publish(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    const target = need(req.targetPath, 'target_path');
    if (!req.volumeCapability) throw new CsiError(grpc.status.INVALID_ARGUMENT, 'volume_capability missing');
    const staging = req.stagingTargetPath as string | undefined;
    if (staging && !(await isMountPoint(staging))) {
      throw new CsiError(grpc.status.FAILED_PRECONDITION, `volume ${id} is not staged at ${staging}`);
    }
    const source = staging || (await this.source(id, req.volumeContext));
    await mkdir(target, { recursive: true });
    if (await isMountPoint(target)) return this.republish(target, !!req.readonly);
    await bindMount(source, target);
    if (req.readonly) await execFileAsync('mount', ['-o', 'remount,bind,ro', target]);
    return {};
  }

  /** A second publish at a mounted target: OK when compatible, else ALREADY_EXISTS (the spec). */
  private async republish(target: string, readonly: boolean): Promise<any> {
    if ((await mountedReadOnly(target)) === readonly) return {};
    throw new CsiError(
      grpc.status.ALREADY_EXISTS,
      `${target} is already published ${readonly ? 'read-write' : 'read-only'}`,
    );
  }

  /** Unmounts and removes the target (the spec makes the plugin delete it); absent is fine. */
  async unpublish(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    const target = need(req.targetPath, 'target_path');
    await unmountIfMounted(target);
    await rmdir(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    if (this.isInline(id)) await rm(this.backingDir(id), { recursive: true, force: true });
    return {};
  }

  /** Inline volumes have no meta file (CreateVolume never ran): their data ends with the pod. */
  private isInline(id: string): boolean {
    return !existsSync(this.metaPath(id));
  }

  /** A test marks a volume unhealthy by writing a message to volumes/<id>.abnormal. */
  abnormalPath(id: string): string {
    return join(this.stateDir, 'volumes', `${id}.abnormal`);
  }

  async stats(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    const path = need(req.volumePath, 'volume_path');
    if (!existsSync(path)) throw new CsiError(grpc.status.NOT_FOUND, `volume_path ${path} does not exist`);
    const s = await statfs(path);
    const bytes = (n: number) => String(n * s.bsize);
    const abnormal = await readFile(this.abnormalPath(id), 'utf8').catch(() => undefined);
    return {
      usage: [
        { unit: 'BYTES', total: bytes(s.blocks), available: bytes(s.bavail), used: bytes(s.blocks - s.bfree) },
        { unit: 'INODES', total: String(s.files), available: String(s.ffree), used: String(s.files - s.ffree) },
      ],
      volumeCondition: { abnormal: abnormal !== undefined, message: abnormal?.trim() ?? 'volume is healthy' },
    };
  }

  /** NodeExpandVolume: a directory has no size to grow; the new capacity is recorded and answered. */
  async expand(req: any): Promise<any> {
    const id = volumeId(req.volumeId);
    need(req.volumePath, 'volume_path');
    const meta = await this.meta(id);
    if (!meta) throw new CsiError(grpc.status.NOT_FOUND, `volume ${id} does not exist`);
    const wanted = String(req.capacityRange?.requiredBytes ?? '0');
    if (BigInt(wanted) > BigInt(meta.capacityBytes)) {
      await writeFile(this.metaPath(id), JSON.stringify({ ...meta, capacityBytes: wanted }));
      return { capacityBytes: wanted };
    }
    return { capacityBytes: meta.capacityBytes };
  }
}
