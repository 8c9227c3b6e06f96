/**
 * spec.runtimeClassName → RunPodSandboxRequest.runtime_handler, against the in-memory CRI fake:
 * no class is the default handler (''), standalone takes the name as the handler, a lookup
 * (API server mode) maps it, and a class the lookup does not know creates no sandbox, fails the
 * sync and records FailedCreatePodSandBox on the pod (upstream kuberuntime_manager.go SyncPod,
 * createPodSandbox with runtimeClassManager.LookupRuntimeHandler).
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import { KubeletError } from '../../src/errors.js';
import { createRecorder, type Recorder } from '../../src/events/index.js';
import { runtimeHandlerFor, type RuntimeClassLookup } from '../../src/kuberuntime/runtime-class.js';
import { FakeRuntimeService } from '../fakes/fake-runtime-service.js';
import { fakeRuntimeManager, makePod } from './helpers.js';
import { testTempDir } from '../support/temp-dir.js';

let dir: string;
let fake: FakeRuntimeService;
let recorder: Recorder;

/** A lookup like API server mode's: one known class, `kata` → handler `kata-qemu`. */
const classes: RuntimeClassLookup = {
  lookup(name) {
    if (name === 'kata') return { handler: 'kata-qemu' };
    throw new KubeletError('KTS_ERR_SANDBOX', `runtimeclasses.node.k8s.io "${name}" not found`);
  },
};

function podWithClass(runtimeClassName?: string): Pod {
  const pod = makePod();
  if (runtimeClassName) pod.spec!.runtimeClassName = runtimeClassName;
  return pod;
}

async function sync(pod: Pod, runtimeClasses?: RuntimeClassLookup) {
  const rt = fakeRuntimeManager(fake, dir, recorder, { runtimeClasses });
  const status = await rt.getPodStatus(pod.metadata!.uid!, pod.metadata!.name!, pod.metadata!.namespace!);
  return rt.syncPod(pod, status);
}

const handlers = () => fake.listPodSandbox().then((l) => l.map((s) => s.runtimeHandler));

before(async () => {
  dir = testTempDir('runtime-class-test-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake = new FakeRuntimeService();
  fake.addImage('busybox:1.36');
  recorder = createRecorder();
});

describe('runtimeHandlerFor', () => {
  it('no class: the default handler; standalone: the name itself; a lookup: its handler', () => {
    assert.equal(runtimeHandlerFor(podWithClass(), classes), '');
    assert.equal(runtimeHandlerFor(podWithClass('alt'), undefined), 'alt');
    assert.equal(runtimeHandlerFor(podWithClass('kata'), classes), 'kata-qemu');
    assert.throws(
      () => runtimeHandlerFor(podWithClass('gone'), classes),
      /runtimeclasses.node.k8s.io "gone" not found/,
    );
  });
});

describe('syncPod with a RuntimeClass', () => {
  it('passes the handler to RunPodSandbox (standalone: the class name)', async () => {
    const result = await sync(podWithClass('alt'));
    assert.equal(result.error, undefined);
    assert.deepEqual(await handlers(), ['alt']);
  });

  it('passes the handler the lookup maps the class to', async () => {
    await sync(podWithClass('kata'), classes);
    assert.deepEqual(await handlers(), ['kata-qemu']);
  });

  it('a pod without a class gets the default handler', async () => {
    await sync(podWithClass(), classes);
    assert.deepEqual(await handlers(), ['']);
  });

  it('an unknown class: no sandbox, no container, the sync fails, FailedCreatePodSandBox on the pod', async () => {
    const result = await sync(podWithClass('gone'), classes);
    assert.ok(result.error instanceof KubeletError);
    assert.equal(result.error.code, 'KTS_ERR_SANDBOX');
    assert.equal(result.error.message, 'Failed to create pod sandbox: runtimeclasses.node.k8s.io "gone" not found');
    assert.equal(fake.calls.filter((c) => c === 'runPodSandbox' || c === 'createContainer').length, 0);
    const events = recorder.recent().filter((e) => e.reason === 'FailedCreatePodSandBox');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'Warning');
    assert.equal(events[0]!.involvedObject.fieldPath, undefined, 'a pod-scoped event');
    assert.equal(events[0]!.message, result.error.message);
  });
});
