/**
 * What the atomic writer is given for configMap, secret, downwardAPI and projected volumes: file
 * paths, contents, modes and owners, computed as upstream does:
 *
 *  - a file's mode is its item's `mode`, else the volume's `defaultMode`, else 0644 (the API's
 *    default). Both must be 0..0777: upstream's validation, checked here as well because pods
 *    from the API server reach the kubelet unvalidated;
 *  - a projected serviceAccountToken is 0600 instead when the pod has an fsGroup or all its
 *    containers run as one user (FsUserFrom), and is owned by that user (projected.go);
 *  - the pod's securityContext.fsGroup (SetVolumeOwnership → changeFilePermission of
 *    pkg/volume/volume_linux.go) group-owns every file and directory of the volume; read-only
 *    volumes give files g+r (| 0440) and directories g+rx and setgid (| 02550); an emptyDir
 *    (read-write) gives g+rw (| 0660) and directories g+rwx and setgid (| 02770);
 *  - paths are relative, without `..` components and not starting with `..` (the writer's own
 *    `..data` and versioned directories), components ≤ 255 and paths ≤ 4096 characters
 *    (AtomicWriter validatePath).
 */
import type { Pod } from '../api/types.js';
import { FILE_MODE_MESSAGE, ID_MESSAGE, isValidFileMode, isValidId, octal } from '../api/pod.js';
import { errorMessage, VolumeError } from '../errors.js';
import { EnvError } from '../fieldpath/index.js';

export interface PayloadFile {
  /** Text, or bytes (secret values, configMap binaryData) written as they are. */
  data: string | Buffer;
  mode: number;
  /** Owner and group of the file; undefined: left as created (the agent's). */
  uid?: number;
  gid?: number;
}

/** The fsGroup and fsUser of a pod's volumes (upstream MounterArgs.FsGroup / FsUser). */
export interface VolumeOwnership {
  fsGroup?: number;
  fsUser?: number;
}

/** upstream SecretVolumeSourceDefaultMode and the others: 0644. */
export const DEFAULT_FILE_MODE = 0o644;
/** The volume root and the writer's directories: 0755, so any container user can traverse them. */
export const VOLUME_DIR_MODE = 0o755;
/** What a projected serviceAccountToken gets when the pod names an fsUser or fsGroup. */
export const TOKEN_OWNED_MODE = 0o600;

const READ_ONLY_MASK = 0o440;
const READ_WRITE_MASK = 0o660;
const DIR_MASK = 0o2110;

/** An item's or a volume's mode: the value when valid, the fallback when unset, else an EnvError naming the field. */
export function fileMode(mode: unknown, fallback: number, field: string): number {
  if (mode === undefined || mode === null) return fallback;
  if (!isValidFileMode(mode)) throw new EnvError(`${field}: ${octal(mode)} ${FILE_MODE_MESSAGE}`);
  return mode;
}

/** upstream FsUserFrom: the one runAsUser every init and regular container runs as, if there is one. */
export function fsUserFrom(pod: Pod): number | undefined {
  let user: number | undefined;
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    const u = c.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
    if (!isValidId(u) || (user !== undefined && u !== user)) return undefined;
    user = u;
  }
  return user;
}

/** The pod's fsGroup (checked: an EnvError when out of range) and fsUser. */
export function volumeOwnership(pod: Pod): VolumeOwnership {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  if (fsGroup !== undefined && fsGroup !== null && !isValidId(fsGroup)) {
    throw new EnvError(`securityContext.fsGroup: ${JSON.stringify(fsGroup)} ${ID_MESSAGE}`);
  }
  const fsUser = fsUserFrom(pod);
  return { ...(isValidId(fsGroup) ? { fsGroup } : {}), ...(fsUser !== undefined ? { fsUser } : {}) };
}

/** volumeOwnership for setting up one volume: an out-of-range fsGroup is the volume's VolumeError. */
export function volumeOwnershipFor(pod: Pod, volumeName: string): VolumeOwnership {
  try {
    return volumeOwnership(pod);
  } catch (err) {
    throw new VolumeError(`volume ${volumeName}: ${errorMessage(err)}`, { cause: err });
  }
}

/** upstream changeFilePermission's mode: what fsGroup adds to a file or directory. */
export function fsGroupMode(mode: number, isDir: boolean, readOnly: boolean): number {
  let mask = readOnly ? READ_ONLY_MASK : READ_WRITE_MASK;
  if (isDir) mask |= DIR_MASK;
  return mode | mask;
}

/** The projected serviceAccountToken file (projected.go collectData). */
export function tokenFile(data: string, defaultMode: number, own: VolumeOwnership): PayloadFile {
  const owned = own.fsUser !== undefined || own.fsGroup !== undefined;
  return {
    data,
    mode: owned ? TOKEN_OWNED_MODE : defaultMode,
    ...(own.fsUser !== undefined ? { uid: own.fsUser } : {}),
  };
}

/** The payload as written: with an fsGroup, every file group-owned by it and group-readable. */
export function ownedPayload(
  payload: ReadonlyMap<string, PayloadFile>,
  own: VolumeOwnership,
): Map<string, PayloadFile> {
  const out = new Map<string, PayloadFile>();
  for (const [path, f] of payload)
    out.set(path, own.fsGroup === undefined ? f : { ...f, mode: fsGroupMode(f.mode, false, true), gid: own.fsGroup });
  return out;
}

/** Mode and group of the volume root and the writer's directories (read-only volumes). */
export function volumeDirOwnership(own: VolumeOwnership): { mode: number; gid?: number } {
  return own.fsGroup === undefined
    ? { mode: VOLUME_DIR_MODE }
    : { mode: fsGroupMode(VOLUME_DIR_MODE, true, true), gid: own.fsGroup };
}

const MAX_PATH = 4096;
const MAX_NAME = 255;

/** upstream AtomicWriter validatePath (stricter: no empty or `.` components); undefined when fine. */
export function payloadPathProblem(path: string): string | undefined {
  if (typeof path !== 'string' || path === '') return 'must not be empty';
  if (path.startsWith('/')) return 'must be a relative path';
  if (path.length > MAX_PATH) return `must be at most ${MAX_PATH} characters`;
  const parts = path.split('/');
  if (parts.some((p) => p === '..')) return "must not contain '..'";
  if (parts.some((p) => p === '' || p === '.')) return "must not have empty or '.' components";
  if (parts.some((p) => p.length > MAX_NAME)) return `file names must be at most ${MAX_NAME} characters`;
  if (parts[0]!.startsWith('..')) return "must not start with '..'";
  return undefined;
}
