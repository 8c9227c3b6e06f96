#!/usr/bin/env node
// Thin launcher: the compiled entry lives in dist/ (run `npm run build` first).
import { main } from '../dist/src/cli.js';

process.on('unhandledRejection', (err) => {
  process.stderr.write(`kubelet-ts: unhandled rejection: ${err && err.stack ? err.stack : err}\n`);
});
main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  process.stderr.write(`kubelet-ts: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
