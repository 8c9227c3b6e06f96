/**
 * Where issued node certificates live (upstream client-go certificate.FileStore): each one as
 * `<pair>-<YYYY-MM-DD-HH-MM-SS>.pem` (certificate, then key; mode 0600) in the cert dir, and
 * `<pair>-current.pem` a symlink to the newest. Kubeconfigs point at the link, so a rotation
 * is one atomic rename of the link, and the old file stays for a rollback by hand.
 */
import { X509Certificate } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { CertificateError, errorMessage } from '../errors.js';

export interface StoredPair {
  certPem: string;
  keyPem: string;
  /** The first (leaf) certificate. */
  leaf: X509Certificate;
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----\n?/g;

/** The PEM blocks of `text` by type: certificates in order, and the one private key. */
export function splitPem(text: string): { certs: string[]; key?: string } {
  const certs: string[] = [];
  let key: string | undefined;
  for (const m of text.matchAll(PEM_BLOCK)) {
    const block = m[0].endsWith('\n') ? m[0] : `${m[0]}\n`;
    if (m[1] === 'CERTIFICATE') certs.push(block);
    else if (m[1]!.endsWith('PRIVATE KEY')) key ??= block;
  }
  return { certs, key };
}

/** "2026-11-25-20-15-03", in UTC as upstream's store names its files. */
function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${p(d.getUTCHours())}-${p(d.getUTCMinutes())}-${p(d.getUTCSeconds())}`;
}

export class CertFileStore {
  constructor(
    readonly certDir: string,
    readonly pairName: string,
  ) {}

  currentPath(): string {
    return join(this.certDir, `${this.pairName}-current.pem`);
  }

  /** The current pair, or undefined when there is none or it cannot be read. */
  current(): StoredPair | undefined {
    try {
      const { certs, key } = splitPem(readFileSync(this.currentPath(), 'utf8'));
      if (!certs[0] || !key) return undefined;
      return { certPem: certs.join(''), keyPem: key, leaf: new X509Certificate(certs[0]) };
    } catch {
      return undefined;
    }
  }

  /** Stores a newly issued pair and makes it current; returns the new file's path. */
  update(certPem: string, keyPem: string, now = new Date()): string {
    const { certs } = splitPem(certPem);
    if (!certs[0]) throw new CertificateError(`the issued ${this.pairName} certificate holds no PEM CERTIFICATE block`);
    try {
      new X509Certificate(certs[0]);
    } catch (err) {
      throw new CertificateError(`the issued ${this.pairName} certificate cannot be parsed: ${errorMessage(err)}`);
    }
    try {
      mkdirSync(this.certDir, { recursive: true, mode: 0o700 });
      let file = join(this.certDir, `${this.pairName}-${stamp(now)}.pem`);
      for (let i = 1; existsSync(file); i++) file = join(this.certDir, `${this.pairName}-${stamp(now)}-${i}.pem`);
      writeFileSync(file, certs.join('') + keyPem, { mode: 0o600 });
      chmodSync(file, 0o600);
      // A relative link, replaced by rename: readers see the old pair or the new one, never none.
      const tmpLink = join(this.certDir, `.${this.pairName}-current.tmp`);
      rmSync(tmpLink, { force: true });
      symlinkSync(basename(file), tmpLink);
      renameSync(tmpLink, this.currentPath());
      return file;
    } catch (err) {
      throw new CertificateError(
        `cannot store the ${this.pairName} certificate in ${this.certDir}: ${errorMessage(err)}`,
      );
    }
  }
}
