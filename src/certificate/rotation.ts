/**
 * Certificate rotation (upstream client-go util/certificate Manager, as the kubelet runs it for
 * rotateCertificates and serverTLSBootstrap). A manager holds one pair in its CertFileStore and,
 * at a jittered 70–90 % of the current certificate's lifetime, files a CSR for a fresh key with
 * the same subject through the node's own credentials, waits for it, stores it, and tells its
 * user (the API clients reload their TLS; the main port swaps its secure context) — no restart.
 * A failed attempt (apiserver away, CSR denied) is retried with back-off while the current
 * certificate still works; a manager without a certificate keeps asking until it gets one.
 */
import type { ApiClient } from '../apiclient/types.js';
import { CertificateError, errorMessage } from '../errors.js';
import { log } from '../util/log.js';
import { realClock, type Clock } from '../util/clock.js';
import { requestCertificate, waitForCertificate } from './csr-client.js';
import type { CertFileStore, StoredPair } from './file-store.js';
import { digestedCsrName, generateKeyPem, makeCsrPem, type CsrAltNames, type CsrSubject } from './keys.js';

export interface RotationOptions {
  store: CertFileStore;
  /** The client CSRs are filed with (the node's own, authenticated by its current certificate). */
  client: () => ApiClient;
  /**
   * upstream's clientset function given no current certificate: once the stored one has expired
   * the node's own client cannot authenticate, so CSRs go through this one (the bootstrap
   * kubeconfig's credentials), closed after each attempt. Absent: the node's client is used.
   */
  expiredClient?: () => Promise<{ client: ApiClient; close(): void }>;
  signerName: string;
  subject: CsrSubject;
  usages: (keyPem: string) => string[];
  altNames?: () => CsrAltNames;
  /** Called with each newly stored pair. */
  onRotated: (pair: StoredPair) => void | Promise<void>;
  /** Wait for one CSR to be issued (default 15 min). */
  waitMs?: number;
  /** First and longest back-off between failed attempts (default 2 s and 5 min). */
  backoffMs?: [number, number];
  clock?: Clock;
  random?: () => number;
  /** For metrics and logs: "client" or "server". */
  kind: 'client' | 'server';
  /** Failed renewals (kubelet_certificate_manager_client_expiration_renew_errors / kubelet_server_expiration_renew_errors). */
  onRenewError?: () => void;
}

/** upstream nextRotationDeadline: notBefore + (70 % .. 90 %) of the lifetime. */
export function rotationDeadline(notBefore: Date, notAfter: Date, random: () => number = Math.random): number {
  const total = notAfter.getTime() - notBefore.getTime();
  return notBefore.getTime() + total * (0.7 + 0.2 * random());
}

export class CertificateRotation {
  private timer: { cancel(): void } | undefined;
  private stopped = false;
  private failures = 0;
  private rotating: Promise<void> | undefined;

  constructor(private readonly o: RotationOptions) {}

  current(): StoredPair | undefined {
    return this.o.store.current();
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Rotates now (tests, and the first certificate of a manager that has none). */
  rotateNow(): Promise<void> {
    this.rotating ??= this.rotate().finally(() => {
      this.rotating = undefined;
    });
    return this.rotating;
  }

  /** upstream Manager.Current's nil: the stored certificate is past its notAfter. */
  private expired(): boolean {
    const cur = this.o.store.current();
    return cur !== undefined && new Date(cur.leaf.validTo).getTime() <= this.clock.now();
  }

  private get clock(): Clock {
    return this.o.clock ?? realClock;
  }

  private schedule(): void {
    if (this.stopped) return;
    const cur = this.o.store.current();
    const at = cur
      ? rotationDeadline(new Date(cur.leaf.validFrom), new Date(cur.leaf.validTo), this.o.random)
      : this.clock.now();
    const delay = Math.max(0, at - this.clock.now());
    if (cur)
      log('certificate').info(
        { kind: this.o.kind, notAfter: cur.leaf.validTo, rotateInS: Math.round(delay / 1000) },
        'Certificate rotation scheduled',
      );
    this.arm(delay);
  }

  private arm(delay: number): void {
    this.timer?.cancel();
    // Timers beyond 2^31 ms overflow; re-arm in steps.
    const step = Math.min(delay, 2 ** 31 - 1);
    this.timer = this.clock.setTimeout(() => {
      if (step < delay) return this.arm(delay - step);
      void this.rotateNow().then(
        () => {
          this.failures = 0;
          this.schedule();
        },
        (err: unknown) => {
          this.failures++;
          this.o.onRenewError?.();
          const [first, max] = this.o.backoffMs ?? [2000, 300_000];
          const wait = Math.min(max, first * 2 ** (this.failures - 1));
          log('certificate').warn(
            { kind: this.o.kind, err: errorMessage(err), retryInMs: wait },
            'Certificate rotation failed; the current certificate stays in use',
          );
          if (!this.stopped) this.arm(wait);
        },
      );
    }, step);
  }

  private async rotate(): Promise<void> {
    const keyPem = generateKeyPem();
    const usages = this.o.usages(keyPem);
    const name = digestedCsrName(this.o.kind === 'client' ? 'node-csr-' : 'csr-', keyPem, this.o.subject, usages);
    const lease = this.expired() && this.o.expiredClient ? await this.o.expiredClient() : undefined;
    const client = lease?.client ?? this.o.client();
    let certPem: string;
    try {
      const csrPem = makeCsrPem(keyPem, this.o.subject, this.o.altNames?.());
      const request = { name, csrPem, signerName: this.o.signerName, usages };
      const csr = await requestCertificate(client, request, new Date(this.clock.now()));
      certPem = await waitForCertificate(client, csr.metadata?.name ?? name, this.o.waitMs ?? 15 * 60_000);
    } finally {
      lease?.close();
    }
    if (this.stopped) return;
    const file = this.o.store.update(certPem, keyPem, new Date(this.clock.now()));
    const pair = this.o.store.current();
    if (!pair) throw new CertificateError(`stored ${file} but cannot read it back`);
    log('certificate').info(
      { kind: this.o.kind, certificate: file, notAfter: pair.leaf.validTo },
      'Certificate rotated',
    );
    await this.o.onRotated(pair);
  }
}
