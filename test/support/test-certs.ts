/**
 * A throw-away CA and a serving certificate for 127.0.0.1/localhost, made with the openssl CLI
 * in a temp dir, plus a kubeconfig that trusts the CA and authenticates with a bearer token.
 * The test apiserver serves TLS, as a real one does.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from './temp-dir.js';

export interface TestCerts {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  ca: string;
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeTestCerts(dir = testTempDir('kts-apiserver-pki-')): TestCerts {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=kubelet-ts-test-ca',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=kube-apiserver',
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    ],
    dir,
  );
  const caFile = join(dir, 'ca.crt');
  const certFile = join(dir, 'server.crt');
  const keyFile = join(dir, 'server.key');
  return {
    dir,
    caFile,
    certFile,
    keyFile,
    ca: readFileSync(caFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
  };
}

/** A kubeconfig (YAML is a superset of JSON) for `server` with CA `caFile` and bearer `token`. */
export function writeKubeconfig(path: string, server: string, caFile: string, token: string): string {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'test',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: 'kubelet', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'kubelet' } }],
  };
  writeFileSync(path, JSON.stringify(doc, null, 2));
  return path;
}
