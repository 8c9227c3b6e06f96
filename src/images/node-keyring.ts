/**
 * The node's keyring (upstream: the default docker config provider, then the registered
 * credential provider plugins, unioned after the pod's secrets in the image manager): built once
 * at start-up, where a bad credential provider configuration stops the kubelet with a ConfigError.
 */
import { ExternalCredentialProviderKeyring, registerCredentialProviderPlugins } from './credentialprovider/plugin.js';
import { NodeDockerConfigKeyring, dockerConfigSearchPaths } from './docker-config.js';
import { UnionDockerKeyring, type DockerKeyring } from './keyring.js';

export interface NodeKeyringOptions {
  /** --root-dir: the first place the docker config file is looked for. */
  rootDir: string;
  /** --image-credential-provider-config: a CredentialProviderConfig file or directory; absent = no plugins. */
  credentialProviderConfig?: string | undefined;
  /** --image-credential-provider-bin-dir: where the plugins' executables are. */
  credentialProviderBinDir?: string | undefined;
}

export function createNodeKeyring(opts: NodeKeyringOptions): DockerKeyring {
  const keyrings: DockerKeyring[] = [new NodeDockerConfigKeyring(dockerConfigSearchPaths(opts.rootDir))];
  if (opts.credentialProviderConfig) {
    const plugins = registerCredentialProviderPlugins(opts.credentialProviderConfig, opts.credentialProviderBinDir);
    keyrings.push(new ExternalCredentialProviderKeyring(plugins));
  }
  return new UnionDockerKeyring(keyrings);
}
