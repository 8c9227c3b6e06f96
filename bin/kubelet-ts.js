#!/usr/bin/env -S node --max-semi-space-size=2
// Thin launcher: the compiled entry lives in dist/ (run `npm run build` first).
// Run it as an executable (./bin/kubelet-ts.js, the npm bin, the systemd unit) so the V8 flag
// above applies: a node agent's heap is many small short-lived objects (relist results, status
// copies), and V8's default 16 MiB semi-spaces let ~30 MiB of garbage sit in RSS at 100 pods.
// 2 MiB semi-spaces keep the agent under 100 MiB at no measurable CPU cost (README, Performance).
import { main } from '../dist/src/cmd/cli.js';

process.on('unhandledRejection', (err) => {
  process.stderr.write(`kubelet-ts: unhandled rejection: ${err && err.stack ? err.stack : err}\n`);
});
main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  process.stderr.write(`kubelet-ts: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
