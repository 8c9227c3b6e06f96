/**
 * Manifest decoding, as upstream's tryDecodeSinglePod / tryDecodePodList: YAML or JSON text →
 * API defaults → validation → (for file and URL pods) static pod identity. Every failure is a
 * ManifestError naming the file (or URL) and the field.
 */
import { isScalar, parseAllDocuments } from 'yaml';
import { ManifestError, errorMessage } from '../errors.js';
import { apiObjectReference } from './api-references.js';
import type { Pod } from '../api/types.js';
import { isObj, setPodDefaults, type Obj } from './defaults.js';
import { isDns1123Subdomain, summarizeProblems, validatePod, type Problem } from './validation.js';
import { applyStaticPodIdentity } from './static-pod.js';
import { FileSource, HTTPSource } from './types.js';

/**
 * Parses YAML or JSON text holding exactly one document. `where` (a file path or URL) is only
 * used in error messages.
 */
export function parseManifestText(text: string, where: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(text);
    } catch (jsonErr) {
      // Perhaps a YAML flow mapping; let the YAML parser have it and report its complaint.
      try {
        return parseYaml(text, where);
      } catch {
        throw new ManifestError(where, `not valid JSON: ${errorMessage(jsonErr)}`, undefined, { cause: jsonErr });
      }
    }
  }
  return parseYaml(text, where);
}

function parseYaml(text: string, where: string): unknown {
  let docs;
  try {
    docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    throw new ManifestError(where, `not valid YAML: ${firstLine(errorMessage(err))}`, undefined, { cause: err });
  }
  if (!Array.isArray(docs)) docs = [docs];
  const nonEmpty = docs.filter(
    (d) => d.errors.length > 0 || !(d.contents === null || (isScalar(d.contents) && d.contents.value === null)),
  );
  for (const d of nonEmpty) {
    if (d.errors.length > 0)
      throw new ManifestError(where, `not valid YAML: ${firstLine(d.errors[0]!.message)}`, undefined, {
        cause: d.errors[0],
      });
  }
  if (nonEmpty.length === 0) throw new ManifestError(where, 'the manifest is empty');
  if (nonEmpty.length > 1)
    throw new ManifestError(where, `holds ${nonEmpty.length} YAML documents; a manifest holds exactly one object`);
  try {
    return nonEmpty[0]!.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ManifestError(where, `not valid YAML: ${firstLine(errorMessage(err))}`, undefined, { cause: err });
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim().replace(/:$/, '');
}

function checkTypeMeta(obj: unknown, where: string, kinds: readonly string[]): Obj {
  if (!isObj(obj))
    throw new ManifestError(
      where,
      `the manifest must be an object, got ${Array.isArray(obj) ? 'a list' : JSON.stringify(obj)}`,
    );
  if (obj.apiVersion === undefined || obj.apiVersion === null || obj.apiVersion === '') {
    throw new ManifestError(where, 'Required value: must be "v1"', 'apiVersion');
  }
  if (obj.apiVersion !== 'v1')
    throw new ManifestError(where, `${JSON.stringify(obj.apiVersion)} is not supported; must be "v1"`, 'apiVersion');
  if (obj.kind === undefined || obj.kind === null || obj.kind === '') {
    throw new ManifestError(where, `Required value: must be ${kinds.map((k) => `"${k}"`).join(' or ')}`, 'kind');
  }
  if (typeof obj.kind !== 'string' || !kinds.includes(obj.kind)) {
    throw new ManifestError(
      where,
      `${JSON.stringify(obj.kind)} is not supported; must be ${kinds.map((k) => `"${k}"`).join(' or ')}`,
      'kind',
    );
  }
  return obj;
}

function problemsError(where: string, problems: Problem[], prefix = ''): ManifestError {
  const { field, message } = summarizeProblems(problems, prefix);
  return new ManifestError(where, message, field);
}

/** metadata.creationTimestamp / deletionTimestamp arrive as RFC 3339 strings; the Pod type says Date. */
function convertTimestamps(pod: Obj): Problem[] {
  const problems: Problem[] = [];
  const meta = pod.metadata;
  if (!isObj(meta)) return problems;
  for (const k of ['creationTimestamp', 'deletionTimestamp']) {
    const v = meta[k];
    if (v === undefined || v === null || v instanceof Date) continue;
    const d = typeof v === 'string' ? new Date(v) : undefined;
    if (!d || Number.isNaN(d.getTime()))
      problems.push({ field: `metadata.${k}`, message: `${JSON.stringify(v)} is not an RFC 3339 time` });
    else meta[k] = d;
  }
  return problems;
}

/** Defaults and validates one decoded Pod object (already known to be kind Pod). */
function defaultAndValidate(obj: Obj, where: string, prefix = ''): Pod {
  setPodDefaults(obj);
  const problems = [...validatePod(obj), ...convertTimestamps(obj)];
  if (problems.length > 0) throw problemsError(where, problems, prefix);
  return obj as Pod;
}

/**
 * tryDecodeSinglePod: YAML or JSON text holding one v1 Pod → the defaulted, validated Pod.
 * No static pod identity is applied (see decodeStaticPodManifest).
 */
export function decodeSinglePod(text: string, where: string): Pod {
  const obj = checkTypeMeta(parseManifestText(text, where), where, ['Pod']);
  return defaultAndValidate(obj, where);
}

/** YAML or JSON text holding a v1 Pod or a v1 PodList → the defaulted, validated pods. */
export function decodePodOrPodList(text: string, where: string): Pod[] {
  return decodeEither(text, where).pods;
}

function decodeEither(text: string, where: string): { list: boolean; pods: Pod[] } {
  const obj = checkTypeMeta(parseManifestText(text, where), where, ['Pod', 'PodList']);
  if (obj.kind === 'Pod') return { list: false, pods: [defaultAndValidate(obj, where)] };
  const items = obj.items ?? [];
  if (!Array.isArray(items)) throw new ManifestError(where, `must be a list, got ${JSON.stringify(items)}`, 'items');
  const pods = items.map((item: unknown, i) => {
    if (!isObj(item)) throw new ManifestError(where, `must be an object, got ${JSON.stringify(item)}`, `items[${i}]`);
    // Items of a v1 PodList may omit their own apiVersion/kind.
    if (
      (item.apiVersion !== undefined && item.apiVersion !== 'v1') ||
      (item.kind !== undefined && item.kind !== 'Pod')
    ) {
      throw new ManifestError(
        where,
        `${JSON.stringify(`${String(item.apiVersion)}/${String(item.kind)}`)} is not a v1 Pod`,
        `items[${i}]`,
      );
    }
    return defaultAndValidate(item, where, `items[${i}].`);
  });
  return { list: true, pods };
}

/** PreventStaticPodAPIReferences (see api-references.ts), with upstream's message. */
function refuseAPIReferences(pod: Pod, where: string, field: string): void {
  const resource = apiObjectReference(pod);
  if (resource) throw new ManifestError(where, `static pods may not reference ${resource}`, field);
}

function checkGeneratedName(pod: Pod, where: string, field: string): void {
  const name = pod.metadata!.name!;
  if (!isDns1123Subdomain(name)) {
    throw new ManifestError(
      where,
      `${JSON.stringify(name)} (the name with the node name appended) is not a valid DNS-1123 subdomain`,
      field,
    );
  }
}

/**
 * A static pod from the file source: one Pod per file, decoded, defaulted, validated and given
 * its static identity (name `<name>-<node>`, UID from node + path + content, annotations).
 */
export function decodeStaticPodManifest(text: string, opts: { file: string; nodeName: string }): Pod {
  const pod = decodeSinglePod(text, opts.file);
  refuseAPIReferences(pod, opts.file, 'spec');
  applyStaticPodIdentity(pod, { source: opts.file, nodeName: opts.nodeName, kind: FileSource });
  checkGeneratedName(pod, opts.file, 'metadata.name');
  return pod;
}

/** Pods from a manifest URL (a Pod or a PodList), each given its identity for the http source. */
export function decodeUrlManifest(text: string, opts: { url: string; nodeName: string }): Pod[] {
  const { list, pods } = decodeEither(text, opts.url);
  pods.forEach((pod, i) => {
    refuseAPIReferences(pod, opts.url, list ? `items[${i}].spec` : 'spec');
    applyStaticPodIdentity(pod, { source: opts.url, nodeName: opts.nodeName, kind: HTTPSource });
    checkGeneratedName(pod, opts.url, list ? `items[${i}].metadata.name` : 'metadata.name');
  });
  return pods;
}
