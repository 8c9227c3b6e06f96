/**
 * The container spec hash (upstream kubecontainer.HashContainer). It is stored on each container
 * as an annotation; when the spec's hash no longer matches, computePodActions restarts the
 * container. It must therefore be stable across agent restarts and Node versions: we hash a
 * canonical JSON of the whole V1Container (keys sorted, empty values dropped as Go's omitempty
 * would, so `env: []` and a missing `env` hash alike).
 */
import { createHash } from 'node:crypto';
import type { Container } from '../api/types.js';

/** 16 lowercase hex digits (64 bits of SHA-256 over the canonical JSON). */
export function hashContainer(container: Container): string {
  // Upstream 1.35 hashes only name and image, so a resize (or any other in-place change) keeps the container.
  const fields = { name: container.name, image: container.image };
  return createHash('sha256').update(canonicalJson(fields)).digest('hex').slice(0, 16);
}

/** JSON with sorted keys and without undefined, null, empty arrays and empty objects. */
export function canonicalJson(value: unknown): string {
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
