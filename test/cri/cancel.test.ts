// A CRI client bound to an AbortSignal (withSignal) cancels its calls when the signal fires, as
// upstream's kubelet cancels the pod worker's context: a kill does not wait for a sync's calls.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connectRuntime, type CriConnection } from '../../src/cri/index.js';
import { CriError } from '../../src/errors.js';
import { startFakeCriServer, type FakeCriServer } from './fake-cri-server.js';
import type { PodSandboxConfig } from '../../src/cri/types.js';

let server: FakeCriServer;
let cri: CriConnection;
before(async () => {
  server = await startFakeCriServer();
  cri = connectRuntime(server.endpoint, { timeoutMs: 30_000 });
  // Calls that never answer, as a runtime that hangs.
  server.handlers.RunPodSandbox = () => new Promise(() => {});
  server.handlers.PullImage = () => new Promise(() => {});
  server.handlers.Version = () => ({
    version: '0.1.0',
    runtimeName: 'fake',
    runtimeVersion: '1',
    runtimeApiVersion: 'v1',
  });
});
after(async () => {
  cri.runtime.close();
  cri.images.close();
  await server.close();
});

const config = { metadata: { name: 'p', uid: 'u', namespace: 'n', attempt: 0 } } as PodSandboxConfig;

test('a hanging call is cancelled within milliseconds of the abort, as a CriError', async () => {
  const ac = new AbortController();
  const started = Date.now();
  const call = cri.runtime.withSignal!(ac.signal).runPodSandbox(config);
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(
    call,
    (err: unknown) => err instanceof CriError && /cancelled/.test(err.message) && err.grpcCode === 1,
  );
  assert.ok(Date.now() - started < 2000, `cancelled after ${Date.now() - started} ms, not at the 30 s deadline`);
});

test('an image pull is cancelled the same way; an aborted signal refuses new calls at once', async () => {
  const ac = new AbortController();
  const pull = cri.images.withSignal!(ac.signal).pullImage('busybox');
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(pull, /cancelled/);
  await assert.rejects(cri.runtime.withSignal!(ac.signal).version(), /cancelled/);
});

test('the unbound client and other views are unaffected', async () => {
  const ac = new AbortController();
  ac.abort();
  cri.runtime.withSignal!(ac.signal);
  assert.equal((await cri.runtime.version()).runtimeName, 'fake');
  assert.equal((await cri.runtime.withSignal!(new AbortController().signal).version()).runtimeName, 'fake');
});
