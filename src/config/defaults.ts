/**
 * Upstream's defaulting rules beyond "absent means default" (pkg/kubelet/apis/config/v1beta1/
 * defaults.go SetDefaults_KubeletConfiguration), and the Taint objects of registerWithTaints.
 */
import { parseDuration } from '../util/duration.js';
import type { FieldKind } from './schema.js';

/** A file value that upstream's defaulting treats as unset: 0, "0s", "" (zeroDuration, 0, ""). */
export function isZeroValue(kind: FieldKind, raw: unknown): boolean {
  if (kind === 'duration') return typeof raw === 'string' && parseDuration(raw) === 0;
  if (kind === 'int' || kind === 'port') return raw === 0;
  return raw === '';
}

const nonZeroDuration = (raw: unknown): boolean => typeof raw === 'string' && (parseDuration(raw) ?? 0) > 0;

/**
 * Defaults that depend on other fields of the file (`kc` holds the converted values, flags applied):
 * - nodeStatusReportFrequency unset or 0 follows a nodeStatusUpdateFrequency set explicitly in the
 *   file (backward compatibility upstream), else 5m.
 * - serializeImagePulls unset is false when maxParallelImagePulls is 2 or more (so a user sets one
 *   field, not both); an explicit value (file or --serialize-image-pulls) wins.
 */
export function applyDependentDefaults(
  kc: Record<string, unknown>,
  file: Record<string, unknown>,
  flags: ReadonlyMap<string, string>,
): void {
  if (!nonZeroDuration(file.nodeStatusReportFrequency) && nonZeroDuration(file.nodeStatusUpdateFrequency)) {
    kc.nodeStatusReportFrequencyMs = parseDuration(file.nodeStatusUpdateFrequency as string);
  }
  const serializeSet = file.serializeImagePulls !== undefined || flags.has('serialize-image-pulls');
  if (!serializeSet && typeof kc.maxParallelImagePulls === 'number' && kc.maxParallelImagePulls >= 2)
    kc.serializeImagePulls = false;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const TAINT_MEMBERS = ['key', 'value', 'effect', 'timeAdded'];

/** One Taint object (core/v1 Taint) → the flag form key[=value]:Effect, or a problem. */
function taintString(t: unknown, where: string): { value?: string; problem?: string } {
  if (t === null || typeof t !== 'object' || Array.isArray(t))
    return { problem: `${where}: must be a Taint object {key, value, effect} (got ${JSON.stringify(t)})` };
  const o = t as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !TAINT_MEMBERS.includes(k));
  if (extra.length > 0) return { problem: `${where}: unknown field "${extra[0]}"` };
  if (typeof o.key !== 'string' || o.key === '') return { problem: `${where}.key: must be a non-empty string` };
  if (o.value !== undefined && typeof o.value !== 'string') return { problem: `${where}.value: must be a string` };
  if (typeof o.effect !== 'string' || !TAINT_EFFECTS.includes(o.effect))
    return { problem: `${where}.effect: must be one of ${TAINT_EFFECTS.join(', ')} (got ${JSON.stringify(o.effect)})` };
  return { value: o.value ? `${o.key}=${o.value}:${o.effect}` : `${o.key}:${o.effect}` };
}

/** registerWithTaints: Taint objects in the file (upstream []v1.Taint), key=value:Effect,... on the flag. */
export function convertTaints(raw: unknown, where: string): { value?: unknown; problem?: string } {
  if (typeof raw === 'string')
    return {
      value: raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    };
  if (!Array.isArray(raw))
    return { problem: `${where}: must be a list of Taint objects {key, value, effect} (got ${JSON.stringify(raw)})` };
  const out: string[] = [];
  for (const [i, t] of raw.entries()) {
    const r = taintString(t, `${where}[${i}]`);
    if (r.problem) return { problem: r.problem };
    out.push(r.value!);
  }
  return { value: out };
}
