/**
 * The credential verification policies (upstream pullmanager image_pull_policies.go and the
 * kubelet config's imagePullCredentialsVerificationPolicy): whether an image already on the node
 * needs the pod's credentials checked against the pull records before it is used.
 * - NeverVerify: no check, as before KEP-2535;
 * - NeverVerifyPreloadedImages (default): images the kubelet pulled are checked, images it never
 *   pulled (no record: preloaded) are not;
 * - NeverVerifyAllowlistedImages: images named by preloadedImagesVerificationAllowlist are not
 *   checked, every other one is;
 * - AlwaysVerify: every image is checked, preloaded ones included.
 */
import { parseAllowlistPattern, type VerificationPolicy } from '../../config/image-credentials.js';
import { repoToPull } from '../keyring.js';

export { VERIFICATION_POLICIES, type VerificationPolicy } from '../../config/image-credentials.js';

/** upstream ImagePullPolicyEnforcer. `pulledByKubelet`: a pull record or intent exists. */
export type RequireVerification = (image: string, pulledByKubelet: boolean) => boolean;

function allowlisted(patterns: readonly string[]): RequireVerification {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const { prefix, value } = parseAllowlistPattern(p);
    if (prefix) prefixes.push(value);
    else exact.add(value);
  }
  return (image) => {
    const repo = repoToPull(image);
    return !(exact.has(repo) || prefixes.some((p) => repo.startsWith(p)));
  };
}

/** upstream NewImagePullCredentialVerificationPolicy. The allowlist is validated at config load. */
export function verificationPolicy(policy: VerificationPolicy, allowlist: readonly string[] = []): RequireVerification {
  switch (policy) {
    case 'NeverVerify':
      return () => false;
    case 'NeverVerifyPreloadedImages':
      return (_image, pulledByKubelet) => pulledByKubelet;
    case 'NeverVerifyAllowlistedImages':
      return allowlisted(allowlist);
    case 'AlwaysVerify':
      return () => true;
  }
}
