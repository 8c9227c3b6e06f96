/**
 * Credential provider exec plugins (upstream pkg/credentialprovider/plugin/plugin.go, plugins.go).
 * For an image one of its matchImages matches (URLsMatchStr), the kubelet runs
 * `<bin-dir>/<name> <args...>` with the provider's env over its own, writes a
 * CredentialProviderRequest {image} to stdin and reads a CredentialProviderResponse from stdout:
 * cacheKeyType (Image, Registry or Global), an optional cacheDuration and auth {key: {username,
 * password}}. The response is cached under the image, its registry host or one global key, for
 * cacheDuration (0 = not cached) or, when absent, the provider's defaultCacheDuration; a lookup
 * tries image, registry, global in that order. Concurrent lookups of one image share one exec
 * (upstream's singleflight). A plugin that fails, times out (1 minute) or answers badly gives no
 * credentials and an error log line; the pull then goes on without them, as upstream's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthConfig } from '../../cri/types.js';
import { ConfigError, errorMessage, kubeletErrorClass } from '../../errors.js';
import { parseDuration } from '../../util/duration.js';
import { realClock, type Clock } from '../../util/clock.js';
import { log } from '../../util/log.js';
import {
  BasicDockerKeyring,
  dockerConfigProblem,
  urlsMatchStr,
  type DockerConfig,
  type DockerKeyring,
} from '../keyring.js';
import { credentialProviderConfigHash, readCredentialProviderConfig, type CredentialProvider } from './config.js';
import { metrics } from '../../metrics/index.js';

/** A plugin that failed or answered badly (logged; the pull goes on without its credentials). */
export class CredentialProviderError extends kubeletErrorClass('KTS_ERR_IMAGE_PULL') {}

/** upstream's catch-all exec timeout. */
export const PLUGIN_TIMEOUT_MS = 60_000;
/** upstream cachePurgeInterval: expired entries never looked up again are dropped this often. */
const CACHE_PURGE_MS = 15 * 60_000;
const GLOBAL_CACHE_KEY = 'global';
/** A plugin's stdout beyond this is an error, not memory to fill. */
const MAX_OUTPUT = 1 << 20;

export interface CredentialProviderResponse {
  cacheKeyType: 'Image' | 'Registry' | 'Global';
  /** undefined: the provider's defaultCacheDuration. */
  cacheDurationMs?: number | undefined;
  auth: DockerConfig;
}

/** Runs a plugin once for an image (upstream Plugin; tests give a fake). */
export type ExecPlugin = (image: string) => Promise<CredentialProviderResponse>;

/** upstream parseRegistry: the image's first path segment, port included. */
const registryOf = (image: string) => image.split('/')[0]!;

/** The response's JSON → checked fields (upstream decodes strictly and checks the apiVersion). */
export function decodeResponse(stdout: string, apiVersion: string): CredentialProviderResponse {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    // Not wrapped: the text may hold credentials.
    throw new CredentialProviderError('error decoding credential provider plugin response from stdout');
  }
  if (o?.apiVersion !== apiVersion)
    throw new CredentialProviderError(
      `apiVersion from credential plugin response did not match expected apiVersion:${apiVersion}, actual apiVersion:${String(o?.apiVersion)}`,
    );
  if (o.kind !== 'CredentialProviderResponse')
    throw new CredentialProviderError(`unexpected Kind: ${JSON.stringify(o.kind)}`);
  const type = o.cacheKeyType;
  if (type !== 'Image' && type !== 'Registry' && type !== 'Global')
    throw new CredentialProviderError(
      `credential provider plugin did not return a valid cacheKeyType: ${JSON.stringify(type)}`,
    );
  const cacheDurationMs = o.cacheDuration === undefined ? undefined : parseDuration(String(o.cacheDuration));
  if (o.cacheDuration !== undefined && cacheDurationMs === undefined)
    throw new CredentialProviderError(`invalid cacheDuration ${JSON.stringify(o.cacheDuration)}`);
  const auth = (o.auth ?? {}) as DockerConfig;
  if (typeof auth !== 'object' || Array.isArray(auth)) throw new CredentialProviderError('auth must be a map');
  const problem = dockerConfigProblem(auth);
  if (problem) throw new CredentialProviderError(`invalid auth in the response: ${problem}`);
  return { cacheKeyType: type, cacheDurationMs, auth };
}

/** Kills the plugin and everything it started (its own process group), so no descendant keeps a pipe open. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // the group is gone already
  }
}

/**
 * upstream execPlugin.ExecPlugin: the request on stdin, the response on stdout, 1 minute at most.
 * A plugin over the time or output bound is killed with its process group and fails at once:
 * a descendant holding stdout open cannot hold the pull.
 */
export function execPlugin(binDir: string, provider: CredentialProvider, timeoutMs = PLUGIN_TIMEOUT_MS): ExecPlugin {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { name, value } of provider.env) env[name] = value;
  const run = (image: string) =>
    new Promise<CredentialProviderResponse>((resolve, reject) => {
      const child = spawn(join(binDir, provider.name), provider.args, {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      let stdout = '';
      let stderr = '';
      let done = false;
      const fail = (why: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        killGroup(child);
        child.stdout.destroy();
        child.stderr.destroy();
        reject(
          new CredentialProviderError(
            `error execing credential provider plugin ${provider.name} for image ${image}: ${why}`,
          ),
        );
      };
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs}ms`), timeoutMs);
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString('utf8');
        if (stdout.length > MAX_OUTPUT) fail(`its output exceeded ${MAX_OUTPUT} bytes`);
      });
      child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4096)));
      child.on('error', (err) => fail(errorMessage(err)));
      child.on('close', (code, signal) => {
        if (done) return;
        if (code !== 0) return fail(`${signal ? `killed by ${signal}` : `exit status ${code}`}: ${stderr.trim()}`);
        done = true;
        clearTimeout(timer);
        try {
          resolve(decodeResponse(stdout, provider.apiVersion));
        } catch (err) {
          reject(err);
        }
      });
      child.stdin.on('error', () => undefined); // a plugin that exits without reading stdin
      child.stdin.end(JSON.stringify({ apiVersion: provider.apiVersion, kind: 'CredentialProviderRequest', image }));
    });
  return instrumented(provider.name, run);
}

/** upstream ExecPlugin's metrics: every run's duration, and each failed run, by plugin name. */
function instrumented(name: string, run: ExecPlugin): ExecPlugin {
  return async (image) => {
    const end = metrics.credentialProviderPluginDuration.startTimer({ plugin_name: name });
    try {
      return await run(image);
    } catch (err) {
      metrics.credentialProviderPluginErrors.inc({ plugin_name: name });
      throw err;
    } finally {
      end();
    }
  };
}

interface CacheEntry {
  credentials: DockerConfig;
  expiresAt: number;
}

/** upstream pluginProvider: matchImages, the response cache and the exec. */
export class PluginProvider {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CredentialProviderResponse>>();
  private lastPurge: number;

  constructor(
    readonly provider: CredentialProvider,
    private readonly exec: ExecPlugin,
    private readonly clock: Clock = realClock,
  ) {
    this.lastPurge = clock.now();
  }

  /** upstream isImageAllowed. */
  isImageAllowed(image: string): boolean {
    return this.provider.matchImages.some((m) => urlsMatchStr(m, image));
  }

  /** upstream provide: the cached or freshly fetched docker config for `image` ({} on any failure). */
  async provide(image: string): Promise<DockerConfig> {
    if (!this.isImageAllowed(image)) return {};
    const cached = this.cached(image);
    if (cached) return cached;
    let response: CredentialProviderResponse;
    try {
      response = await this.execOnce(image);
    } catch (err) {
      log('images').error(
        { provider: this.provider.name, image, err: errorMessage(err) },
        'Failed getting credential from external registry credential provider',
      );
      return {};
    }
    this.store(image, response);
    return response.auth;
  }

  private execOnce(image: string): Promise<CredentialProviderResponse> {
    let p = this.inflight.get(image);
    if (!p) {
      p = this.exec(image).finally(() => this.inflight.delete(image));
      this.inflight.set(image, p);
    }
    return p;
  }

  private cached(image: string): DockerConfig | undefined {
    const now = this.clock.now();
    if (now - this.lastPurge >= CACHE_PURGE_MS) {
      for (const [k, e] of this.cache) if (now > e.expiresAt) this.cache.delete(k);
      this.lastPurge = now;
    }
    for (const key of [image, registryOf(image), GLOBAL_CACHE_KEY]) {
      const e = this.cache.get(key);
      if (e && now <= e.expiresAt) return e.credentials;
      if (e) this.cache.delete(key);
    }
    return undefined;
  }

  private store(image: string, r: CredentialProviderResponse): void {
    const ttl = r.cacheDurationMs ?? this.provider.defaultCacheDurationMs;
    if (ttl === 0) return; // explicitly 0, or absent with a default of 0: not cached
    const key =
      r.cacheKeyType === 'Image' ? image : r.cacheKeyType === 'Registry' ? registryOf(image) : GLOBAL_CACHE_KEY;
    this.cache.set(key, { credentials: r.auth, expiresAt: this.clock.now() + ttl });
  }
}

/** upstream externalCredentialProviderKeyring: every provider's config for the image, in one keyring. */
export class ExternalCredentialProviderKeyring implements DockerKeyring {
  constructor(private readonly providers: readonly PluginProvider[]) {}

  async lookup(image: string): Promise<AuthConfig[]> {
    const keyring = new BasicDockerKeyring();
    for (const p of this.providers) keyring.add(await p.provide(image));
    return keyring.lookupSync(image);
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * upstream RegisterCredentialProviderPlugins, at start-up: the bin dir must exist, the config be
 * valid and every provider's executable be in the bin dir; else a ConfigError saying which.
 */
export function registerCredentialProviderPlugins(configPath: string, binDir: string | undefined): PluginProvider[] {
  if (!binDir)
    throw new ConfigError(['--image-credential-provider-bin-dir is required with --image-credential-provider-config']);
  try {
    if (!statSync(binDir).isDirectory()) throw new ConfigError(['not a directory']);
  } catch (err) {
    throw new ConfigError([
      `--image-credential-provider-bin-dir: plugin binary directory ${binDir} did not exist (${errorMessage(err)})`,
    ]);
  }
  const providers = readCredentialProviderConfig(configPath);
  const missing = providers
    .map((p) => join(binDir, p.name))
    .filter((bin) => !isExecutable(bin))
    .map(
      (bin) =>
        `--image-credential-provider-bin-dir: plugin binary executable ${bin} did not exist or is not executable`,
    );
  if (missing.length > 0) throw new ConfigError(missing);
  metrics.credentialProviderConfigInfo.reset();
  metrics.credentialProviderConfigInfo.set({ hash: credentialProviderConfigHash(configPath) }, 1);
  return providers.map((p) => new PluginProvider(p, execPlugin(binDir, p)));
}
