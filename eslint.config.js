import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const IO = [
  'node:fs*',
  'node:net',
  'node:http*',
  'node:tls',
  'node:dns*',
  'pg',
  'kysely',
  'fastify',
  '@fastify/*',
  'undici',
  'nodemailer',
  '@electric-sql/*',
];

/** One layer's import boundary: the patterns it may not import, with the reason shown on a breach. */
const layer = (files, message, group) => [
  { files: [files], rules: { 'no-restricted-imports': ['error', { patterns: [{ group, message }] }] } },
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'packages/*/dist/',
      'data/',
      'node_modules/',
      'coverage/',
      'web/dist/',
      'test-artifacts/',
      'bench/tmp/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // The packages' build and vector scripts are plain Node ES modules.
  {
    files: ['packages/*/scripts/*.mjs'],
    languageOptions: { globals: { Buffer: 'readonly', URL: 'readonly', console: 'readonly', process: 'readonly' } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // Every arrow points down: domain ← app ← infra, http, worker ← main ← cli (docs/architecture.md).
  ...layer('src/domain/**/*.ts', 'The domain is pure: no I/O, no other layer', [
    '**/app/**',
    '**/infra/**',
    '**/http/**',
    '**/worker/**',
    '**/cli/**',
    '**/config/**',
    '**/main.js',
    ...IO,
  ]),
  ...layer('src/app/**/*.ts', 'Use cases reach the outside world only through their ports', [
    '**/infra/**',
    '**/http/**',
    '**/worker/**',
    '**/cli/**',
    '**/config/**',
    '**/main.js',
    ...IO,
  ]),
  ...layer('src/infra/**/*.ts', 'Infrastructure implements ports; it knows no caller', [
    '**/http/**',
    '**/worker/**',
    '**/cli/**',
    '**/main.js',
    'fastify',
    '@fastify/*',
  ]),
  ...layer('src/http/**/*.ts', 'Routes call use cases, never the database or the sender', [
    '**/infra/**',
    '**/worker/**',
    '**/cli/**',
    '**/main.js',
    'pg',
    'kysely',
    'undici',
  ]),
  ...layer('src/worker/**/*.ts', 'The worker loops call use cases', [
    '**/infra/**',
    '**/http/**',
    '**/cli/**',
    '**/main.js',
    'pg',
    'kysely',
    'fastify',
  ]),
  ...layer('src/cli/**/*.ts', 'The CLI reaches infrastructure only through main.ts', [
    '**/infra/**',
    '**/http/**',
    '**/worker/**',
    'pg',
    'kysely',
    'fastify',
  ]),
);
