/**
 * runAsNonRoot against the user the container will really run as (upstream getImageUser in
 * kuberuntime_container.go and verifyRunAsNonRoot in security_context_others.go): the effective
 * runAsUser (the container's over the pod's) when one is set, else the image's own user as the
 * runtime reports it in ImageStatus — a numeric uid (containerd already cut a "uid:gid" down to
 * the uid), or a user name, which cannot be checked without the image's /etc/passwd and so is
 * refused. Messages are upstream's, word for word: they end up in the container's waiting
 * message (CreateContainerConfigError).
 */
import type { Container, Pod } from '../api/types.js';
import { formatPod } from '../api/pod.js';
import type { Image } from '../cri/types.js';
import { effectiveSecurityContext, type ImageUser } from './security-context.js';

// The type lives beside its other reader, the security context (which may not import this file).
export type { ImageUser } from './security-context.js';

/** upstream maxUserID (validation.IsValidUserID): uids are 0..MaxInt32. */
const MAX_UID = 2n ** 31n - 1n;

/**
 * upstream getImageUser on the ImageStatus answer: the uid when the runtime gives one, else the
 * user name; an image that names neither (or is not found) runs as root, uid 0.
 */
export function imageUserOf(image: Pick<Image, 'uid' | 'username'> | undefined): ImageUser {
  if (image?.uid !== undefined) return { uid: image.uid, username: '' };
  if (image?.username) return { username: image.username };
  return { uid: 0n, username: '' };
}

/** upstream getImageUser: ImageStatus of the container's image as the pod spec names it. */
export async function getImageUser(
  images: { imageStatus(image: string): Promise<Image | undefined> },
  image: string,
): Promise<ImageUser> {
  return imageUserOf(await images.imageStatus(image));
}

/** upstream verifyRunAsNonRoot: why `container` may not run as `user`, or undefined. */
export function runAsNonRootProblem(pod: Pod, container: Container, user: ImageUser): string | undefined {
  const { runAsNonRoot, runAsUser } = effectiveSecurityContext(pod, container);
  if (runAsNonRoot !== true) return undefined;
  const who = `(pod: "${formatPod(pod)}", container: ${container.name})`;
  if (runAsUser !== undefined && runAsUser !== null)
    return runAsUser === 0 ? `container's runAsUser breaks non-root policy ${who}` : undefined;
  if (user.uid === undefined && user.username !== '')
    return `container has runAsNonRoot and image has non-numeric user (${user.username}), cannot verify user is non-root ${who}`;
  if (user.uid === undefined) return undefined;
  if (user.uid === 0n) return `container has runAsNonRoot and image will run as root ${who}`;
  if (user.uid < 0n || user.uid > MAX_UID)
    return `container has runAsNonRoot and image has an invalid user id (${user.uid}). (Must be 1-(${MAX_UID})): must be between 0 and ${MAX_UID}, inclusive ${who}`;
  return undefined;
}
