/**
 * The storage object source of API server mode against the test apiserver (real HTTP): claims,
 * volumes, attachments and secrets are one GET each (404 → null, any other failure a typed
 * ApiError naming what was fetched); the claim status patch is a merge patch of the status
 * subresource; CSIDrivers come from one list+watch started by the first lookup that sees
 * creations and deletions; once synced an idle source makes no request. Also the test
 * apiserver's storage resources and the helpers the CSI e2e uses (test/support/storage-objects.ts).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiClients } from '../../src/apiclient/index.js';
import { CSI_DRIVERS_PATH, StorageObjects } from '../../src/apimode/storage-objects.js';
import { ApiError } from '../../src/errors.js';
import { startTestApiserver } from '../support/test-apiserver.js';
import { waitFor } from '../support/kubelet-process.js';
import { testTempDir } from '../support/temp-dir.js';
import {
  attachmentName,
  createBoundClaim,
  createCsiDriver,
  createStorageClass,
  createVolumeAttachment,
  deleteCsiDriver,
} from '../support/storage-objects.js';

/** A claim whose GET the apiserver fails (500), as an overloaded one would. */
const BROKEN = '/api/v1/namespaces/ns/persistentvolumeclaims/broken';
const failing = (req: IncomingMessage, res: ServerResponse): boolean => {
  if (!req.url?.startsWith(BROKEN)) return false;
  const body = JSON.stringify({
    kind: 'Status',
    status: 'Failure',
    reason: 'InternalError',
    code: 500,
    message: 'etcd down',
  });
  res.writeHead(500, { 'content-type': 'application/json' }).end(body);
  return true;
};

const api = await startTestApiserver({ bookmarkMs: 200, extraHandlers: [failing] });
const clients = await createApiClients(api.kubeconfig(testTempDir('kts-storage-objects-')));
let attached: ReadonlySet<string> = new Set(['kubernetes.io/csi/d^h1']);
const source = new StorageObjects({ client: clients.main, attachedVolumes: () => attached, syncTimeoutMs: 5000 });
after(async () => {
  source.stop();
  clients.close();
  await api.stop();
});

const driverCalls = () => api.requests.filter((r) => r.method === 'GET' && r.path === CSI_DRIVERS_PATH);

test('a missing claim, volume, attachment or secret is null (404), one GET each', async () => {
  const before = api.requests.length;
  assert.equal(await source.persistentVolumeClaim('ns', 'nope'), null);
  assert.equal(await source.persistentVolume('nope'), null);
  assert.equal(await source.volumeAttachment('csi-nope'), null);
  assert.equal(await source.secret('ns', 'nope'), null);
  assert.deepEqual(
    api.requests.slice(before).map((r) => `${r.method} ${r.path}`),
    [
      'GET /api/v1/namespaces/ns/persistentvolumeclaims/nope',
      'GET /api/v1/persistentvolumes/nope',
      'GET /apis/storage.k8s.io/v1/volumeattachments/csi-nope',
      'GET /api/v1/namespaces/ns/secrets/nope',
    ],
  );
});

test('any other failure is a typed ApiError saying what was fetched', async () => {
  await assert.rejects(source.persistentVolumeClaim('ns', 'broken'), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 500);
    assert.equal(err.code, 'KTS_ERR_API');
    assert.match(err.message, /failed to fetch PVC ns\/broken from API server: .*etcd down/);
    return true;
  });
  await assert.rejects(source.patchPersistentVolumeClaimStatus('ns', 'nope', { status: {} }), (err: unknown) => {
    assert.ok(err instanceof ApiError && err.statusCode === 404);
    assert.match(err.message, /failed to patch the status of PVC ns\/nope/);
    return true;
  });
});

test('a bound pair resolves claim → volume; secrets are decoded; attachments read with their status', async () => {
  const { pv } = await createBoundClaim(api, {
    namespace: 'ns',
    claimName: 'data',
    driver: 'd.example.com',
    volumeHandle: 'h1',
    storage: '2Gi',
    fsType: 'ext4',
    volumeAttributes: { a: 'b' },
    nodeStageSecretRef: { name: 'stage', namespace: 'ns' },
  });
  const pvc = await source.persistentVolumeClaim('ns', 'data');
  assert.equal(pvc?.status?.phase, 'Bound');
  assert.equal(pvc?.spec?.volumeName, 'pv-data');
  assert.deepEqual(pvc?.status?.capacity, { storage: '2Gi' });
  const vol = await source.persistentVolume(pvc!.spec!.volumeName!);
  assert.equal(vol?.status?.phase, 'Bound');
  assert.equal(vol?.spec?.claimRef?.uid, pvc?.metadata?.uid);
  assert.deepEqual(vol?.spec?.csi, {
    driver: 'd.example.com',
    volumeHandle: 'h1',
    fsType: 'ext4',
    volumeAttributes: { a: 'b' },
    nodeStageSecretRef: { name: 'stage', namespace: 'ns' },
  });
  assert.equal((pv.metadata as { name: string }).name, 'pv-data');
  const data = { user: Buffer.from('admin').toString('base64'), key: Buffer.from('s3cr3t\n').toString('base64') };
  assert.equal(
    (await api.call('POST', '/api/v1/namespaces/ns/secrets', { metadata: { name: 'stage' }, data })).status,
    201,
  );
  assert.deepEqual(await source.secret('ns', 'stage'), { user: 'admin', key: 's3cr3t\n' });
  const o = { driver: 'd.example.com', volumeHandle: 'h1', nodeName: 'n1', pvName: 'pv-data' };
  await createVolumeAttachment(api, { ...o, attachmentMetadata: { lun: '3' } });
  const va = await source.volumeAttachment(attachmentName('h1', 'd.example.com', 'n1'));
  assert.deepEqual(va?.status, { attached: true, attachmentMetadata: { lun: '3' } });
  assert.equal(va?.spec?.source?.persistentVolumeName, 'pv-data');
});

test('the claim status patch is a merge patch of the status subresource; the spec is untouched', async () => {
  const before = api.requests.length;
  await source.patchPersistentVolumeClaimStatus('ns', 'data', { status: { capacity: { storage: '4Gi' } } });
  const call = api.requests.slice(before).find((r) => r.method === 'PATCH');
  assert.equal(call?.path, '/api/v1/namespaces/ns/persistentvolumeclaims/data/status');
  assert.equal(call?.contentType, 'application/merge-patch+json');
  const stored = api.store.get('persistentvolumeclaims', 'ns', 'data') as {
    spec: { resources: { requests: { storage: string } } };
    status: { phase: string; capacity: { storage: string } };
  };
  assert.deepEqual(stored.status.capacity, { storage: '4Gi' });
  assert.equal(stored.status.phase, 'Bound');
  assert.equal(stored.spec.resources.requests.storage, '2Gi');
});

test('the test apiserver: created claims are Pending whatever was sent; the main resource never writes status', async () => {
  const path = '/api/v1/namespaces/ns/persistentvolumeclaims';
  const created = await api.call('POST', path, { metadata: { name: 'c2' }, spec: {}, status: { phase: 'Bound' } });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.status, { phase: 'Pending' });
  const patched = await api.call('PATCH', `${path}/c2`, { status: { phase: 'Lost' } }, 'application/merge-patch+json');
  assert.deepEqual(patched.body.status, { phase: 'Pending' });
  const missing = await api.call('GET', `${path}/absent`);
  assert.deepEqual([missing.status, missing.body.kind, missing.body.reason], [404, 'Status', 'NotFound']);
  const sc = await createStorageClass(api, 'fast', 'd.example.com', { type: 'ssd' });
  assert.equal(sc.kind, 'StorageClass');
  const discovery = await api.call('GET', '/apis/storage.k8s.io/v1');
  const names = (discovery.body.resources as { name: string }[]).map((r) => r.name);
  for (const n of ['csidrivers', 'csinodes', 'storageclasses', 'volumeattachments', 'volumeattachments/status'])
    assert.ok(names.includes(n), `${n} in ${names.join(' ')}`);
});

test('no CSIDriver request before the first lookup; then one list and one watch that sees creations and deletions', async () => {
  assert.equal(source.informerStarted(), false);
  assert.equal(driverCalls().length, 0);
  await createCsiDriver(api, 'd.example.com', { attachRequired: false, podInfoOnMount: true });
  const d = await source.csiDriver('d.example.com');
  assert.deepEqual(d?.spec, { attachRequired: false, podInfoOnMount: true });
  assert.equal(await source.csiDriver('other.example.com'), null);
  await createCsiDriver(api, 'other.example.com', { fsGroupPolicy: 'File' });
  await waitFor(
    'created driver watched',
    10_000,
    async () => (await source.csiDriver('other.example.com')) ?? undefined,
    20,
  );
  await deleteCsiDriver(api, 'd.example.com');
  await waitFor(
    'deleted driver watched',
    10_000,
    async () => ((await source.csiDriver('d.example.com')) ? undefined : true),
    20,
  );
  const calls = driverCalls();
  assert.equal(calls.filter((r) => r.query.get('watch') === 'true').length, 1);
  assert.equal(calls.filter((r) => r.query.get('watch') !== 'true').length, 1);
});

test('idle after the informer synced: no request at all, however many lookups', async () => {
  const since = api.requests.length;
  for (let i = 0; i < 50; i++) await source.csiDriver('other.example.com');
  assert.deepEqual(source.attachedVolumes(), new Set(['kubernetes.io/csi/d^h1']));
  attached = new Set();
  assert.equal(source.attachedVolumes().size, 0, 'read from the node status loop, not fetched');
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(
    api.requests.slice(since).map((r) => `${r.method} ${r.path}`),
    [],
  );
});

test('a lookup before the first list fails after the sync timeout, typed, and is retried by the caller', async () => {
  const lonely = new StorageObjects({ client: clients.main, attachedVolumes: () => new Set(), syncTimeoutMs: 300 });
  const deny = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!req.url?.startsWith(CSI_DRIVERS_PATH)) return false;
    res.writeHead(403, { 'content-type': 'application/json' }).end('{"kind":"Status","code":403,"reason":"Forbidden"}');
    return true;
  };
  api.extraHandlers.unshift(deny);
  try {
    await assert.rejects(lonely.csiDriver('d.example.com'), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.match(err.message, /CSIDrivers not listed within 0.3 s/);
      return true;
    });
  } finally {
    api.extraHandlers.splice(api.extraHandlers.indexOf(deny), 1);
    lonely.stop();
  }
});
