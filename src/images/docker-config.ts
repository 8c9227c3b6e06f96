/**
 * The node's docker config keyring (upstream pkg/credentialprovider config.go ReadDockerConfigFile
 * and default_provider.go): the first valid `config.json` in the kubelet's root dir, the working
 * dir, $HOME/.docker and /.docker; failing that, the first valid legacy `.dockercfg` in the root
 * dir, the working dir, $HOME and /. Upstream caches what it read for 5 minutes
 * (CachingDockerConfigProvider), so an edited file is seen within that time without a restart.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AuthConfig } from '../cri/types.js';
import { errorMessage } from '../errors.js';
import { realClock, type Clock } from '../util/clock.js';
import { log } from '../util/log.js';
import { BasicDockerKeyring, dockerConfigProblem, type DockerConfig, type DockerKeyring } from './keyring.js';

/** upstream CachingDockerConfigProvider's Lifetime for the default provider. */
export const DOCKER_CONFIG_CACHE_MS = 5 * 60_000;

/** upstream DefaultDockerConfigJSONPaths / DefaultDockercfgPaths, the root dir being the preferred path. */
export function dockerConfigSearchPaths(rootDir: string, home = homedir()): { json: string[]; cfg: string[] } {
  return {
    json: [rootDir, '', join(home, '.docker'), '/.docker'].map((d) => resolve(d, 'config.json')),
    cfg: [rootDir, '', home, '/'].map((d) => resolve(d, '.dockercfg')),
  };
}

/** A docker config file larger than this is skipped (upstream reads any size; a node's is a few KiB). */
export const MAX_DOCKER_CONFIG_BYTES = 4 << 20;

/**
 * The file's text; undefined when absent, or (with a warning) when it is not a regular file
 * (a link to a FIFO, /dev/zero, a directory) or over the size bound, so nothing blocks or fills memory.
 */
function readBoundedFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const why = !st.isFile() ? 'is not a regular file' : st.size > MAX_DOCKER_CONFIG_BYTES ? 'is too large' : '';
    if (why) {
      log('images').warn({ path, size: st.size, max: MAX_DOCKER_CONFIG_BYTES }, `docker config file ${why}; skipped`);
      return undefined;
    }
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The file's docker config, or undefined when absent or not valid (upstream moves on to the next path). */
function readConfig(path: string, auths: boolean): DockerConfig | undefined {
  const text = readBoundedFile(path);
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    const cfg = auths
      ? ((parsed as { auths?: unknown } | null)?.auths ?? (parsed && typeof parsed === 'object' ? {} : undefined))
      : parsed;
    const problem = dockerConfigProblem(cfg);
    if (problem === undefined) return cfg as DockerConfig;
    log('images').warn({ path, problem }, 'docker config file is not a valid docker config; skipped');
  } catch (err) {
    log('images').warn({ path, err: errorMessage(err) }, 'docker config file is not valid JSON; skipped');
  }
  return undefined;
}

/** upstream ReadDockerConfigFile: config.json first, then the legacy .dockercfg; {} when neither. */
export function readDockerConfigFile(paths: { json: string[]; cfg: string[] }): DockerConfig {
  for (const p of paths.json) {
    const cfg = readConfig(p, true);
    if (cfg) return cfg;
  }
  for (const p of paths.cfg) {
    const cfg = readConfig(p, false);
    if (cfg) return cfg;
  }
  return {};
}

/** The node keyring: the docker config file, read again once the cached copy is 5 minutes old. */
export class NodeDockerConfigKeyring implements DockerKeyring {
  private cached: { keyring: BasicDockerKeyring; at: number } | undefined;

  constructor(
    private readonly paths: { json: string[]; cfg: string[] },
    private readonly clock: Clock = realClock,
  ) {}

  lookup(image: string): Promise<AuthConfig[]> {
    const now = this.clock.now();
    if (!this.cached || now - this.cached.at >= DOCKER_CONFIG_CACHE_MS)
      this.cached = { keyring: new BasicDockerKeyring().add(readDockerConfigFile(this.paths)), at: now };
    return this.cached.keyring.lookup(image);
  }
}
