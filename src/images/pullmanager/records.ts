/**
 * The pull records on disk (upstream pullmanager fs_pullrecords.go): kubelet.config.k8s.io/v1alpha1
 * ImagePullIntent files under <root-dir>/image_manager/pulling, one per image being pulled, and
 * ImagePulledRecord files under <root-dir>/image_manager/pulled, one per image ref, saying with
 * which credentials each image name was pulled. A file's name is "sha256-" and the hex sha256 of
 * the image (intent) or the image ref (record); it is written to a ".tmp" file and renamed, so a
 * crash never leaves half a record.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeletError } from '../../errors.js';

export const RECORDS_API_VERSION = 'kubelet.config.k8s.io/v1alpha1';

/** upstream ImagePullSecret: a pod secret's coordinates and the hash of its credential. */
export interface ImagePullSecret {
  uid: string;
  namespace: string;
  name: string;
  credentialHash: string;
}

/** upstream ImagePullCredentials: the secrets an image was pulled with, or node-wide access. */
export interface ImagePullCredentials {
  kubernetesSecrets?: ImagePullSecret[];
  /** Pulled with the node's credentials (config.json, plugins) or none: any pod may use it. */
  nodePodsAccessible?: boolean;
}

/** upstream ImagePulledRecord: credentials by image name without tag or digest. */
export interface ImagePulledRecord {
  lastUpdatedTime: string;
  imageRef: string;
  credentialMapping: Record<string, ImagePullCredentials>;
}

/** What the pull manager needs of the store (upstream PullRecordsAccessor). */
export interface PullRecordsStore {
  writeIntent(image: string): Promise<void>;
  intentExists(image: string): Promise<boolean>;
  deleteIntent(image: string): Promise<void>;
  listIntents(): Promise<string[]>;
  getPulled(imageRef: string): Promise<ImagePulledRecord | undefined>;
  writePulled(record: ImagePulledRecord): Promise<void>;
  deletePulled(imageRef: string): Promise<void>;
  listPulled(): Promise<ImagePulledRecord[]>;
}

const PREFIX = 'sha256-';
const TMP = '.tmp';

export const cacheFilename = (key: string): string => PREFIX + createHash('sha256').update(key).digest('hex');

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  const obj = JSON.parse(text) as unknown;
  if (!obj || typeof obj !== 'object')
    throw new KubeletError('KTS_ERR_IMAGE_PULL', `pull record ${path}: not a JSON object`);
  return obj as Record<string, unknown>;
}

function checkKind(obj: Record<string, unknown>, kind: string, path: string): void {
  if (obj.kind !== kind || obj.apiVersion !== RECORDS_API_VERSION)
    throw new KubeletError('KTS_ERR_IMAGE_PULL', `pull record ${path}: not a ${RECORDS_API_VERSION} ${kind}`);
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const SECRET_FIELDS = ['uid', 'namespace', 'name', 'credentialHash'] as const;

/**
 * A corrupt or hand-edited record's credentialMapping (upstream decodes it strictly): the problem,
 * so the caller pulls again rather than trusting it or throwing a TypeError mid-check.
 */
function credentialMappingProblem(mapping: unknown): string | undefined {
  if (!isMap(mapping)) return 'credentialMapping is not a map';
  for (const [image, creds] of Object.entries(mapping)) {
    const at = `credentialMapping[${JSON.stringify(image)}]`;
    if (!isMap(creds)) return `${at} is not an object`;
    const { kubernetesSecrets: secrets, nodePodsAccessible: node } = creds;
    if (node !== undefined && typeof node !== 'boolean') return `${at}.nodePodsAccessible is not a boolean`;
    if (secrets === undefined) continue;
    if (!Array.isArray(secrets)) return `${at}.kubernetesSecrets is not a list`;
    for (const [i, sec] of secrets.entries())
      if (!isMap(sec) || SECRET_FIELDS.some((f) => typeof sec[f] !== 'string'))
        return `${at}.kubernetesSecrets[${i}] lacks a string uid, namespace, name or credentialHash`;
  }
  return undefined;
}

async function writeAtomic(dir: string, name: string, obj: object): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, name);
  await writeFile(target + TMP, JSON.stringify(obj), { mode: 0o600 });
  await rename(target + TMP, target);
}

async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** upstream NewFSPullRecordsAccessor: the records under <rootDir>/image_manager. */
export class FsPullRecords implements PullRecordsStore {
  readonly pullingDir: string;
  readonly pulledDir: string;

  constructor(rootDir: string) {
    this.pullingDir = join(rootDir, 'image_manager', 'pulling');
    this.pulledDir = join(rootDir, 'image_manager', 'pulled');
  }

  writeIntent(image: string): Promise<void> {
    return writeAtomic(this.pullingDir, cacheFilename(image), {
      kind: 'ImagePullIntent',
      apiVersion: RECORDS_API_VERSION,
      image,
    });
  }

  async intentExists(image: string): Promise<boolean> {
    const path = join(this.pullingDir, cacheFilename(image));
    const obj = await readJson(path);
    if (!obj) return false;
    checkKind(obj, 'ImagePullIntent', path);
    return obj.image === image;
  }

  deleteIntent(image: string): Promise<void> {
    return removeFile(join(this.pullingDir, cacheFilename(image)));
  }

  /** The images of every readable intent; unreadable files are skipped (a record is a hint, not truth). */
  async listIntents(): Promise<string[]> {
    const objs = await readAll(this.pullingDir, 'ImagePullIntent');
    return objs.flatMap((o) => (typeof o.image === 'string' ? [o.image] : []));
  }

  async getPulled(imageRef: string): Promise<ImagePulledRecord | undefined> {
    const path = join(this.pulledDir, cacheFilename(imageRef));
    const obj = await readJson(path);
    if (!obj) return undefined;
    checkKind(obj, 'ImagePulledRecord', path);
    // A hash collision or a hand-edited file: not this image's record (upstream's check).
    if (obj.imageRef !== imageRef) return undefined;
    const credentialMapping = obj.credentialMapping ?? {};
    const problem = credentialMappingProblem(credentialMapping);
    if (problem) throw new KubeletError('KTS_ERR_IMAGE_PULL', `pull record ${path}: ${problem}`);
    return {
      lastUpdatedTime: String(obj.lastUpdatedTime ?? ''),
      imageRef,
      credentialMapping: credentialMapping as Record<string, ImagePullCredentials>,
    };
  }

  writePulled(record: ImagePulledRecord): Promise<void> {
    return writeAtomic(this.pulledDir, cacheFilename(record.imageRef), {
      kind: 'ImagePulledRecord',
      apiVersion: RECORDS_API_VERSION,
      ...record,
    });
  }

  deletePulled(imageRef: string): Promise<void> {
    return removeFile(join(this.pulledDir, cacheFilename(imageRef)));
  }

  async listPulled(): Promise<ImagePulledRecord[]> {
    const objs = await readAll(this.pulledDir, 'ImagePulledRecord');
    return objs.flatMap((o) =>
      typeof o.imageRef === 'string' ? [{ ...(o as unknown as ImagePulledRecord), imageRef: o.imageRef }] : [],
    );
  }
}

/** Every readable record file of `kind` in `dir` (temporary and foreign files skipped). */
async function readAll(dir: string, kind: string): Promise<Record<string, unknown>[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
  const out: Record<string, unknown>[] = [];
  for (const name of names.filter((n) => n.startsWith(PREFIX) && !n.endsWith(TMP))) {
    const obj = await readJson(join(dir, name)).catch(() => undefined);
    if (obj?.kind === kind) out.push(obj);
  }
  return out;
}
