/**
 * The agent's version: the one place it is written (node status kubeletVersion, User-Agent,
 * --version, BirthCry). It names the upstream Kubernetes release whose CRI proto, API fields and
 * kubelet behaviour we follow, so version-skew checks and `kubectl get nodes` read it as a
 * kubelet of that minor; the `-kts.` pre-release suffix carries this package's own version
 * (package.json "version", checked by test/cli-version.test.ts).
 */
export const UPSTREAM_VERSION = 'v1.35.0';
export const PACKAGE_VERSION = '0.1.0';
export const VERSION = `${UPSTREAM_VERSION}-kts.${PACKAGE_VERSION}`;
