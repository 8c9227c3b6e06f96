import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseIntValue,
  parseMilliValue,
  parseQuantity,
  QuantityError,
  tryParseQuantity,
} from '../../src/util/quantity.js';

describe('parseQuantity', () => {
  const good: Array<[string | number, number]> = [
    ['100m', 0.1],
    ['0.5', 0.5],
    ['1', 1],
    ['64Mi', 64 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['1G', 1e9],
    ['1k', 1000],
    ['1e3', 1000],
    ['1E3', 1000],
    ['2e-3', 0.002],
    ['.5', 0.5],
    ['5.', 5],
    ['+1', 1],
    ['-1', -1],
    ['100n', 1e-7],
    ['1u', 1e-6],
    ['1Ki', 1024],
    ['1Ti', 2 ** 40],
    [3, 3],
  ];
  for (const [s, want] of good) {
    it(`${JSON.stringify(s)} = ${want}`, () => assert.ok(Math.abs(parseQuantity(s) - want) <= Math.abs(want) * 1e-12));
  }

  for (const bad of ['', ' 1', '1 ', 'x', '1K', '1MB', '1Mi2', '1e', 'e3', '--1', '1.2.3', 'Mi']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(tryParseQuantity(bad), undefined);
      assert.throws(
        () => parseQuantity(bad),
        (err: unknown) =>
          err instanceof QuantityError && err.code === 'KTS_ERR_MANIFEST' && err.message.includes(JSON.stringify(bad)),
      );
    });
  }

  it('parseMilliValue and parseIntValue round up like Quantity.MilliValue and Quantity.Value', () => {
    assert.equal(parseMilliValue('100m'), 100);
    assert.equal(parseMilliValue('0.5'), 500);
    assert.equal(parseMilliValue('2'), 2000);
    assert.equal(parseMilliValue('0.1'), 100);
    assert.equal(parseMilliValue('0.3'), 300);
    assert.equal(parseMilliValue('1n'), 1);
    assert.equal(parseIntValue('100m'), 1);
    assert.equal(parseIntValue('64Mi'), 67108864);
  });
});
