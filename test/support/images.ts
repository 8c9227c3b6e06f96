/**
 * The local images' tarballs (OCI image layout, built by scripts/build-images.mjs from
 * busybox-static), for tests that copy them elsewhere (e.g. into a local registry with skopeo:
 * `skopeo copy oci-archive:<file>:latest docker://...`).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, TEST_IMAGES } from './containerd.js';

export { TEST_IMAGES };

export const IMAGES_DIR = join(REPO_ROOT, '.state', 'images');

export const IMAGE_TARBALLS = {
  busybox: join(IMAGES_DIR, 'busybox.tar'),
  pause: join(IMAGES_DIR, 'pause.tar'),
  /** busybox with a setuid-root copy (scripts/build-images.mjs); not imported by containerd.sh. */
  setuid: join(IMAGES_DIR, 'setuid.tar'),
} as const;

export const SETUID_IMAGE = 'localhost/kubelet-ts/setuid:latest';

/** (Re)builds the tarballs (idempotent: unchanged files are not rewritten). */
export async function buildImages(): Promise<typeof IMAGE_TARBALLS> {
  await promisify(execFile)(process.execPath, [
    join(REPO_ROOT, 'scripts', 'build-images.mjs'),
    '--quiet',
    '--out',
    IMAGES_DIR,
  ]);
  return IMAGE_TARBALLS;
}
