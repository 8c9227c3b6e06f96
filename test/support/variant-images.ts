/**
 * Throwaway images with their own image ids, for image GC and registry tests: the busybox OCI
 * tarball (scripts/build-images.mjs) with one label added to its config, so each variant has a
 * distinct config digest (= CRI image id) while sharing busybox's layer.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { buildImages } from './images.js';
import { testTempDir } from './temp-dir.js';

const run = promisify(execFile);

function sha(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Writes an OCI archive of busybox named `name` whose config carries label variant=`variant`. */
export async function makeVariantImage(name: string, variant: string, outDir: string): Promise<string> {
  const { busybox } = await buildImages();
  const dir = testTempDir('kts-variant-');
  try {
    await run('tar', ['-xf', busybox, '-C', dir]);
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
    const blob = (d: string) => join(dir, 'blobs', 'sha256', d.replace('sha256:', ''));
    const manifest = JSON.parse(readFileSync(blob(index.manifests[0].digest), 'utf8'));
    const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8'));
    config.config.Labels = { ...config.config.Labels, 'kubelet-ts.test/variant': variant };
    const configBytes = Buffer.from(JSON.stringify(config));
    writeFileSync(blob(`sha256:${sha(configBytes)}`), configBytes);
    manifest.config = { ...manifest.config, digest: `sha256:${sha(configBytes)}`, size: configBytes.length };
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    writeFileSync(blob(`sha256:${sha(manifestBytes)}`), manifestBytes);
    const tag = name.slice(name.lastIndexOf(':') + 1);
    index.manifests = [
      {
        ...index.manifests[0],
        digest: `sha256:${sha(manifestBytes)}`,
        size: manifestBytes.length,
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag },
      },
    ];
    writeFileSync(join(dir, 'index.json'), JSON.stringify(index));
    const out = join(outDir, `${variant}.tar`);
    await run('tar', ['-cf', out, '-C', dir, 'oci-layout', 'index.json', 'blobs']);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Imports an OCI archive into the CRI namespace of the containerd at `endpoint` (unix://...). */
export async function importImage(endpoint: string, tarball: string): Promise<void> {
  const sock = endpoint.replace(/^unix:\/\//, '');
  // scripts/containerd.sh records the snapshotter it chose beside the socket.
  let snapshotter = 'overlayfs';
  try {
    snapshotter =
      /^SNAPSHOTTER=(\S+)/m.exec(readFileSync(join(dirname(sock), 'network.env'), 'utf8'))?.[1] ?? snapshotter;
  } catch {
    // not started by containerd.sh: the default
  }
  await run('ctr', ['-a', sock, '-n', 'k8s.io', 'images', 'import', '--snapshotter', snapshotter, tarball]);
}
