/**
 * Resource name predicates of upstream's core/v1 helper (pkg/apis/core/v1/helper/helpers.go):
 * which names are native (cpu, memory, hugepages-*, *kubernetes.io/*) and which are extended
 * resources a device plugin may advertise (example.com/gpu).
 */
import { isDns1123Subdomain } from './pod-identity.js';

export const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MAX = 63;
/** upstream core.ResourceDefaultNamespacePrefix. */
const DEFAULT_NAMESPACE_PREFIX = 'kubernetes.io/';
/** upstream core.DefaultResourceRequestsPrefix: the quota name of an extended resource. */
const REQUESTS_PREFIX = 'requests.';

/** Label and annotation keys: `[prefix/]name`, prefix a DNS-1123 subdomain, name ≤ 63 chars (validation.IsQualifiedName). */
export function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1]!;
  if (name.length > QUALIFIED_NAME_MAX || !QUALIFIED_NAME_PART.test(name)) return false;
  return parts.length === 1 || (parts[0]!.length > 0 && isDns1123Subdomain(parts[0]!));
}

/** A native resource: no domain, or a (sub)domain of kubernetes.io (IsNativeResource). */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes(DEFAULT_NAMESPACE_PREFIX);
}

/**
 * An extended resource (IsExtendedResourceName): not native, not a quota name itself, and its
 * quota name `requests.<name>` is a qualified name.
 */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`);
}
