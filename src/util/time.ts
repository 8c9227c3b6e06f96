/**
 * API timestamps (upstream metav1.Time): whole seconds, serialized as RFC 3339 in UTC without
 * fractions ("2026-01-01T00:00:00Z"), exactly as the apiserver and the upstream kubelet write
 * them. An ApiTime is a Date, so the client-node types accept it; only its JSON differs.
 */
export class ApiTime extends Date {
  override toJSON(): string {
    return this.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

/** Truncates to the second (metav1.Time keeps only seconds on the wire). */
export function apiTime(t: Date | number): ApiTime {
  const ms = typeof t === 'number' ? t : t.getTime();
  return new ApiTime(Math.floor(ms / 1000) * 1000);
}
