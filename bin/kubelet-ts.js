#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2 --single-threaded-gc --v8-pool-size=1 --optimize-for-size --interrupt-budget=540672
// Launcher: the compiled entry lives in dist/ (run `npm run build` first).
//
// The agent needs V8 and glibc settings that only take effect when the process starts (they
// size the heap, the threads and the malloc arenas; v8.setFlagsFromString after start leaves the
// semi-spaces as they were: measured). A node agent's heap is many small short-lived objects
// (relist results, status copies): V8's default 16 MiB semi-spaces let ~30 MiB of garbage sit in
// RSS at 100 pods. Every thread that mallocs gets its own glibc arena (up to 8 per core), and
// freed memory stays in them: MALLOC_ARENA_MAX=2 and fewer threads (GC on the main thread, one
// V8 worker) keep that down. --optimize-for-size makes V8 grow the old generation less past
// the live heap: 100 pods at 37 MiB RssAnon instead of 45 standalone, for at most ~0.01 core of
// GC in paired runs (docs/perf-log.md, issue 30). --interrupt-budget at 8x V8's 67584 makes a
// function run 8x longer before it is optimized: the agent's JavaScript is mostly glue, warm
// for a moment each (a pod's sync, a watch event), and TurboFan compiled all of it with zone
// memory in the middle of a 100-pod delete (peak RSS 102.8 -> 97.8 MiB); hot loops (the stats
// pass, the TypeScript twins) still get there (250-pod relist p99 22.75 ms, as before).
//
// Run as an executable (./bin/kubelet-ts.js, the npm bin, the systemd unit) the shebang above
// gives them; started any other way (`node bin/kubelet-ts.js`, `node dist/src/cmd/cli.js`)
// this file starts node once more with them (docs/performance.md).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Keep in step with the shebang. */
const NODE_FLAGS = [
  '--max-semi-space-size=2',
  '--single-threaded-gc',
  '--v8-pool-size=1',
  '--optimize-for-size',
  '--interrupt-budget=540672',
];
const ENV = { MALLOC_ARENA_MAX: '2' };
/** Signals an operator or systemd sends the agent; a relaunching parent passes them on. */
const FORWARDED = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGPWR', 'SIGUSR1', 'SIGUSR2'];

const given = (flag) => process.execArgv.includes(flag) || (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(flag);
const missing = NODE_FLAGS.filter((f) => !given(f));

if (missing.length > 0 && process.env.KUBELET_TS_RELAUNCHED === undefined) relaunch(missing);
else await run();

/** Starts node again with the missing flags and the environment, and mirrors its exit. */
function relaunch(flags) {
  const child = spawn(
    process.execPath,
    [...process.execArgv, ...flags, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...ENV, ...process.env, KUBELET_TS_RELAUNCHED: '1' },
    },
  );
  for (const sig of FORWARDED) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    for (const sig of FORWARDED) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
  });
}

async function run() {
  const { main } = await import('../dist/src/cmd/cli.js');
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`kubelet-ts: unhandled rejection: ${err && err.stack ? err.stack : err}\n`);
  });
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`kubelet-ts: ${err && err.stack ? err.stack : err}\n`);
      process.exit(1);
    },
  );
}
