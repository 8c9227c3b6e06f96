import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../src/errors.js';

// Every error code used in the sources is documented in ERROR_CODES (and so in the README table).
test('every KTS_ERR_ code used in src/ is documented', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
  const used = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/KTS_ERR_[A-Z_]+/g)) used.add(m[0]);
    }
  };
  walk(root);
  for (const code of used) assert.ok(code in ERROR_CODES, `${code} is used but not in ERROR_CODES`);
  const readme = readFileSync(join(root, '..', 'README.md'), 'utf8');
  for (const code of Object.keys(ERROR_CODES)) assert.ok(readme.includes(code), `${code} is not documented in README.md`);
});
