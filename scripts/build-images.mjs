#!/usr/bin/env node
// Build the local OCI images the tests run, from Debian's busybox-static (/bin/busybox):
//
//   localhost/kubelet-ts/busybox:latest  busybox + applet symlinks in /bin, /etc/passwd, /etc/group,
//                                        /tmp; Cmd ["sh"]
//   localhost/kubelet-ts/pause:latest    the sandbox image: the same layer, an entrypoint that sleeps
//                                        until SIGTERM/SIGINT and then exits 0 at once
//   localhost/kubelet-ts/busybox-uid1000, -uid1000-gid1000, -nobody
//                                        busybox whose config User is "1000", "1000:1000" and
//                                        "nobody" (runAsNonRoot against the image's user)
//   localhost/kubelet-ts/setuid:latest   busybox plus a setuid-root copy, /bin/busybox-suid (04755),
//                                        whose /etc/busybox.conf (0600) keeps euid 0 for `id`: run by a
//                                        non-root user it prints euid=0 unless no_new_privs stopped
//                                        the setuid bit (test/e2e/attack-security-context.test.ts).
//                                        Not imported by scripts/containerd.sh: the test imports it.
//
// Each image is written as an OCI image-layout tarball (oci-layout, index.json, blobs/sha256/...)
// that `ctr images import` and `skopeo copy oci-archive:FILE:latest ...` both read. The index
// entry carries `io.containerd.image.name` (the full name, which ctr uses as-is) and
// `org.opencontainers.image.ref.name` = "latest" (the OCI tag, which skopeo matches).
//
// Reproducible: the tar is written here with fixed mtimes, uid/gid 0, sorted entries and an
// uncompressed layer, so the same busybox binary always gives the same digests; a tarball whose
// bytes would not change is not rewritten.
//
// Usage: node scripts/build-images.mjs [--out DIR] [--busybox PATH] [--quiet]
//   DIR defaults to <repo>/.state/images. Prints one line per image: "<name> <file> <manifest digest>".

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** 2024-01-01T00:00:00Z: every mtime and `created` in the images. */
const EPOCH = 1704067200;
const CREATED = new Date(EPOCH * 1000).toISOString().replace('.000Z', 'Z');
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export const IMAGES = {
  busybox: 'localhost/kubelet-ts/busybox:latest',
  pause: 'localhost/kubelet-ts/pause:latest',
  'busybox-uid1000': 'localhost/kubelet-ts/busybox-uid1000:latest',
  'busybox-uid1000-gid1000': 'localhost/kubelet-ts/busybox-uid1000-gid1000:latest',
  'busybox-nobody': 'localhost/kubelet-ts/busybox-nobody:latest',
  setuid: 'localhost/kubelet-ts/setuid:latest',
};

/**
 * The setuid image's additions. busybox drops a setuid euid for most applets; its config file,
 * readable only with euid 0, lists `id` as one that keeps it, so `busybox-suid id` shows
 * whether the kernel granted the setuid bit.
 */
const SETUID_ENTRIES = (busybox) => [
  { name: 'bin/busybox-suid', type: 'file', mode: 0o4755, data: busybox },
  { name: 'etc/busybox.conf', type: 'file', mode: 0o600, data: Buffer.from('[SUID]\nid = ssx root.root\n') },
];

/**
 * The pause entrypoint. `sleep & wait` keeps the shell able to run its trap as soon as a signal
 * arrives (a foreground sleep would delay the trap until it ends); the trap kills the sleep so
 * nothing is left behind when the sandbox shares the host PID namespace.
 */
const PAUSE_SCRIPT = "trap 'kill $! 2>/dev/null; exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

// ---------------------------------------------------------------------------------------------
// A minimal ustar writer (names here are all < 100 bytes, so no pax/GNU extensions are needed).

function octal(n, width) {
  // width includes the terminating NUL.
  const s = n.toString(8);
  if (s.length > width - 1) throw new Error(`tar: value ${n} does not fit in ${width} bytes`);
  return s.padStart(width - 1, '0') + '\0';
}

function tarHeader({ name, mode, size = 0, type, linkname = '' }) {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar: name too long: ${name}`);
  const h = Buffer.alloc(512, 0);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(EPOCH, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum placeholder
  h.write(type, 156, 1, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  h.write(octal(0, 8), 329, 8, 'ascii');
  h.write(octal(0, 8), 337, 8, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/**
 * entries: { name, type: 'dir'|'file'|'symlink', mode?, data?, target? }, written in name order
 * (parents sort before children because '/' sorts after nothing shorter).
 */
function tar(entries) {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const parts = [];
  for (const e of sorted) {
    if (e.type === 'dir') {
      parts.push(tarHeader({ name: e.name.endsWith('/') ? e.name : e.name + '/', mode: e.mode ?? 0o755, type: '5' }));
    } else if (e.type === 'symlink') {
      parts.push(tarHeader({ name: e.name, mode: 0o777, type: '2', linkname: e.target }));
    } else {
      const data = e.data;
      parts.push(tarHeader({ name: e.name, mode: e.mode ?? 0o644, size: data.length, type: '0' }));
      parts.push(data);
      const pad = (512 - (data.length % 512)) % 512;
      if (pad) parts.push(Buffer.alloc(pad, 0));
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

function hostArch() {
  const map = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  const a = map[process.arch];
  if (!a) throw new Error(`unsupported host arch ${process.arch}`);
  return a;
}

function rootfsLayer(busyboxPath, extra = () => []) {
  const busybox = readFileSync(busyboxPath);
  const applets = execFileSync(busyboxPath, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s && s !== 'busybox' && !s.includes('/'));
  const entries = [
    { name: 'bin', type: 'dir' },
    { name: 'bin/busybox', type: 'file', mode: 0o755, data: busybox },
    { name: 'dev', type: 'dir' },
    { name: 'etc', type: 'dir' },
    {
      name: 'etc/passwd',
      type: 'file',
      data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n'),
    },
    { name: 'etc/group', type: 'file', data: Buffer.from('root:x:0:\nnobody:x:65534:\n') },
    { name: 'home', type: 'dir' },
    { name: 'proc', type: 'dir' },
    { name: 'root', type: 'dir', mode: 0o700 },
    { name: 'sbin', type: 'symlink', target: 'bin' },
    { name: 'sys', type: 'dir' },
    { name: 'tmp', type: 'dir', mode: 0o1777 },
    { name: 'usr', type: 'dir' },
    { name: 'usr/bin', type: 'symlink', target: '../bin' },
    { name: 'usr/sbin', type: 'symlink', target: '../bin' },
    { name: 'var', type: 'dir' },
    { name: 'var/tmp', type: 'dir', mode: 0o1777 },
    ...extra(busybox),
  ];
  for (const a of applets) entries.push({ name: `bin/${a}`, type: 'symlink', target: 'busybox' });
  return tar(entries);
}

function imageTarball({ name, layer, config: runConfig, arch }) {
  const layerDigest = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({
      created: CREATED,
      architecture: arch,
      os: 'linux',
      config: { Env: [PATH_ENV], WorkingDir: '/', ...runConfig },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
      history: [{ created: CREATED, created_by: 'kubelet-ts scripts/build-images.mjs (busybox-static)' }],
    }),
  );
  const configDigest = sha256(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: `sha256:${configDigest}`,
        size: config.length,
      },
      layers: [
        { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${layerDigest}`, size: layer.length },
      ],
    }),
  );
  const manifestDigest = sha256(manifest);
  const tag = name.slice(name.lastIndexOf(':') + 1);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: `sha256:${manifestDigest}`,
          size: manifest.length,
          platform: { architecture: arch, os: 'linux' },
          annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  const archive = tar([
    { name: 'oci-layout', type: 'file', data: Buffer.from('{"imageLayoutVersion":"1.0.0"}') },
    { name: 'index.json', type: 'file', data: index },
    { name: 'blobs', type: 'dir' },
    { name: 'blobs/sha256', type: 'dir' },
    { name: `blobs/sha256/${layerDigest}`, type: 'file', data: layer },
    { name: `blobs/sha256/${configDigest}`, type: 'file', data: config },
    { name: `blobs/sha256/${manifestDigest}`, type: 'file', data: manifest },
  ]);
  return { archive, manifestDigest: `sha256:${manifestDigest}`, configDigest: `sha256:${configDigest}` };
}

/** Build the images into outDir; returns { key: { name, file, digest, imageId } }. */
export function buildImages({ outDir = join(REPO, '.state', 'images'), busybox = '/bin/busybox' } = {}) {
  if (!existsSync(busybox)) {
    throw new Error(`${busybox} not found: install busybox-static (scripts/install-deps.sh)`);
  }
  mkdirSync(outDir, { recursive: true });
  const arch = hostArch();
  const layer = rootfsLayer(busybox);
  const specs = {
    busybox: { name: IMAGES.busybox, config: { Cmd: ['sh'] } },
    pause: { name: IMAGES.pause, config: { Entrypoint: ['/bin/sh', '-c', PAUSE_SCRIPT] } },
    'busybox-uid1000': { name: IMAGES['busybox-uid1000'], config: { Cmd: ['sh'], User: '1000' } },
    'busybox-uid1000-gid1000': { name: IMAGES['busybox-uid1000-gid1000'], config: { Cmd: ['sh'], User: '1000:1000' } },
    'busybox-nobody': { name: IMAGES['busybox-nobody'], config: { Cmd: ['sh'], User: 'nobody' } },
    setuid: { name: IMAGES.setuid, config: { Cmd: ['sh'] }, layer: rootfsLayer(busybox, SETUID_ENTRIES) },
  };
  const out = {};
  for (const [key, spec] of Object.entries(specs)) {
    // The shared busybox layer unless the spec brings its own.
    const { archive, manifestDigest, configDigest } = imageTarball({ layer, ...spec, arch });
    const file = join(outDir, `${key}.tar`);
    let same = false;
    try {
      same = readFileSync(file).equals(archive);
    } catch {
      /* absent */
    }
    if (!same) {
      writeFileSync(`${file}.tmp`, archive);
      renameSync(`${file}.tmp`, file);
    }
    out[key] = { name: spec.name, file, digest: manifestDigest, imageId: configDigest };
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opts = {};
  let quiet = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--out') opts.outDir = resolve(args[++i] ?? '');
    else if (a === '--busybox') opts.busybox = args[++i];
    else if (a === '--quiet') quiet = true;
    else {
      console.error(`usage: build-images.mjs [--out DIR] [--busybox PATH] [--quiet]`);
      process.exit(2);
    }
  }
  try {
    const built = buildImages(opts);
    if (!quiet) for (const b of Object.values(built)) console.log(`${b.name} ${b.file} ${b.digest}`);
  } catch (err) {
    console.error(`build-images: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}
