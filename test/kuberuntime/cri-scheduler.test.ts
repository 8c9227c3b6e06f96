// The CRI start scheduler (src/kuberuntime/cri-scheduler.ts): the bound, the order (restarts,
// then pods in the order they first queued, then call order), release, cancellation, failures.
// Calls are fakes that finish when the test says so; no timing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createCriStartScheduler,
  type CriStartScheduler,
  type StartClass,
} from '../../src/kuberuntime/cri-scheduler.js';

/** A call that records when it starts and finishes when finish() is called. */
class Calls {
  readonly started: string[] = [];
  private readonly pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();

  constructor(private readonly s: CriStartScheduler) {}

  run(pod: string, cls: StartClass, name: string, signal?: AbortSignal): Promise<string> {
    return this.s.run(
      pod,
      cls,
      () =>
        new Promise<string>((resolve, reject) => {
          this.started.push(name);
          this.pending.set(name, { resolve: () => resolve(name), reject });
        }),
      signal,
    );
  }

  finish(name: string): void {
    this.pending.get(name)!.resolve();
    this.pending.delete(name);
  }

  fail(name: string): void {
    this.pending.get(name)!.reject(new Error(`${name} failed`));
    this.pending.delete(name);
  }
}

const settle = () => new Promise((r) => setImmediate(r));

describe('CRI start scheduler', () => {
  it('runs at most limit calls at once', async () => {
    const s = createCriStartScheduler(2);
    const c = new Calls(s);
    const all = ['a', 'b', 'c', 'd', 'e'].map((p) => c.run(p, 'new', p));
    await settle();
    assert.deepEqual(c.started, ['a', 'b']);
    assert.deepEqual(s.stats(), { running: 2, waiting: 3 });
    c.finish('a');
    await settle();
    assert.deepEqual(c.started, ['a', 'b', 'c']);
    for (const n of ['b', 'c']) c.finish(n);
    await settle();
    for (const n of ['d', 'e']) c.finish(n);
    assert.deepEqual(await Promise.all(all), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(s.stats(), { running: 0, waiting: 0 });
  });

  it('a pod that got its sandbox gets its containers before later pods get their sandboxes', async () => {
    const s = createCriStartScheduler(1);
    const c = new Calls(s);
    // Pods A, B, C queue their sandboxes in that order.
    const sandboxes = ['A', 'B', 'C'].map((p) => c.run(p, 'new', `${p}:sandbox`));
    await settle();
    c.finish('A:sandbox');
    await sandboxes[0];
    await settle();
    // The freed slot went to B (A had nothing queued yet). A's container call is queued after
    // C's sandbox call, and still gets the next slot.
    const aContainer = c.run('A', 'new', 'A:create');
    await settle();
    assert.deepEqual(c.started, ['A:sandbox', 'B:sandbox']);
    c.finish('B:sandbox');
    await settle();
    assert.deepEqual(c.started, ['A:sandbox', 'B:sandbox', 'A:create']);
    c.finish('A:create');
    await aContainer;
    await settle();
    c.finish('C:sandbox');
    await Promise.all(sandboxes);
    assert.deepEqual(c.started, ['A:sandbox', 'B:sandbox', 'A:create', 'C:sandbox']);
  });

  it('restarts of running pods go ahead of new pods', async () => {
    const s = createCriStartScheduler(1);
    const c = new Calls(s);
    const first = c.run('new-0', 'new', 'new-0');
    const queued = [c.run('new-1', 'new', 'new-1'), c.run('new-2', 'new', 'new-2')];
    const restart = c.run('old', 'restart', 'old:start');
    await settle();
    c.finish('new-0');
    await first;
    await settle();
    assert.deepEqual(c.started, ['new-0', 'old:start']);
    c.finish('old:start');
    await restart;
    await settle();
    c.finish('new-1');
    await settle();
    c.finish('new-2');
    await Promise.all(queued);
    assert.deepEqual(c.started, ['new-0', 'old:start', 'new-1', 'new-2']);
  });

  it('release gives up the place in line: the next sync of the pod queues anew', async () => {
    const s = createCriStartScheduler(1);
    const c = new Calls(s);
    const a1 = c.run('A', 'new', 'A:1');
    await settle();
    const b = c.run('B', 'new', 'B:1');
    c.finish('A:1');
    await a1;
    s.release('A');
    const a2 = c.run('A', 'new', 'A:2'); // queued after B now
    await settle();
    assert.deepEqual(c.started, ['A:1', 'B:1']);
    c.finish('B:1');
    await b;
    await settle();
    c.finish('A:2');
    await a2;
    assert.deepEqual(c.started, ['A:1', 'B:1', 'A:2']);
  });

  it('a call cancelled while it waits leaves the line without taking a slot; a failed call frees its slot', async () => {
    const s = createCriStartScheduler(1);
    const c = new Calls(s);
    const running = c.run('A', 'new', 'A');
    const ac = new AbortController();
    const cancelled = c.run('B', 'new', 'B', ac.signal);
    const later = c.run('C', 'new', 'C');
    await settle();
    ac.abort(new Error('pod deleted'));
    await assert.rejects(cancelled, /pod deleted/);
    assert.deepEqual(s.stats(), { running: 1, waiting: 1 });
    c.fail('A');
    await assert.rejects(running, /A failed/);
    await settle();
    assert.deepEqual(c.started, ['A', 'C'], 'B never ran');
    c.finish('C');
    await later;
    assert.deepEqual(s.stats(), { running: 0, waiting: 0 });
    await assert.rejects(c.run('D', 'new', 'D', ac.signal), /pod deleted/, 'an aborted signal is refused at once');
  });

  it('a limit of 0 is no bound (upstream: every worker calls the runtime at once)', async () => {
    const c = new Calls(createCriStartScheduler(0));
    const all = ['a', 'b', 'c'].map((p) => c.run(p, 'new', p));
    await settle();
    assert.deepEqual(c.started, ['a', 'b', 'c']);
    for (const n of ['a', 'b', 'c']) c.finish(n);
    await Promise.all(all);
  });
});
