/**
 * imagePullCredentialsVerificationPolicy and preloadedImagesVerificationAllowlist as upstream
 * validates them (ValidateKubeletConfiguration, pullmanager getAllowlistImagePattern); the image
 * pull manager (src/images/pullmanager) acts on them.
 */
import { ConfigError } from '../errors.js';

export const VERIFICATION_POLICIES = [
  'NeverVerify',
  'NeverVerifyPreloadedImages',
  'NeverVerifyAllowlistedImages',
  'AlwaysVerify',
] as const;
export type VerificationPolicy = (typeof VERIFICATION_POLICIES)[number];

/** Whether `repo` is already a normalized repository name: a registry host first, no tag, Docker Hub's "library/". */
function isFullRepository(repo: string): boolean {
  const parts = repo.split('/');
  const host = parts[0]!;
  if (parts.length < 2 || !(host.includes('.') || host.includes(':') || host === 'localhost')) return false;
  if (parts[parts.length - 1]!.includes(':')) return false;
  return !(host === 'docker.io' && parts.length === 2);
}

/** A repository path as docker's reference grammar has it: [host[:port]/]component(/component)*. */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const HOST =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]+)?';
const REPOSITORY = new RegExp(`^(?:${HOST}/)?${COMPONENT}(?:/${COMPONENT})*$`);

/**
 * One allowlist entry (upstream getAllowlistImagePattern): "registry/path" (the image's
 * repository, fully qualified, no tag or digest) or "registry/path/*" (every repository under
 * it). Returns the normalized pattern or throws naming the problem.
 */
export function parseAllowlistPattern(pattern: string): { prefix: boolean; value: string } {
  if (pattern !== pattern.trim()) throw new ConfigError([`leading/trailing spaces are not allowed: ${pattern}`]);
  const prefix = pattern.endsWith('/*');
  const value = prefix ? pattern.slice(0, -1) : pattern;
  if (value.length === 0) throw new ConfigError([`the supplied pattern is too short: ${pattern}`]);
  if (value.includes('*'))
    throw new ConfigError([`not a valid wildcard pattern, only patterns ending with '/*' are allowed: ${pattern}`]);
  if (prefix) {
    if (value.length === 1) throw new ConfigError(['at least registry hostname is required']);
    return { prefix, value };
  }
  const noTag = value.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
  if (!REPOSITORY.test(noTag)) throw new ConfigError([`failed to parse as an image name: ${pattern}`]);
  if (!isFullRepository(value))
    throw new ConfigError([`neither tag nor digest is accepted in an image reference: ${pattern}`]);
  return { prefix, value };
}

/** The allowlist's problems (upstream ValidateAllowlistImagesPatterns), one message per entry. */
export function allowlistProblems(patterns: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of patterns) {
    try {
      parseAllowlistPattern(p);
    } catch (err) {
      out.push(err instanceof ConfigError ? err.problems.join('; ') : String(err));
    }
  }
  return out;
}

/** The config's problems with the two fields (upstream's messages), empty when valid. */
export function verificationConfigProblems(policy: string, allowlist: readonly string[]): string[] {
  if (!(VERIFICATION_POLICIES as readonly string[]).includes(policy))
    return [
      `invalid configuration: option "${policy}" specified for imagePullCredentialsVerificationPolicy. Valid options are ${VERIFICATION_POLICIES.map((p) => `"${p}"`).join(', ')}`,
    ];
  if (policy !== 'NeverVerifyAllowlistedImages')
    return allowlist.length > 0
      ? [
          'invalid configuration: can\'t set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVerificationPolicy` is not "NeverVerifyAllowlistedImages"',
        ]
      : [];
  return allowlistProblems(allowlist).map((m) => `preloadedImagesVerificationAllowlist: ${m}`);
}
