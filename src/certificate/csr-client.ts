/**
 * Asking the apiserver for a certificate (upstream client-go util/certificate/csr):
 * RequestCertificate files a certificates.k8s.io/v1 CertificateSigningRequest (or finds its own
 * earlier one by name), and WaitForCertificate watches it until it is approved and issued,
 * denied, failed, or the wait runs out.
 */
import { X509Certificate } from 'node:crypto';
import type { ApiClient } from '../apiclient/types.js';
import { ApiError, CertificateError, errorMessage } from '../errors.js';

export const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export interface CsrCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

export interface CertificateSigningRequest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { request?: string; signerName?: string; usages?: string[]; expirationSeconds?: number; username?: string };
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

export interface CertificateRequest {
  name: string;
  csrPem: string;
  signerName: string;
  usages: string[];
}

/**
 * Files the request and returns the CSR to wait for. The name is digested from the key, subject
 * and usages, so an existing CSR of that name is our own earlier request (a restart during the
 * wait): it is reused, unless it already holds a certificate that has expired (an old request
 * for the same key), in which case a new one is filed under a suffixed name.
 */
export async function requestCertificate(
  client: ApiClient,
  r: CertificateRequest,
  now = new Date(),
): Promise<CertificateSigningRequest> {
  const body = (name: string): CertificateSigningRequest => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(r.csrPem).toString('base64'), signerName: r.signerName, usages: r.usages },
  });
  const create = async (name: string) => {
    try {
      return await client.request<CertificateSigningRequest>({ method: 'POST', path: CSR_PATH, body: body(name) });
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 409) return undefined;
      throw new CertificateError(`cannot create certificate signing request ${name}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  };
  const created = await create(r.name);
  if (created) return created;
  const existing = await client.request<CertificateSigningRequest>({ method: 'GET', path: `${CSR_PATH}/${r.name}` });
  if (existing.spec?.signerName !== r.signerName) {
    throw new CertificateError(
      `certificate signing request ${r.name} already exists for signer ${existing.spec?.signerName ?? '(none)'}; delete it to retry`,
    );
  }
  if (!hasExpiredCertificate(existing, now)) return existing;
  const fresh = `${r.name}-${now.getTime().toString(36)}`;
  return (
    (await create(fresh)) ?? client.request<CertificateSigningRequest>({ method: 'GET', path: `${CSR_PATH}/${fresh}` })
  );
}

function hasExpiredCertificate(csr: CertificateSigningRequest, now: Date): boolean {
  if (!csr.status?.certificate) return false;
  try {
    const pem = Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    return new Date(new X509Certificate(pem).validTo) <= now;
  } catch {
    return true; // unreadable: not worth waiting for
  }
}

/** The issued PEM, an error for a denied or failed request, or undefined while it is pending. */
export function issuedCertificate(csr: CertificateSigningRequest): string | undefined {
  const name = csr.metadata?.name ?? '';
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === 'Denied' && c.status !== 'False')
      throw new CertificateError(
        `certificate signing request ${name} is denied, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`,
      );
    if (c.type === 'Failed' && c.status !== 'False')
      throw new CertificateError(
        `certificate signing request ${name} failed, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`,
      );
  }
  const approved = (csr.status?.conditions ?? []).some((c) => c.type === 'Approved' && c.status !== 'False');
  if (!approved || !csr.status?.certificate) return undefined;
  return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
}

/**
 * Waits for the request's certificate: a GET, then a watch of just that object, re-opened when
 * the server ends it, until issued, denied, failed or `timeoutMs` (upstream: 1 h at bootstrap).
 */
export async function waitForCertificate(
  client: ApiClient,
  name: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(stop, timeoutMs);
  let result: { cert?: string; err?: unknown } | undefined;
  const check = (csr: CertificateSigningRequest) => {
    try {
      const cert = issuedCertificate(csr);
      if (cert) result = { cert };
    } catch (err) {
      result = { err };
    }
    if (result) abort.abort();
  };
  try {
    while (!result && !abort.signal.aborted) {
      try {
        const csr = await client.request<CertificateSigningRequest & { metadata?: { resourceVersion?: string } }>({
          method: 'GET',
          path: `${CSR_PATH}/${name}`,
        });
        check(csr);
        if (result) break;
        await client.watch<CertificateSigningRequest>(
          CSR_PATH,
          {
            fieldSelector: `metadata.name=${name}`,
            resourceVersion: csr.metadata?.resourceVersion,
            allowWatchBookmarks: true,
          },
          (e) => {
            if (e.type === 'ADDED' || e.type === 'MODIFIED') check(e.object);
            if (e.type === 'DELETED')
              result = {
                err: new CertificateError(`certificate signing request ${name} was deleted before it was issued`),
              };
          },
          abort.signal,
        );
      } catch (err) {
        if (abort.signal.aborted) break;
        if (err instanceof ApiError && err.statusCode === 404)
          throw new CertificateError(`certificate signing request ${name} is gone`);
        await new Promise((r) => setTimeout(r, 1000)); // the apiserver is away: try again within the wait
      }
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
  }
  if (result?.err) throw result.err;
  if (result?.cert) return result.cert;
  throw new CertificateError(
    `timed out waiting ${Math.round(timeoutMs / 1000)} s for certificate signing request ${name} to be approved and issued`,
  );
}
