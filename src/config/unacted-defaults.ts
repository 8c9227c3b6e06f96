/**
 * Upstream fields kubelet-ts does not act on that are accepted only at upstream's default: a
 * value that asks for a behaviour we do not have is refused, naming the field, rather than
 * accepted and ignored. Holds the fields 1.32–1.35 added (pkg/kubelet/apis/config/v1beta1/
 * defaults.go at release-1.35); the older accepted names still follow accepted.ts (checked,
 * reported at start-up).
 */
import { parseDuration } from '../util/duration.js';

/** Whether `v` is upstream's default (or a zero value upstream's defaulting turns into it). */
type IsDefault = (v: unknown) => boolean;

const absentOrEmpty: IsDefault = (v) =>
  v === null || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/** An object whose one member is `key`, its value passing `ok`. */
const onlyMember = (v: unknown, key: string, ok: (x: unknown) => boolean): boolean =>
  typeof v === 'object' && v !== null && Object.keys(v).length === 1 && ok((v as Record<string, unknown>)[key]);

/** name → [the default as the message shows it, its check, why another value is refused]. */
export const UNACTED_DEFAULTS: Readonly<Record<string, readonly [shown: string, isDefault: IsDefault, why: string]>> = {
  imagePullCredentialsVerificationPolicy: [
    'NeverVerifyPreloadedImages',
    (v) => v === '' || v === 'NeverVerifyPreloadedImages',
    'pulled-image credential verification (KubeletEnsureSecretPulledImages) is not implemented',
  ],
  preloadedImagesVerificationAllowlist: [
    '[]',
    (v) => Array.isArray(v) && v.length === 0,
    'pulled-image credential verification is not implemented',
  ],
  mergeDefaultEvictionSettings: [
    'false',
    (v) => v === false,
    'evictionHard given replaces the defaults here, as with false',
  ],
  crashLoopBackOff: [
    '{}',
    (v) => absentOrEmpty(v) || onlyMember(v, 'maxContainerRestartPeriod', (x) => parseDuration(String(x)) === 0),
    'maxContainerRestartPeriod (KubeletCrashLoopBackOffMax) is not implemented: the back-off tops out at 5m',
  ],
  userNamespaces: [
    '{idsPerPod: 65536}',
    (v) => absentOrEmpty(v) || onlyMember(v, 'idsPerPod', (x) => x === 0 || x === 65536),
    'user namespaces are not implemented',
  ],
  containerLogMaxWorkers: ['1', (v) => v === 0 || v === 1, 'container logs are rotated by one worker'],
};

/** A problem when `name` is one of these and `value` is not upstream's default. */
export function unactedDefaultProblem(name: string, value: unknown): string | undefined {
  const entry = UNACTED_DEFAULTS[name];
  if (!entry || entry[1](value)) return undefined;
  return `config field ${name}: kubelet-ts accepts only upstream's default (${entry[0]}) (got ${JSON.stringify(value)}): ${entry[2]}`;
}
