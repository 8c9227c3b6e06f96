/**
 * Keys and certificate signing requests for the node's certificates (upstream keyutil and
 * certutil.MakeCSR). Keys are ECDSA P-256, as upstream's LoadOrGenerateKeyFile makes them, in
 * SEC1 PEM ("EC PRIVATE KEY"). node:crypto makes keys but cannot write a PKCS#10 request, so the
 * request is made by the `openssl` CLI (as the self-signed serving certificate is, see
 * src/server/tls.ts) from a key file in a private temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateError, errorMessage } from '../errors.js';

export interface CsrSubject {
  commonName: string;
  organizations: string[];
}

export interface CsrAltNames {
  dnsNames: string[];
  ips: string[];
}

export function generateKeyPem(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'sec1', format: 'pem' }) as string;
}

/** Whether `pem` holds a private key node:crypto can use (upstream verifyKeyData). */
export function isValidKeyPem(pem: string | undefined): pem is string {
  if (!pem) return false;
  try {
    createPrivateKey(pem);
    return true;
  } catch {
    return false;
  }
}

/** The key's type, for the usages upstream asks for (key encipherment only for RSA keys). */
export function keyType(keyPem: string): string {
  return createPrivateKey(keyPem).asymmetricKeyType ?? 'unknown';
}

/** A DN component for openssl -subj: `/` and `\` escaped. */
const dn = (v: string) => v.replace(/[\\/]/g, (c) => `\\${c}`);

/** A PEM PKCS#10 request for `subject` (and SANs) signed with `keyPem`. */
export function makeCsrPem(keyPem: string, subject: CsrSubject, alt?: CsrAltNames): string {
  const dir = mkdtempSync(join(tmpdir(), 'kts-csr-'));
  try {
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, keyPem, { mode: 0o600 });
    const subj = [...subject.organizations.map((o) => `/O=${dn(o)}`), `/CN=${dn(subject.commonName)}`].join('');
    const args = ['req', '-new', '-key', keyFile, '-subj', subj, '-sha256'];
    const sans = alt ? [...alt.dnsNames.map((d) => `DNS:${d}`), ...alt.ips.map((ip) => `IP:${ip}`)] : [];
    if (sans.length > 0) args.push('-addext', `subjectAltName=${sans.join(',')}`);
    return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new CertificateError(`cannot make a certificate signing request with openssl: ${errorMessage(err)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * upstream digestedName: a CSR name fixed by the key, subject and usages, so a restarted
 * kubelet finds its own pending request instead of filing another.
 */
export function digestedCsrName(prefix: string, keyPem: string, subject: CsrSubject, usages: string[]): string {
  const hash = createHash('sha512-256');
  const write = (data: string | Buffer) => {
    hash.update(Buffer.from(data).toString('base64url'));
    hash.update('|');
  };
  write(keyPem);
  write(subject.commonName);
  for (const o of subject.organizations) write(o);
  for (const u of usages) write(u);
  return `${prefix}${hash.digest('base64url')}`;
}
