/**
 * Go's FNV-32a (hash/fnv: the published test vectors), go-spew's byte slices and the UTF-8 path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FNV32A_INIT, fnv32a, fnv32aSpewBytes, fnv32aText, spewBytes } from '../../src/util/go-hash.js';

describe('fnv32a', () => {
  const vectors: Array<[string, number]> = [
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['ab', 0x4d2505ca],
    ['abc', 0x1a47e90b],
  ];
  for (const [text, want] of vectors) it(JSON.stringify(text), () => assert.equal(fnv32a(text), want));

  it('non-ASCII text is hashed as its UTF-8 bytes', () => {
    const bytes = Buffer.from('xé€', 'utf8');
    let h = FNV32A_INIT;
    for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    assert.equal(fnv32a('xé€'), h);
  });

  it("spew's byte slice: fed as its text", () => {
    const bytes = Uint8Array.from([0, 7, 10, 99, 100, 255]);
    assert.equal(spewBytes(bytes), '[0 7 10 99 100 255]');
    assert.equal(fnv32aSpewBytes(FNV32A_INIT, bytes), fnv32aText(FNV32A_INIT, spewBytes(bytes)));
    assert.equal(spewBytes(new Uint8Array()), '[]');
  });
});
