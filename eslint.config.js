// ESLint: a small set of rules that catch bugs or hold our style, cheap enough to run on every
// diff (`npm run lint`, and a step of scripts/test.sh): about 10 s on a 2-core machine.
// No type-checked rules: with the type information they need, no-floating-promises and
// no-misused-promises took 76 s and 1.2 GB, found nothing in src/, and flagged 1,100 node:test
// it()/describe() calls in test/. Formatting is prettier's job (prettier.config.js), not ESLint's.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'build/', 'build-asan/', 'node_modules/', 'native/', '.state/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // More than four positional parameters: take an options object (named at the call site).
      '@typescript-eslint/max-params': ['error', { max: 4 }],
      // `_name` marks a parameter or binding kept on purpose (a callback's shape, a destructured rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `== null` is the one loose comparison we keep: it means "null or undefined".
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Type-only imports are erased: they never load a module (and never make an import loop).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
      'prefer-const': ['error', { destructuring: 'all' }],
      'no-var': 'error',
    },
  },
  {
    // Plain JavaScript (scripts, the bin): no types to import.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    rules: { '@typescript-eslint/consistent-type-imports': 'off' },
  },
);
