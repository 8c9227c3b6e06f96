/** Node certificates: TLS bootstrap and the file store (upstream pkg/kubelet/certificate). */
export {
  loadClientCert,
  isClientConfigStillValid,
  clientUsages,
  nodeCertUsages,
  CLIENT_SIGNER,
  BOOTSTRAP_WAIT_MS,
  type BootstrapOptions,
} from './bootstrap.js';
export { CertificateRotation, rotationDeadline, type RotationOptions } from './rotation.js';
export { CertFileStore, splitPem } from './file-store.js';
export { requestCertificate, waitForCertificate, issuedCertificate, CSR_PATH } from './csr-client.js';
