import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, formatGoDuration } from '../../src/util/backoff.js';
import { FakeClock } from '../kuberuntime/helpers.js';

const S = 1000;

describe('Backoff (flowcontrol semantics)', () => {
  it('unknown key: not in back-off, delay 0', () => {
    const b = new Backoff(new FakeClock());
    assert.equal(b.isInBackOffSince('k', 0), false);
    assert.equal(b.get('k'), 0);
  });

  it('doubles from 10 s to the 5 min cap', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next('k', clock.now());
      seen.push(b.get('k'));
      clock.advance(b.get('k'));
    }
    assert.deepEqual(
      seen.map((ms) => ms / S),
      [10, 20, 40, 80, 160, 300, 300, 300],
    );
  });

  it('crash loop timeline: immediate first restart, then waits measured from the exit', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    // exit #1 at t=0: no entry, restart at once and record it.
    assert.equal(b.isInBackOffSince('k', 0), false);
    b.next('k', 0);
    // exit #2 at t=1s: wait 10 s from the exit.
    clock.t = 1 * S;
    assert.equal(b.isInBackOffSince('k', 1 * S), true);
    clock.t = 10.999 * S;
    assert.equal(b.isInBackOffSince('k', 1 * S), true);
    clock.t = 11 * S;
    assert.equal(b.isInBackOffSince('k', 1 * S), false);
    b.next('k', 1 * S);
    assert.equal(b.get('k'), 20 * S);
    // exit #3 at t=12s: wait 20 s.
    clock.t = 31 * S;
    assert.equal(b.isInBackOffSince('k', 12 * S), true);
    clock.t = 32 * S;
    assert.equal(b.isInBackOffSince('k', 12 * S), false);
  });

  it('resets after running cleanly for more than 2×max (10 minutes)', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    for (let i = 0; i < 5; i++) b.next('k', clock.now());
    assert.equal(b.get('k'), 160 * S);
    // The container exits 10 min + 1 ms after the last restart: stale entry, not in back-off,
    // and the next restart starts over at 10 s.
    const exit = 10 * 60 * S + 1;
    clock.t = exit + 1;
    assert.equal(b.isInBackOffSince('k', exit), false);
    b.next('k', exit);
    assert.equal(b.get('k'), 10 * S);
  });

  it('exactly 10 minutes is not yet a reset', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    b.next('k', 0);
    b.next('k', 0);
    b.next('k', 10 * 60 * S);
    assert.equal(b.get('k'), 40 * S);
  });

  it('since-update check for image pulls, reset and gc', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    b.next('img', clock.now());
    assert.equal(b.isInBackOffSinceUpdate('img'), true);
    clock.advance(10 * S);
    assert.equal(b.isInBackOffSinceUpdate('img'), false);
    b.reset('img');
    assert.equal(b.size, 0);
    b.next('x', clock.now());
    clock.advance(10 * 60 * S + 1);
    b.gc();
    assert.equal(b.size, 0);
  });

  it('keys are independent', () => {
    const clock = new FakeClock(0);
    const b = new Backoff(clock);
    b.next('a', 0);
    assert.equal(b.isInBackOffSince('b', 0), false);
  });
});

describe('formatGoDuration', () => {
  const table: [number, string][] = [
    [10 * S, '10s'],
    [20 * S, '20s'],
    [40 * S, '40s'],
    [80 * S, '1m20s'],
    [160 * S, '2m40s'],
    [300 * S, '5m0s'],
    [3600 * S, '1h0m0s'],
    [1500, '1.5s'],
    [0, '0s'],
    [250, '250ms'],
  ];
  for (const [ms, want] of table) it(`${ms} ms → ${want}`, () => assert.equal(formatGoDuration(ms), want));
});
