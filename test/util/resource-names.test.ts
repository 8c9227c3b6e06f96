/**
 * Upstream pkg/apis/core/v1/helper/helpers_test.go TestIsExtendedResourceName / TestIsNativeResource.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isExtendedResourceName, isNativeResource } from '../../src/util/resource-names.js';

describe('isExtendedResourceName', () => {
  const rows: Array<[string, boolean]> = [
    ['foo.com/bar', true],
    ['example.com/dev', true],
    ['nvidia.com/gpu', true],
    ['cpu', false],
    ['memory', false],
    ['hugepages-2Mi', false],
    ['kubernetes.io/foo', false],
    ['sub.kubernetes.io/foo', false],
    ['requests.foo.com/bar', false],
    ['foo.com/-bar', false],
    ['Foo.com/bar', false],
    ['foo.com/' + 'a'.repeat(63), true],
    ['foo.com/' + 'a'.repeat(64), false],
    ['a/b/c', false],
    ['', false],
  ];
  for (const [name, want] of rows)
    it(`${JSON.stringify(name)} → ${want}`, () => assert.equal(isExtendedResourceName(name), want));
});

describe('isNativeResource', () => {
  const rows: Array<[string, boolean]> = [
    ['cpu', true],
    ['kubernetes.io/foo', true],
    ['foo.kubernetes.io/bar', true],
    ['foo.com/bar', false],
  ];
  for (const [name, want] of rows) it(`${name} → ${want}`, () => assert.equal(isNativeResource(name), want));
});
