/**
 * AppArmor admission (upstream pkg/security/apparmor validate.go and lifecycle
 * AppArmorAdmitHandler): a pending pod that requires AppArmor — any profile other than
 * Unconfined, at pod or container level or in the deprecated
 * `container.apparmor.security.beta.kubernetes.io/` annotations — is refused with reason
 * "AppArmor" when the host cannot enforce it, rather than started unconfined. The host is looked
 * at once, when the agent starts, as upstream: enabling AppArmor needs a restart.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Pod } from '../api/types.js';
import { allPodContainers } from '../api/pod.js';
import { APPARMOR_ANNOTATION_PREFIX, appArmorProfileOf } from '../kuberuntime/security-profiles.js';
import type { AdmitResult } from './admission.js';

/** upstream lifecycle.AppArmorNotAdmittedReason. */
export const APPARMOR_NOT_ADMITTED_REASON = 'AppArmor';

/** Where runc's apparmor.IsEnabled looks (tests point them elsewhere). */
export interface AppArmorHostPaths {
  securityfs: string;
  enabledParameter: string;
}

const HOST_PATHS: AppArmorHostPaths = {
  securityfs: '/sys/kernel/security/apparmor',
  enabledParameter: '/sys/module/apparmor/parameters/enabled',
};

/** runc apparmor.IsEnabled: the securityfs directory exists and the module parameter reads Y. */
function appArmorEnabled(paths: AppArmorHostPaths): boolean {
  if (!existsSync(paths.securityfs)) return false;
  try {
    return readFileSync(paths.enabledParameter, 'utf8').startsWith('Y');
  } catch {
    return false;
  }
}

/** upstream validateHost: why this host cannot enforce AppArmor profiles, or undefined. */
export function validateAppArmorHost(paths: AppArmorHostPaths = HOST_PATHS): string | undefined {
  return appArmorEnabled(paths) ? undefined : 'AppArmor is not enabled on the host';
}

const confining = (p: { type?: string | null } | null | undefined): boolean => !!p && p.type !== 'Unconfined';

/**
 * upstream isRequired: a profile other than Unconfined anywhere. Upstream reads the first
 * annotation of its (unordered) map; here any confining annotation counts, so the answer never
 * depends on map order.
 */
export function appArmorRequired(pod: Pod): boolean {
  if (confining(pod.spec?.securityContext?.appArmorProfile)) return true;
  if (allPodContainers(pod).some((c) => confining(c.securityContext?.appArmorProfile))) return true;
  return Object.entries(pod.metadata?.annotations ?? {}).some(
    ([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && v !== 'unconfined',
  );
}

/** upstream validator: a host check made once (its error, undefined when AppArmor is on), and the pod check. */
export class AppArmorValidator {
  constructor(private readonly hostError: string | undefined) {}

  /** upstream ValidateHost. */
  validateHost(): string | undefined {
    return this.hostError;
  }

  /** upstream Validate: why the pod cannot run here as far as AppArmor goes, or undefined. */
  validate(pod: Pod): string | undefined {
    if (!appArmorRequired(pod)) return undefined;
    if (this.hostError) return this.hostError;
    for (const c of allPodContainers(pod)) {
      const profile = appArmorProfileOf(pod, c);
      if (profile?.type === 'Localhost' && (profile.localhostProfile ?? '').trim() === '')
        return `invalid empty AppArmor profile name: ${JSON.stringify(profile)}`;
    }
    return undefined;
  }

  /**
   * Why ephemeral container `index` cannot start here as far as AppArmor goes, or undefined. It
   * comes by pod update, after admission (upstream never checks it, and it would run
   * unconfined): a confining profile on a host without AppArmor fails that container alone.
   */
  ephemeralRefusal(pod: Pod, index: number): string | undefined {
    const c = pod.spec?.ephemeralContainers?.[index];
    if (!c || !this.hostError || !confining(appArmorProfileOf(pod, c))) return undefined;
    return `Cannot enforce AppArmor: ${this.hostError}`;
  }

  /**
   * upstream appArmorAdmitHandler.Admit: only a pending pod is checked (a running one was admitted
   * before). A pod with no phase yet counts as pending here, so nothing is let through unchecked.
   */
  admit(pod: Pod): AdmitResult {
    const phase = pod.status?.phase;
    if (phase !== undefined && phase !== null && phase !== 'Pending') return { admit: true };
    const err = this.validate(pod);
    if (err === undefined) return { admit: true };
    return { admit: false, reason: APPARMOR_NOT_ADMITTED_REASON, message: `Cannot enforce AppArmor: ${err}` };
  }
}

/** upstream NewValidator: the validator of this host. */
export function newAppArmorValidator(paths?: AppArmorHostPaths): AppArmorValidator {
  return new AppArmorValidator(validateAppArmorHost(paths));
}
