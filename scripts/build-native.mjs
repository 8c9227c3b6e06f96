#!/usr/bin/env node
// Builds the native addon (build/Release/kubelet_ts_native.node) with node-gyp, offline, against
// the headers of the Node that runs this script.
//
//   node scripts/build-native.mjs          `npm install`: on failure warn in one line, exit 0, and
//                                         the daemon runs on the TypeScript twins
//   node scripts/build-native.mjs --force  `npm run build:native`: on failure exit non-zero
import { spawnSync } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');

function giveUp(reason) {
  if (force) {
    console.error(`kubelet-ts: native addon build failed: ${reason}`);
    process.exit(1);
  }
  console.warn(
    `kubelet-ts: WARNING native addon not built (${reason}); the agent will use the TypeScript implementations`,
  );
  process.exit(0);
}

if (process.platform !== 'linux') giveUp(`platform ${process.platform} is not supported, Linux only`);

const cxx = process.env.CXX || 'c++';
const probe = spawnSync(cxx, ['--version'], { stdio: 'ignore' });
if (probe.error || probe.status !== 0) giveUp(`no C++ compiler: '${cxx}' not found or not runnable`);

// node-gyp: the project's own, else the one bundled with npm.
const candidates = [
  join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  process.env.npm_execpath
    ? join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
    : '',
  join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
].filter(Boolean);
const nodeGyp = candidates.find((p) => existsSync(p));
if (!nodeGyp) giveUp('node-gyp not found (neither in node_modules nor bundled with npm)');

// Headers: npm's nodedir when run through npm, else those installed next to this node binary.
// Either way nothing is downloaded. Without both, node-gyp falls back to its own cache.
const args = [nodeGyp, 'rebuild', '--jobs', 'max'];
const prefix = resolve(dirname(process.execPath), '..');
const nodedir =
  process.env.npm_config_nodedir || (existsSync(join(prefix, 'include', 'node', 'common.gypi')) ? prefix : '');
if (nodedir) args.push(`--nodedir=${nodedir}`);

// On install the compiler's output goes to a file: a failed build is then one warning line (npm
// shows script output only with --foreground-scripts anyway); --force shows it all.
const logPath = join(root, 'native-build.log');
const out = force ? 'inherit' : openSync(logPath, 'w');
const run = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', out, out] });
if (run.error) giveUp(`could not run node-gyp: ${run.error.message}`);
if (run.status !== 0)
  giveUp(
    `node-gyp rebuild exited with ${run.status ?? run.signal}; ${force ? 'see the compiler output above' : `compiler output in ${logPath}`}`,
  );

const built = join(root, 'build', 'Release', 'kubelet_ts_native.node');
if (!existsSync(built)) giveUp(`node-gyp succeeded but ${built} is missing`);
console.log(`kubelet-ts: native addon built: ${built}`);
