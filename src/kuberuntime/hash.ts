/**
 * The container spec hash, bit for bit upstream's kubecontainer.HashContainer (v1.31 and later,
 * v1.35 included), so that a node taken over from the upstream kubelet keeps its containers: the
 * `io.kubernetes.container.hash` annotation upstream wrote is the one we compute.
 *
 * Upstream hashes only the fields a container may change while it lives (pickFieldsToHash: name
 * and image); everything else in a container is immutable on the API, and resources change in
 * place (resize). The steps, each matched here:
 *   1. json.Marshal(map[string]string{"name", "image"}): keys sorted, Go's string escaping;
 *   2. hashutil.DeepHashObject: go-spew's `%#v` of that []byte, `([]uint8)[123 34 ...]` (the
 *      formatter, not Sdump: no length, capacity or hex dump), written into FNV-32a;
 *   3. strconv.FormatUint(sum, 16): lowercase hex without leading zeros.
 * Checked against upstream's own vectors (test/kuberuntime/upstream-hash-table.test.ts).
 *
 * Containers created by kubelet-ts before this change carry our old hash (16 hex digits of
 * SHA-256 over the whole container); containerHashMatches still accepts it when the spec is
 * unchanged, so upgrading the agent restarts nothing.
 */
import { createHash } from 'node:crypto';
import type { Container } from '../api/types.js';
import { FNV32A_INIT, fnv32aSpewBytes, fnv32aText, goJsonString } from '../util/go-hash.js';

export { goJsonString };

/** upstream HashContainer, as strconv.FormatUint(hash, 16) writes it into the annotation. */
export function hashContainer(container: Container): string {
  return deepHashJson(goMarshalNameImage(container)).toString(16);
}

/**
 * Whether a container's annotated hash says it runs this spec. An upstream hash is compared as
 * the number upstream parses (ParseUint base 16, so leading zeros and upper case do not matter);
 * our pre-upstream hash (exactly 16 digits) by recomputing it from the spec.
 */
export function containerHashMatches(container: Container, annotated: string): boolean {
  if (!/^[0-9a-f]+$/i.test(annotated)) return false;
  const want = hashContainer(container);
  if (BigInt(`0x${annotated}`) === BigInt(`0x${want}`)) return true;
  return annotated.length === LEGACY_HASH_DIGITS && annotated.toLowerCase() === legacyHashContainer(container);
}

/** json.Marshal(pickFieldsToHash(container)): a map, so the keys come sorted. */
function goMarshalNameImage(container: Container): Buffer {
  const json = `{"image":${goJsonString(container.image ?? '')},"name":${goJsonString(container.name ?? '')}}`;
  // Lone UTF-16 surrogates become U+FFFD here, as Go's decoder made them when it read the pod.
  return Buffer.from(json, 'utf8');
}

/** hashutil.DeepHashObject(fnv.New32a(), jsonBytes): FNV-32a of spew's `([]uint8)[b0 b1 ...]`. */
export function deepHashJson(json: Uint8Array): number {
  return fnv32aSpewBytes(fnv32aText(FNV32A_INIT, '([]uint8)'), json);
}

const LEGACY_HASH_DIGITS = 16;

/**
 * The hash kubelet-ts wrote before it followed upstream: the first 16 hex digits of SHA-256 over
 * a canonical JSON of the whole container. Kept only to recognise containers created by those
 * versions; never written any more.
 */
export function legacyHashContainer(container: Container): string {
  return createHash('sha256').update(canonicalJson(container)).digest('hex').slice(0, LEGACY_HASH_DIGITS);
}

/** JSON with sorted keys and without undefined, null, empty arrays and empty objects. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value) ?? null);
}

function canonicalize(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    // Array elements keep their positions: an empty element becomes null rather than vanishing.
    const items = value.map((v) => canonicalize(v) ?? null);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = canonicalize((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}
