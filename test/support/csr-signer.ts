/**
 * The kube-controller-manager side of CSRs for the test apiserver: csrapprover auto-approves a
 * node's client CSRs filed by a bootstrap token user or by the node itself (signer
 * kubernetes.io/kube-apiserver-client-kubelet, CN system:node:<name>, O system:nodes, usages
 * within digital signature / key encipherment / client auth), and csrsigning signs approved
 * ones with the test CA, for a short lifetime when the test asks (to observe rotation).
 * Serving CSRs (kubernetes.io/kubelet-serving) are approved only when the test says so, as
 * upstream leaves them to a cluster's own approver. Signing uses `openssl ca` (node:crypto cannot
 * issue certificates); the SANs of the request are copied for serving certificates.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiStore, Change, Obj } from './apiserver-store.js';
import type { TestCerts } from './test-certs.js';

const CSRS = 'certificatesigningrequests';
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

export interface CsrSignerOptions {
  /** Lifetime of issued certificates (default 1 h). */
  lifetimeSeconds?: number;
  /** Approve kubelet-serving CSRs on their own (default false: call approve()). */
  approveServing?: boolean;
  /** Auto-approve node client CSRs (default true). */
  approveClient?: boolean;
}

const gt = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z'); // YYYYMMDDHHMMSSZ

export class CsrSigner {
  readonly dir: string;
  private readonly unsubscribe: () => void;
  /** Names of CSRs signed, in order. */
  readonly signed: string[] = [];

  constructor(
    private readonly store: ApiStore,
    private readonly certs: TestCerts,
    readonly opts: CsrSignerOptions = {},
  ) {
    this.dir = mkdtempSync(join(certs.dir, 'signer-'));
    writeFileSync(join(this.dir, 'index.txt'), '');
    writeFileSync(join(this.dir, 'serial'), '1000\n');
    writeFileSync(
      join(this.dir, 'ca.cnf'),
      [
        '[ ca ]',
        'default_ca = tca',
        '[ tca ]',
        `database = ${join(this.dir, 'index.txt')}`,
        `new_certs_dir = ${this.dir}`,
        `serial = ${join(this.dir, 'serial')}`,
        'default_md = sha256',
        'policy = any',
        'unique_subject = no',
        'copy_extensions = copy',
        '[ any ]',
        'commonName = supplied',
        'organizationName = optional',
        '[ client ]',
        'basicConstraints = CA:FALSE',
        'keyUsage = critical, digitalSignature, keyEncipherment',
        'extendedKeyUsage = clientAuth',
        '[ serving ]',
        'basicConstraints = CA:FALSE',
        'keyUsage = critical, digitalSignature, keyEncipherment',
        'extendedKeyUsage = serverAuth',
        '',
      ].join('\n'),
    );
    this.unsubscribe = store.subscribe((c) => this.onChange(c));
  }

  close(): void {
    this.unsubscribe();
  }

  /** What `kubectl certificate approve` does. */
  approve(name: string): void {
    this.setCondition(name, {
      type: 'Approved',
      status: 'True',
      reason: 'KubectlApprove',
      message: 'This CSR was approved by the test',
    });
  }

  /** What `kubectl certificate deny` does. */
  deny(name: string): void {
    this.setCondition(name, {
      type: 'Denied',
      status: 'True',
      reason: 'KubectlDeny',
      message: 'This CSR was denied by the test',
    });
  }

  /** A signer's failure (e.g. an unsupported signer). */
  fail(name: string): void {
    this.setCondition(name, {
      type: 'Failed',
      status: 'True',
      reason: 'SignerValidationFailure',
      message: 'the test signer refused it',
    });
  }

  private setCondition(name: string, cond: Record<string, string>): void {
    const csr = this.store.get(CSRS, undefined, name);
    if (!csr) throw new Error(`no CSR ${name}`);
    const status = (csr.status ?? {}) as Obj;
    status.conditions = [
      ...((status.conditions as Obj[] | undefined) ?? []),
      { ...cond, lastUpdateTime: new Date().toISOString() },
    ];
    csr.status = status;
    this.store.put(CSRS, csr, 'MODIFIED');
  }

  private onChange(c: Change): void {
    if (c.plural !== CSRS || c.type === 'DELETED') return;
    const csr = c.object;
    const spec = (csr.spec ?? {}) as { signerName?: string; username?: string; usages?: string[]; request?: string };
    const status = (csr.status ?? {}) as { conditions?: { type: string }[]; certificate?: string };
    const has = (t: string) => (status.conditions ?? []).some((x) => x.type === t);
    const name = String(csr.metadata?.name);
    if (has('Denied') || has('Failed') || status.certificate) return;
    if (!has('Approved')) {
      if (spec.signerName === CLIENT_SIGNER && this.opts.approveClient !== false && this.isNodeClientRequest(spec)) {
        // queueMicrotask: not inside the store's own notification of this change.
        queueMicrotask(() =>
          this.setCondition(name, {
            type: 'Approved',
            status: 'True',
            reason: 'AutoApproved',
            message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
          }),
        );
      } else if (spec.signerName === SERVING_SIGNER && this.opts.approveServing) {
        queueMicrotask(() => this.approve(name));
      }
      return;
    }
    queueMicrotask(() => this.sign(name, spec));
  }

  private isNodeClientRequest(spec: { username?: string; usages?: string[] }): boolean {
    const allowed = new Set(['digital signature', 'key encipherment', 'client auth']);
    const byBootstrap = spec.username?.startsWith('system:bootstrap:') ?? false;
    const byNode = spec.username?.startsWith('system:node:') ?? false;
    return (byBootstrap || byNode) && (spec.usages ?? []).every((u) => allowed.has(u));
  }

  private sign(name: string, spec: { signerName?: string; request?: string }): void {
    const csr = this.store.get(CSRS, undefined, name);
    if (!csr || (csr.status as Obj | undefined)?.certificate) return;
    const reqFile = join(this.dir, `${name}.csr`);
    const outFile = join(this.dir, `${name}.crt`);
    writeFileSync(reqFile, Buffer.from(spec.request ?? '', 'base64'));
    const now = Date.now();
    const lifetime = (this.opts.lifetimeSeconds ?? 3600) * 1000;
    try {
      execFileSync(
        'openssl',
        [
          'ca',
          '-batch',
          '-config',
          join(this.dir, 'ca.cnf'),
          '-cert',
          this.certs.caFile,
          '-keyfile',
          join(this.certs.dir, 'ca.key'),
          '-in',
          reqFile,
          '-out',
          outFile,
          '-notext',
          '-preserveDN',
          '-extensions',
          spec.signerName === SERVING_SIGNER ? 'serving' : 'client',
          '-startdate',
          gt(new Date(now - 5000)),
          '-enddate',
          gt(new Date(now + lifetime)),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    } catch (err) {
      this.setCondition(name, {
        type: 'Failed',
        status: 'True',
        reason: 'SigningFailed',
        message: String((err as { stderr?: Buffer }).stderr ?? err),
      });
      return;
    }
    const status = (csr.status ?? {}) as Obj;
    status.certificate = readFileSync(outFile).toString('base64');
    csr.status = status;
    this.store.put(CSRS, csr, 'MODIFIED');
    this.signed.push(name);
  }
}
