/** $(VAR) expansion (upstream third_party/forked/golang/expansion). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expand, mappingFor } from '../../src/fieldpath/index.js';

describe('expand (upstream expansion semantics)', () => {
  const m = mappingFor(
    new Map([
      ['VAR_A', 'A'],
      ['VAR_B', 'B'],
      ['EMPTY', ''],
    ]),
  );
  const table: [string, string][] = [
    ['$(VAR_A)', 'A'],
    ['___$(VAR_B)___', '___B___'],
    ['$(VAR_A)-$(VAR_B)', 'A-B'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$$(VAR_A)', '$(VAR_A)'],
    ['$$$(VAR_A)', '$A'],
    ['$(EMPTY)x', 'x'],
    ['$(VAR_A', '$(VAR_A'],
    ['$VAR_A', '$VAR_A'],
    ['foo$', 'foo$'],
    ['$', '$'],
    ['$()', '$()'],
    ['no vars', 'no vars'],
    ['$(VAR_A)$(VAR_A)', 'AA'],
  ];
  for (const [input, want] of table)
    it(`${JSON.stringify(input)} → ${JSON.stringify(want)}`, () => assert.equal(expand(input, m), want));
});
