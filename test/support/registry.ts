/**
 * A real image registry on loopback for pull tests: Debian's docker-registry (the CNCF
 * distribution registry) with its own config and storage in a temp dir, optional htpasswd
 * (bcrypt) auth, images pushed with skopeo, and a hosts.toml that lets the test containerd pull
 * from it over plain HTTP (scripts/containerd.sh points config_path at <state>/certs.d).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { randomPort, waitFor } from './kubelet-process.js';
import { testTempDir } from './temp-dir.js';

const run = promisify(execFile);

export interface TestRegistry {
  host: string;
  creds?: { username: string; password: string };
  /** Pushes an OCI archive (tag "latest" inside) as host/<repo>. */
  push(ociArchive: string, repo: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startRegistry(opts: {
  endpoint: string;
  auth?: { username: string; password: string };
}): Promise<TestRegistry> {
  const dir = testTempDir('kts-registry-');
  const port = randomPort();
  const host = `127.0.0.1:${port}`;
  const auth = opts.auth;
  if (auth) {
    const { stdout } = await run('htpasswd', ['-Bbn', auth.username, auth.password]);
    writeFileSync(join(dir, 'htpasswd'), stdout);
  }
  writeFileSync(
    join(dir, 'config.yml'),
    [
      'version: 0.1',
      'log: {level: warn}',
      `storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}, delete: {enabled: true}}`,
      `http: {addr: "${host}"}`,
      ...(auth ? [`auth: {htpasswd: {realm: kubelet-ts-test, path: ${join(dir, 'htpasswd')}}}`] : []),
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(hostsDir, { recursive: true, force: true });
  };
  // containerd: plain HTTP for this host only.
  const hostsDir = join(dirname(opts.endpoint.replace(/^unix:\/\//, '')), 'certs.d', host);
  mkdirSync(hostsDir, { recursive: true });
  writeFileSync(
    join(hostsDir, 'hosts.toml'),
    `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  try {
    await waitFor(`registry on ${host}`, 15_000, async () => {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
      const r = await fetch(`http://${host}/v2/`).catch(() => undefined);
      return r && (r.status === 200 || r.status === 401) ? true : undefined;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    host,
    creds: auth,
    async push(ociArchive, repo) {
      const creds = auth ? ['--dest-creds', `${auth.username}:${auth.password}`] : [];
      await run('skopeo', [
        'copy',
        '--quiet',
        '--dest-tls-verify=false',
        ...creds,
        `oci-archive:${ociArchive}:latest`,
        `docker://${host}/${repo}`,
      ]);
    },
    stop,
  };
}
