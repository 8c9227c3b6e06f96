// What a new user does: `npm pack` (prepack compiles src/ to dist/), `npm install -g` of the
// tarball into a private prefix, then `kubelet-ts --version`, and `npx` straight from the
// tarball. The sources are copied to a scratch directory first so that prepack's tsc never
// rewrites the dist/ the other tests are running from. Dependencies come from the npm registry
// through the shared npm cache (--prefer-offline: a warm cache needs no network).
//
// With KUBELET_TS_NATIVE=0 the install runs without a C++ compiler (CXX=/nonexistent): the
// install script must warn in one line, succeed, and leave the TypeScript twins in charge.
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPO_ROOT } from '../support/kubelet-process.js';
import { VERSION } from '../../src/version.js';
import { testTempDir } from '../support/temp-dir.js';

const noCompiler = process.env.KUBELET_TS_NATIVE === '0';
const scratch = testTempDir('kts-install-');
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment of a user's shell: no KUBELET_TS_* and no npm_* left over from a parent npm run. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(KUBELET_TS_|npm_|NODE_TEST_CONTEXT)/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, env = userEnv()): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 240_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** A checkout without dist/ or build/: what package.json ships plus what prepack compiles from. */
function copySources(): string {
  const src = join(scratch, 'src-copy');
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const wanted = [
    ...pkg.files.filter((f) => !f.startsWith('!') && !f.startsWith('dist/')),
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src/',
  ];
  for (const f of wanted) cpSync(join(REPO_ROOT, f), join(src, f), { recursive: true });
  // prepack's tsc is a devDependency: the developer's node_modules, as in a real checkout.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(src, 'node_modules'));
  return src;
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function versionLines(out: string): void {
  assert.match(out, new RegExp(`^Kubernetes ${escaped(VERSION)}\n`));
  assert.match(
    out,
    noCompiler
      ? /^native addon: not built/m
      : /^native addon: loaded from .*kubelet-ts\/build\/Release\/kubelet_ts_native\.node$/m,
  );
}

test(
  'npm pack, npm install -g of the tarball, kubelet-ts --version, npx from the tarball',
  { timeout: 300_000 },
  () => {
    const src = copySources();
    run('npm', ['pack', '--silent', '--pack-destination', scratch], src);
    const tgz = join(
      scratch,
      readdirSync(scratch).find((f) => f.endsWith('.tgz'))!,
    );

    const listing = run('tar', ['tzf', tgz], scratch).stdout.split('\n');
    assert.ok(listing.includes('package/dist/src/cmd/cli.js'), 'dist/ is prebuilt into the tarball');
    assert.ok(listing.includes('package/src/cri/proto/api.proto'));
    assert.ok(listing.includes('package/src/volume/csi/proto/csi.proto'));
    assert.ok(listing.includes('package/src/pluginmanager/proto/api.proto'));
    assert.ok(listing.includes('package/src/devicemanager/proto/deviceplugin-v1beta1.proto'));
    assert.ok(listing.includes('package/src/podresources/proto/podresources-v1.proto'));
    assert.ok(listing.includes('package/dist/src/cmd/cli.js.map'), 'source maps: log lines name the .ts caller');
    assert.ok(
      !listing.some(
        (f) =>
          f.startsWith('package/dist/test/') || f.startsWith('package/dist/bench/') || f.startsWith('package/test/'),
      ),
      'no tests or benches',
    );

    const prefix = join(scratch, 'prefix');
    // An absolute tarball path is the allowScripts identity npm 11 matches for a file install.
    const install = run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--foreground-scripts',
        `--allow-scripts=${tgz},protobufjs`,
        tgz,
      ],
      scratch,
      userEnv(noCompiler ? { CXX: '/nonexistent' } : {}),
    );
    const warnings = `${install.stdout}${install.stderr}`
      .split('\n')
      .filter((l) => l.includes('native addon not built'));
    assert.equal(warnings.length, noCompiler ? 1 : 0, warnings.join('\n'));
    assert.doesNotMatch(install.stderr, /not yet covered by allowScripts/);

    versionLines(run(join(prefix, 'bin', 'kubelet-ts'), ['--version'], scratch).stdout);
    // npx installs into its own cache directory; no compiler there, one native build per test is enough.
    const npx = run(
      'npx',
      ['--yes', '--prefer-offline', '--package', tgz, 'kubelet-ts', '--version'],
      scratch,
      userEnv({ CXX: '/nonexistent' }),
    );
    assert.match(npx.stdout, new RegExp(`^Kubernetes ${escaped(VERSION)}\n`));
  },
);
