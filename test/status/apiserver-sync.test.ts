/**
 * The API status sync's bookkeeping of what it sent: a status set again while its patch is still
 * in flight is not patched a second time (a race the nodestatus test hit under load).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import type { ApiClient } from '../../src/apiclient/types.js';
import { createApiStatusManager, createStatusManager } from '../../src/status/index.js';

test('a status set again while its patch is in flight is not patched twice', async () => {
  const sent: unknown[] = [];
  let release: () => void = () => undefined;
  const client = {
    request: (req: { body?: unknown }) => {
      sent.push(req.body);
      return new Promise((resolve) => (release = () => resolve({ statusCode: 200, body: {} })));
    },
  } as unknown as ApiClient;
  const sm = createApiStatusManager({ client, base: createStatusManager(), retryMs: 10 });
  try {
    const pod = { metadata: { name: 'p', namespace: 's', uid: 'u1' }, spec: { containers: [] } } as Pod;
    const status = { phase: 'Running' as const };
    sm.setPodStatus(pod, status);
    assert.equal(sent.length, 1, 'the first status is patched at once');
    sm.setPodStatus(pod, { ...status });
    release();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(sent.length, 1, 'the same status, set during the patch, is not sent again');
    sm.setPodStatus(pod, { phase: 'Succeeded' });
    await new Promise((r) => setTimeout(r, 10));
    release();
    assert.equal(sent.length, 2, 'a changed status is');
  } finally {
    sm.stop();
  }
});

/** A client that answers every request with 200 and records it. */
function recordingClient(): { sent: Array<{ method: string }>; client: ApiClient } {
  const sent: Array<{ method: string }> = [];
  const client = {
    request: async (req: { method: string }) => {
      sent.push(req);
      return { statusCode: 200, body: {} };
    },
  } as unknown as ApiClient;
  return { sent, client };
}

test('the final delete waits for every container, ephemeral ones too', async () => {
  const { sent, client } = recordingClient();
  const sm = createApiStatusManager({ client, base: createStatusManager(), retryMs: 10 });
  try {
    const pod = {
      metadata: { name: 'p', namespace: 's', uid: 'u2', deletionTimestamp: new Date() },
      spec: { containers: [] },
    } as unknown as Pod;
    const ctr = (running: boolean) => ({
      name: 'c',
      image: 'i',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: running ? { running: {} } : { terminated: { exitCode: 0 } },
    });
    sm.setPodStatus(pod, { phase: 'Failed', containerStatuses: [ctr(false)], ephemeralContainerStatuses: [ctr(true)] });
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      sent.map((r) => r.method),
      ['PATCH'],
      'a running ephemeral container holds the delete',
    );
    sm.setPodStatus(pod, {
      phase: 'Failed',
      containerStatuses: [ctr(false)],
      ephemeralContainerStatuses: [ctr(false)],
    });
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      sent.map((r) => r.method),
      ['PATCH', 'PATCH', 'DELETE'],
    );
  } finally {
    sm.stop();
  }
});

test('the final delete waits until the pod volumes are torn down (upstream PodResourcesAreReclaimed)', async () => {
  const { sent, client } = recordingClient();
  let volumesLeft = true;
  const sm = createApiStatusManager({
    client,
    base: createStatusManager(),
    retryMs: 10,
    podResourcesReclaimed: async (uid) => uid === 'u3' && !volumesLeft,
  });
  try {
    const pod = {
      metadata: { name: 'p', namespace: 's', uid: 'u3', deletionTimestamp: new Date() },
      spec: { containers: [] },
    } as unknown as Pod;
    sm.setPodStatus(pod, { phase: 'Succeeded' });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      sent.map((r) => r.method),
      ['PATCH'],
      'a CSI volume still mounted (its driver down) holds the delete',
    );
    volumesLeft = false;
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      sent.map((r) => r.method),
      ['PATCH', 'DELETE'],
      'retried until the volumes are gone',
    );
  } finally {
    sm.stop();
  }
});
