/**
 * TLS material of the main port. Given tlsCertFile/tlsPrivateKeyFile they are used as they
 * are; otherwise, as upstream, a self-signed serving pair is generated once under
 * <rootDir>/pki (kubelet.crt, kubelet.key) and reused on later starts. Generation uses the
 * `openssl` CLI: node:crypto makes keys but cannot issue X.509 certificates, and a library for
 * that would be a new dependency for a one-time step.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import { CIPHER_SUITES, TLS_VERSIONS } from '../config/auth-defaults.js';
import { ConfigError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';

export interface ServingCertOptions {
  certFile: string;
  keyFile: string;
  rootDir: string;
  nodeName: string;
  /** Extra IP SANs of the self-signed certificate (the node IP). */
  ips?: string[];
}

function readPair(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  try {
    return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  } catch (err) {
    throw new ConfigError([`tlsCertFile/tlsPrivateKeyFile: ${errorMessage(err)}`]);
  }
}

/** The serving pair: configured files, else <rootDir>/pki/kubelet.{crt,key}, generated when absent. */
export function servingCert(o: ServingCertOptions): { cert: Buffer; key: Buffer; certFile: string } {
  if (o.certFile || o.keyFile) {
    if (!o.certFile || !o.keyFile) throw new ConfigError(['tlsCertFile and tlsPrivateKeyFile must be given together']);
    return { ...readPair(o.certFile, o.keyFile), certFile: o.certFile };
  }
  const dir = join(o.rootDir, 'pki');
  const certFile = join(dir, 'kubelet.crt');
  const keyFile = join(dir, 'kubelet.key');
  if (!existsSync(certFile) || !existsSync(keyFile))
    generateSelfSigned({ dir, certFile, keyFile }, o.nodeName, o.ips ?? []);
  return { ...readPair(certFile, keyFile), certFile };
}

/** Writes a self-signed pair for `nodeName` and `ips` to `files` (in `files.dir`, created 0700). */
function generateSelfSigned(
  { dir, certFile, keyFile }: { dir: string; certFile: string; keyFile: string },
  nodeName: string,
  ips: string[],
): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const sans = [`DNS:${nodeName}`, 'DNS:localhost', 'IP:127.0.0.1', ...ips.map((ip) => `IP:${ip}`)];
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-sha256',
        '-days',
        '365',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-subj',
        `/CN=${nodeName}@${Math.floor(Date.now() / 1000)}`,
        '-addext',
        `subjectAltName=${[...new Set(sans)].join(',')}`,
        '-addext',
        'extendedKeyUsage=serverAuth',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 },
    );
    chmodSync(keyFile, 0o600);
  } catch (err) {
    throw new ConfigError([
      `cannot generate a self-signed serving certificate in ${dir} with openssl: ${errorMessage(err)}`,
    ]);
  }
  log('server').info({ certFile }, 'Generated a self-signed serving certificate');
}

/** TLS 1.3 suites are always on (as Go, where they are not configurable). */
const TLS13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

export function cipherList(suites: readonly string[]): string | undefined {
  if (suites.length === 0) return undefined;
  const names = suites.map((s) => CIPHER_SUITES[s]!).filter(Boolean);
  return [...new Set([...names, ...TLS13])].join(':');
}

export interface TlsSettings {
  minVersion: string;
  cipherSuites: readonly string[];
  clientCAFile: string;
}

/** Server options: client certificates are requested but checked by the authenticator, so a
 * request without one can still be anonymous or carry a bearer token. */
export function serverTlsOptions(
  pair: { cert: Buffer; key: Buffer },
  s: TlsSettings,
): TlsOptions & SecureContextOptions {
  const opts: TlsOptions = { cert: pair.cert, key: pair.key, handshakeTimeout: 10_000 };
  if (s.minVersion) opts.minVersion = TLS_VERSIONS[s.minVersion];
  const ciphers = cipherList(s.cipherSuites);
  if (ciphers) opts.ciphers = ciphers;
  if (s.clientCAFile) {
    try {
      opts.ca = readFileSync(s.clientCAFile);
    } catch (err) {
      throw new ConfigError([`authentication.x509.clientCAFile: ${errorMessage(err)}`]);
    }
    opts.requestCert = true;
    opts.rejectUnauthorized = false;
  }
  return opts;
}
