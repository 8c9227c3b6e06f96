/**
 * Test PKI made with the openssl CLI: a CA, and certificates it signs for clients (CN = user,
 * O = groups) or servers (SAN 127.0.0.1/localhost). Everything lives in one temp directory.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { testTempDir } from './temp-dir.js';

export interface CertFiles {
  cert: string;
  key: string;
}
export interface TestCA extends CertFiles {
  dir: string;
  name: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function makeCA(name: string, dir = testTempDir('kts-pki-')): TestCA {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    key,
    '-out',
    cert,
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { dir, name, cert, key };
}

/** A certificate signed by `ca`: client (CN user, O groups) or server (localhost SANs). */
export function issue(ca: TestCA, name: string, opts: { cn: string; groups?: string[]; server?: boolean }): CertFiles {
  const key = join(ca.dir, `${name}.key`);
  const csr = join(ca.dir, `${name}.csr`);
  const cert = join(ca.dir, `${name}.crt`);
  const ext = join(ca.dir, `${name}.ext`);
  const subj = `/CN=${opts.cn}${(opts.groups ?? []).map((g) => `/O=${g}`).join('')}`;
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    subj,
  ]);
  writeFileSync(
    ext,
    opts.server
      ? 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n'
      : 'extendedKeyUsage=clientAuth\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    cert,
    '-extfile',
    ext,
  ]);
  return { cert, key };
}

/** The serial (upper-case hex) of the agent's `<pkiDir>/<name>-current.pem`, or undefined while there is none. */
export function currentCertSerial(pkiDir: string, name: 'kubelet-client' | 'kubelet-server'): string | undefined {
  try {
    return new X509Certificate(readFileSync(join(pkiDir, `${name}-current.pem`), 'utf8')).serialNumber.toUpperCase();
  } catch {
    return undefined;
  }
}

/** The certificate a TLS port on 127.0.0.1 presents now. */
export function servedCertificate(port: number): Promise<{ serial: string; san: string }> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const c = s.getPeerCertificate();
      s.destroy();
      resolve({ serial: c.serialNumber.toUpperCase(), san: c.subjectaltname ?? '' });
    });
    s.on('error', reject);
  });
}
