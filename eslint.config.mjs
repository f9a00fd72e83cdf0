// Lint gate run by `npm test` (after the typecheck). Syntax-level rules only:
// the type-checked typescript-eslint presets are deliberately not used, to keep it fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const rules = {
  'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
  'no-constant-condition': ['error', { checkLoops: false }],
  eqeqeq: ['error', 'smart'],
  'no-var': 'error',
  'prefer-const': 'error',
  'no-empty': 'error', // an empty catch needs a comment saying why
  // Off: the hits are intentional (control-character escaping, JSON indentation in test regexes).
  'no-control-regex': 'off',
  'no-regex-spaces': 'off',
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'build/',
      'cmake-build/',
      'node_modules/',
      'native/',
      'prebuilds/',
      'lib/query/generated/',
      '**/*.generated.ts',
      'bench/data/',
      'bench/.scratch/',
      '.tmp/',
      'docs/api/',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      ...rules,
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': rules['no-unused-vars'],
      // `any` is used deliberately at the native/JSON boundaries.
      '@typescript-eslint/no-explicit-any': 'off',
      // require() is deliberate where it is used: package.json in the CJS-only CLI, the addon in tests.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: globals.node },
    rules,
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules,
  },
);
