/**
 * The seccomp and AppArmor profiles of a container, as the CRI SecurityProfile (upstream
 * kuberuntime helpers.go getSeccompProfile / fieldSeccompProfile / getAppArmorProfile and
 * pkg/security/apparmor GetProfile):
 *
 *   - seccomp: the container's profile over the pod's; neither set is Unconfined, or
 *     RuntimeDefault with the KubeletConfiguration's seccompDefault. Localhost names a file
 *     below `<root-dir>/seccomp` (upstream seccompProfileRoot); the path must stay below it.
 *     The deprecated seccomp annotations are not read (upstream stopped in 1.27).
 *   - AppArmor: the container's field, then the deprecated
 *     `container.apparmor.security.beta.kubernetes.io/<name>` annotation (static pods may not
 *     have had it synced to the field), then the pod's field; unset sends nothing (the
 *     runtime's default). Localhost names a profile loaded in the kernel. Whether the host can
 *     enforce a profile at all is admission's question (kubelet/apparmor.ts).
 *
 * A problem here is the pod's: the caller fails the container with CreateContainerConfigError.
 */
import { resolve, sep } from 'node:path';
import type { Container, Pod } from '../api/types.js';
import type { SecurityProfile } from '../cri/types.js';
import { kubeletErrorClass } from '../errors.js';

/** A profile the pod asks for that cannot be given: the container's configuration error. */
export class SecurityProfileError extends kubeletErrorClass('KTS_ERR_CONTAINER_CONFIG') {}

/** What the node configuration says about profiles. */
export interface SecurityProfileSettings {
  /** upstream seccompDefault: RuntimeDefault for a container with no seccomp profile. */
  seccompDefault: boolean;
  /** upstream seccompProfileRoot: `<root-dir>/seccomp`. */
  seccompProfileRoot: string;
}

/** upstream's default root dir /var/lib/kubelet, for a runtime manager built without one (tests). */
export const DEFAULT_SECCOMP_PROFILE_ROOT = '/var/lib/kubelet/seccomp';

interface ProfileField {
  type?: string | null;
  localhostProfile?: string | null;
}

const RUNTIME_DEFAULT: SecurityProfile = { profileType: 'RuntimeDefault' };
const UNCONFINED: SecurityProfile = { profileType: 'Unconfined' };

/**
 * `<root>/<profile>`, refused when it leaves root: the API validates a descending relative path,
 * but a pod from a broken apiserver is not validated, and the runtime reads the file as root.
 */
export function seccompLocalhostRef(root: string, profile: string): string {
  const base = resolve(root);
  const ref = resolve(base, `.${sep}${profile}`);
  if (!ref.startsWith(base + sep))
    throw new SecurityProfileError(
      `seccomp localhostProfile ${JSON.stringify(profile)} must be a descending path below ${base}`,
    );
  return ref;
}

/** upstream fieldSeccompProfile: one seccompProfile field (a missing one falls back). */
export function fieldSeccompProfile(
  field: ProfileField | null | undefined,
  root: string,
  fallbackToRuntimeDefault: boolean,
): SecurityProfile {
  if (!field) return fallbackToRuntimeDefault ? RUNTIME_DEFAULT : UNCONFINED;
  if (field.type === 'RuntimeDefault') return RUNTIME_DEFAULT;
  if (field.type === 'Localhost') {
    if (!field.localhostProfile)
      throw new SecurityProfileError('localhostProfile must be set if seccompProfile type is Localhost.');
    return { profileType: 'Localhost', localhostRef: seccompLocalhostRef(root, field.localhostProfile) };
  }
  return UNCONFINED;
}

/** upstream getSeccompProfile: the container's field, else the pod's, else the fallback. */
export function seccompProfileFor(pod: Pod, container: Container, settings: SecurityProfileSettings): SecurityProfile {
  const field = container.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile;
  return fieldSeccompProfile(field, settings.seccompProfileRoot, settings.seccompDefault);
}

/** The deprecated per-container annotation (upstream v1.DeprecatedAppArmorBeta*). */
export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const APPARMOR_RUNTIME_DEFAULT = 'runtime/default';
const APPARMOR_UNCONFINED = 'unconfined';
const APPARMOR_LOCALHOST_PREFIX = 'localhost/';

/** upstream getProfileFromPodAnnotations: the annotation as a profile; an invalid value is none. */
function annotationAppArmorProfile(pod: Pod, containerName: string): ProfileField | undefined {
  const v = pod.metadata?.annotations?.[APPARMOR_ANNOTATION_PREFIX + containerName];
  if (v === undefined) return undefined;
  if (v === APPARMOR_RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
  if (v === APPARMOR_UNCONFINED) return { type: 'Unconfined' };
  if (v.startsWith(APPARMOR_LOCALHOST_PREFIX))
    return { type: 'Localhost', localhostProfile: v.slice(APPARMOR_LOCALHOST_PREFIX.length) };
  return undefined;
}

/** upstream apparmor.GetProfile: container field, deprecated annotation, pod field. */
export function appArmorProfileOf(pod: Pod, container: Pick<Container, 'name' | 'securityContext'>) {
  return (
    container.securityContext?.appArmorProfile ??
    annotationAppArmorProfile(pod, container.name) ??
    pod.spec?.securityContext?.appArmorProfile ??
    undefined
  );
}

/**
 * upstream getAppArmorProfile: the CRI profile and the deprecated string form
 * (apparmor_profile, still sent for older runtimes); both absent when no profile applies.
 */
export function appArmorProfileFor(
  pod: Pod,
  container: Container,
): { apparmor?: SecurityProfile; apparmorProfile?: string } {
  const profile = appArmorProfileOf(pod, container);
  if (!profile) return {};
  switch (profile.type) {
    case 'RuntimeDefault':
      return { apparmor: RUNTIME_DEFAULT, apparmorProfile: APPARMOR_RUNTIME_DEFAULT };
    case 'Unconfined':
      return { apparmor: UNCONFINED, apparmorProfile: APPARMOR_UNCONFINED };
    case 'Localhost': {
      const name = profile.localhostProfile;
      if (name === undefined || name === null)
        throw new SecurityProfileError('missing localhost apparmor profile name');
      return {
        apparmor: { profileType: 'Localhost', localhostRef: name },
        apparmorProfile: APPARMOR_LOCALHOST_PREFIX + name,
      };
    }
    default:
      throw new SecurityProfileError(`unknown apparmor profile type: ${JSON.stringify(profile.type)}`);
  }
}

/** Both profiles of a container's CRI security context. */
export function containerSecurityProfiles(pod: Pod, container: Container, settings: SecurityProfileSettings) {
  return { seccomp: seccompProfileFor(pod, container, settings), ...appArmorProfileFor(pod, container) };
}
