/**
 * TLS bootstrap (upstream pkg/kubelet/certificate/bootstrap LoadClientCert). With
 * --bootstrap-kubeconfig, before anything talks to the apiserver:
 *
 *  1. if --kubeconfig exists and its client certificate is valid now, use it as it is;
 *  2. else take a key: the current pair's in the cert dir, else `kubelet-client.key.tmp` (made
 *     once and kept, so a restart during the wait asks again with the same key and finds its
 *     own CSR by its digested name);
 *  3. with the bootstrap credentials, file a CSR for `CN=system:node:<node>, O=system:nodes`,
 *     signer kubernetes.io/kube-apiserver-client-kubelet, and wait (1 h) for the certificate;
 *  4. store it as `kubelet-client-<time>.pem` + the `kubelet-client-current.pem` link (0600),
 *     drop the temporary key, and write --kubeconfig pointing at the link.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadKubeconfig } from '../apiclient/kubeconfig.js';
import type { ApiClients } from '../apiclient/types.js';
import { CertificateError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { requestCertificate, waitForCertificate } from './csr-client.js';
import { CertFileStore, splitPem } from './file-store.js';
import { digestedCsrName, generateKeyPem, isValidKeyPem, keyType, makeCsrPem, type CsrSubject } from './keys.js';

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const TMP_PRIVATE_KEY_FILE = 'kubelet-client.key.tmp';
/** upstream requestNodeCertificate's wait. */
export const BOOTSTRAP_WAIT_MS = 3600_000;

export interface BootstrapOptions {
  kubeconfigPath: string;
  bootstrapKubeconfigPath: string;
  certDir: string;
  nodeName: string;
  /** API clients from a kubeconfig (createApiClients). */
  connect: (kubeconfigPath: string) => Promise<ApiClients>;
  waitMs?: number;
  now?: () => Date;
}

interface BootstrapCluster {
  dir: string;
  /** The current context's cluster stanza as written (file paths kept, not read: the new kubeconfig points at the same CA file). */
  cluster: Record<string, unknown>;
}

/**
 * The bootstrap kubeconfig: checked by the API client's loader (so its errors are the same),
 * and its cluster stanza taken as written for the kubeconfig that bootstrap writes.
 */
function readBootstrapCluster(path: string): BootstrapCluster {
  loadKubeconfig(path);
  const doc = parseYaml(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const named = (list: unknown, name: unknown, what: string) =>
    ((list as { name?: unknown }[]).find((x) => x?.name === name) as Record<string, unknown>)[what] as Record<
      string,
      unknown
    >;
  const ctx = named(doc.contexts, doc['current-context'], 'context');
  return { dir: dirname(resolve(path)), cluster: named(doc.clusters, ctx.cluster, 'cluster') };
}

const inDir = (dir: string, p: string) => (isAbsolute(p) ? p : join(dir, p));

/** upstream isClientConfigStillValid: a kubeconfig whose client certificates all are valid now. */
export function isClientConfigStillValid(kubeconfigPath: string, now = new Date()): boolean {
  if (!existsSync(kubeconfigPath)) return false;
  try {
    const certs = splitPem(loadKubeconfig(kubeconfigPath).user.cert?.toString('utf8') ?? '').certs.map(
      (c) => new X509Certificate(c),
    );
    if (certs.length === 0) return false;
    const expired = certs.find((c) => new Date(c.validTo) < now);
    if (expired)
      log('certificate').info(
        { kubeconfig: kubeconfigPath, notAfter: expired.validTo },
        'Part of the existing client certificate is expired; bootstrapping a new one',
      );
    return !expired;
  } catch (err) {
    log('certificate').warn(
      { kubeconfig: kubeconfigPath, err: errorMessage(err) },
      'Unable to read the existing client config; bootstrapping a new one',
    );
    return false;
  }
}

/** The usages upstream asks for a node certificate: key encipherment only with an RSA key. */
export function nodeCertUsages(keyPem: string, auth: 'client auth' | 'server auth'): string[] {
  return keyType(keyPem) === 'rsa' ? ['digital signature', 'key encipherment', auth] : ['digital signature', auth];
}

export const clientUsages = (keyPem: string): string[] => nodeCertUsages(keyPem, 'client auth');

/** The key to ask with: the current pair's, else the kept temporary one, else a new one (kept). */
function bootstrapKey(store: CertFileStore, tmpKeyPath: string): string {
  const current = store.current()?.keyPem;
  if (isValidKeyPem(current)) return current;
  const kept = existsSync(tmpKeyPath) ? readFileSync(tmpKeyPath, 'utf8') : undefined;
  if (isValidKeyPem(kept)) return kept;
  const key = generateKeyPem();
  writeFileSync(tmpKeyPath, key, { mode: 0o600 });
  return key;
}

/** upstream writeKubeconfigFromBootstrapping: the bootstrap cluster, the cert dir's current pair. */
function writeKubeconfig(path: string, bootstrap: BootstrapCluster, pemPath: string): void {
  const c = bootstrap.cluster;
  const cluster: Record<string, unknown> = { server: c.server };
  if (typeof c['certificate-authority'] === 'string')
    cluster['certificate-authority'] = inDir(bootstrap.dir, c['certificate-authority']);
  else if (c['certificate-authority-data']) cluster['certificate-authority-data'] = c['certificate-authority-data'];
  if (c['insecure-skip-tls-verify']) cluster['insecure-skip-tls-verify'] = true;
  if (c['tls-server-name']) cluster['tls-server-name'] = c['tls-server-name'];
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: 'default-cluster', cluster }],
    users: [{ name: 'default-auth', user: { 'client-certificate': pemPath, 'client-key': pemPath } }],
    contexts: [
      { name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } },
    ],
    'current-context': 'default-context',
  };
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

/** Returns 'valid' when --kubeconfig was usable as it was, 'bootstrapped' after a new certificate. */
export async function loadClientCert(o: BootstrapOptions): Promise<'valid' | 'bootstrapped'> {
  if (isClientConfigStillValid(o.kubeconfigPath, o.now?.())) {
    log('certificate').info({ kubeconfig: o.kubeconfigPath }, 'Kubeconfig exists and is valid, skipping bootstrap');
    return 'valid';
  }
  let bootstrap: BootstrapCluster;
  try {
    bootstrap = readBootstrapCluster(o.bootstrapKubeconfigPath);
  } catch (err) {
    throw new CertificateError(
      `unable to load bootstrap kubeconfig ${o.bootstrapKubeconfigPath}: ${errorMessage(err)}`,
    );
  }
  mkdirSync(o.certDir, { recursive: true, mode: 0o700 });
  const store = new CertFileStore(o.certDir, 'kubelet-client');
  const tmpKeyPath = join(o.certDir, TMP_PRIVATE_KEY_FILE);
  const keyPem = bootstrapKey(store, tmpKeyPath);
  const subject: CsrSubject = { commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] };
  const usages = clientUsages(keyPem);
  const name = digestedCsrName('node-csr-', keyPem, subject, usages);
  log('certificate').info(
    { csr: name, signer: CLIENT_SIGNER },
    'Requesting a client certificate with the bootstrap credentials',
  );
  const clients = await o.connect(o.bootstrapKubeconfigPath);
  let certPem: string;
  try {
    const csr = await requestCertificate(
      clients.main,
      { name, csrPem: makeCsrPem(keyPem, subject), signerName: CLIENT_SIGNER, usages },
      o.now?.(),
    );
    certPem = await waitForCertificate(clients.main, csr.metadata?.name ?? name, o.waitMs ?? BOOTSTRAP_WAIT_MS);
  } finally {
    clients.close();
  }
  const file = store.update(certPem, keyPem, o.now?.());
  rmSync(tmpKeyPath, { force: true });
  writeKubeconfig(o.kubeconfigPath, bootstrap, store.currentPath());
  log('certificate').info(
    { certificate: file, kubeconfig: o.kubeconfigPath },
    'Client certificate issued; kubeconfig written',
  );
  return 'bootstrapped';
}
