// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/ and the direction of their imports: nest → occurrence → core ← providers; the optional
 * status page (lib/dashboard, its own package entry) builds on them all, and nothing imports it.
 * Each entry forbids a folder's files to import what sits above it (or beside it, for the providers).
 */
const layer = (files, forbidden, why) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: forbidden.map((regex) => ({ regex, message: `${why} (README, Architecture)` })) },
    ],
  },
});
const NEST = '^@nestjs/';
const ours = (folder) => `^\\.\\.?/(\\.\\./)*${folder}/`;
/** The PostgreSQL provider (its own entry point, nest-scheduler-lock/postgres) and `pg`, the peer only it loads. */
const POSTGRES = ['^pg$', ours('providers/postgres'), ours('postgres')];
/**
 * Optional entry points (lib/terminus, lib/opentelemetry, lib/dashboard, lib/providers/postgres) and the
 * optional peers only they load: nothing the main entry loads may import them.
 */
const INTEGRATIONS = [
  '^@nestjs/terminus',
  '^@opentelemetry/',
  ours('terminus'),
  ours('opentelemetry'),
  ours('dashboard'),
  ...POSTGRES,
];

export default tseslint.config(
  { ignores: ['dist/', '.build/', 'node_modules/', 'test/package/fixtures/', 'test/types/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // Unused values are compile errors already (noUnusedLocals / noUnusedParameters).
      '@typescript-eslint/no-unused-vars': 'off',
      // Nest's reflection APIs take and return plain `Function`s.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Real Nest modules are empty classes with decorators.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    // Prettier wraps code at 120 columns but leaves strings and comments as they are; a file does one thing:
    // none of lib/ grows past 250 lines.
    files: ['lib/**/*.ts'],
    rules: { 'max-len': ['error', { code: 120, ignoreUrls: true }], 'max-lines': ['error', { max: 250 }] },
  },
  layer(
    ['lib/nest/**', 'lib/index.ts'],
    INTEGRATIONS,
    'the module never loads an optional entry point (terminus, opentelemetry, dashboard): apps without its peer import the main entry',
  ),
  layer(
    ['lib/opentelemetry/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), ours('providers'), ours('terminus'), ours('dashboard')],
    'the OpenTelemetry integration builds on lib/core only (a run instrumentation and lock events)',
  ),
  layer(
    ['lib/terminus/**'],
    ['^ioredis$', ours('providers'), ours('opentelemetry'), '^@opentelemetry/', ours('dashboard')],
    'the health indicator reads the module and lib/core, never a provider directly',
  ),
  layer(
    ['lib/core/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), ours('providers'), ...INTEGRATIONS],
    'lib/core is framework-free and knows no layer above it',
  ),
  layer(
    ['lib/occurrence/**'],
    [NEST, '^ioredis$', ours('nest'), ours('providers'), ...INTEGRATIONS],
    'lib/occurrence builds on lib/core only',
  ),
  layer(
    ['lib/providers/**'],
    [NEST, ours('nest'), ours('occurrence'), ...INTEGRATIONS],
    'providers implement lib/core interfaces and nothing else',
  ),
  layer(
    ['lib/providers/in-memory/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), '^\\.\\./redis/', ...INTEGRATIONS],
    'the in-memory provider implements lib/core interfaces and needs no Redis',
  ),
  layer(
    ['lib/providers/postgres/**'],
    [
      NEST,
      '^ioredis$',
      ours('nest'),
      ours('occurrence'),
      '^\\.\\./redis/',
      ...INTEGRATIONS.filter((i) => !POSTGRES.includes(i)),
    ],
    'the PostgreSQL provider implements lib/core interfaces with pg, and needs no Redis',
  ),
  layer(
    ['lib/cli/**'],
    [NEST, ours('nest'), ours('occurrence'), ...INTEGRATIONS],
    'the CLI reads the cluster through lib/core and lib/providers, without Nest or an app',
  ),
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly' },
    },
  },
);
