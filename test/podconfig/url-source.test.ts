import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createUrlSource, type PodUpdate } from '../../src/podconfig/index.js';
import { parseManifestUrlHeaders } from '../../src/config/index.js';

let body: string | Buffer = '';
let status = 200;
let hits = 0;
const server = createServer((_req, res) => {
  hits++;
  res.writeHead(status);
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/m`;
after(() => server.close());

const pod = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });

function source(maxBytes?: number) {
  const updates: PodUpdate[] = [];
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) });
  const s = createUrlSource({ url, nodeName: 'n1', periodMs: 3_600_000, maxBytes, logger });
  s.start((u) => updates.push(u));
  return { s, updates, lines };
}

test('a pod is pushed once; unchanged bytes are skipped; an empty body is a SET of nothing', async () => {
  body = pod('a');
  const { s, updates } = source();
  await s.sync();
  await s.sync();
  assert.equal(updates.length, 1);
  assert.equal(updates[0]!.op, 'SET');
  assert.equal(updates[0]!.source, 'http');
  assert.deepEqual(
    updates[0]!.pods.map((p) => p.metadata?.name),
    ['a-n1'],
  );
  body = '';
  await s.sync();
  assert.equal(updates.length, 2);
  assert.deepEqual(updates[1]!.pods, []);
  s.stop();
});

test('failures push nothing and go quiet after three loud logs; recovery is logged', async () => {
  body = pod('b');
  const { s, updates, lines } = source();
  await s.sync();
  status = 500;
  for (let i = 0; i < 5; i++) await s.sync();
  status = 200;
  body = '{not json';
  await s.sync();
  assert.equal(updates.length, 1, 'failures push nothing');
  const errors = lines.filter((l) => /unable to read manifest URL/.test(l) && /"level":50/.test(l));
  assert.equal(errors.length, 3);
  body = pod('b');
  await s.sync();
  assert.ok(lines.some((l) => /readable again/.test(l)));
  assert.equal(updates.length, 1, 'same bytes as the last good read: nothing new');
  s.stop();
});

test('a body larger than the bound is refused', async () => {
  body = Buffer.alloc(4096, 0x20);
  const { s, updates, lines } = source(1024);
  const before = hits;
  await s.sync();
  assert.equal(hits, before + 1);
  assert.equal(updates.length, 0);
  assert.ok(lines.some((l) => /larger than the 1024-byte limit/.test(l)));
  s.stop();
});

test('--manifest-url-header syntax', () => {
  assert.deepEqual(parseManifestUrlHeaders('a:hello,b:again,c:world,b:beautiful').value, {
    a: ['hello'],
    b: ['again', 'beautiful'],
    c: ['world'],
  });
  assert.match(parseManifestUrlHeaders('novalue').problem!, /key:value/);
});
