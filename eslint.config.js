// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * The layers of lib/ and the direction of their imports: nest → occurrence → core ← providers, and the operator
 * console's port, nest → operators → core ← providers (a provider implements it); the optional status page
 * (lib/dashboard, its own package entry) builds on them all, and nothing imports it.
 * Each entry forbids a folder's files to import what sits above it (or beside it, for the providers); a layer
 * may give several groups of patterns, each with its own reason.
 */
const layer = (files, forbidden, why, ...moreGroups) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [[forbidden, why], ...moreGroups].flatMap(([patterns, reason]) =>
          patterns.map((regex) => ({ regex, message: `${reason} (docs/architecture.md)` })),
        ),
      },
    ],
  },
});
const NEST = '^@nestjs/';
const ours = (folder) => `^\\.\\.?/(\\.\\./)*${folder}/`;
/** The PostgreSQL provider (its own entry point, nest-scheduler-lock/postgres) and `pg`, the peer only it loads. */
const POSTGRES = ['^pg$', ours('providers/postgres'), ours('postgres')];
/**
 * Only the wiring of the default Redis provider (the `redis:` option, loaded by import() when it is given) and the
 * options type name a store.
 */
const STORE_WIRING = [
  'lib/nest/redis-option.ts',
  'lib/nest/replica-ack-options.ts',
  'lib/nest/scheduler-lock-module-options.interface.ts',
];
const NO_STORE_CLIENT_WHY =
  'the main and plug-in entries load no store client: Redis is nest-scheduler-lock/redis, as PostgreSQL is /postgres';
const STORES_WHY =
  'only the wiring of the `redis:` option names a store: the rest of the module reads the provider through its abilities and the operator port';
/**
 * Optional entry points (lib/terminus, lib/opentelemetry, lib/dashboard, lib/testing, lib/providers/postgres,
 * lib/provider-tests) and the optional peers only they load: nothing the main entry loads may import them.
 */
const INTEGRATIONS = [
  '^@nestjs/terminus',
  '^@opentelemetry/',
  ours('terminus'),
  ours('opentelemetry'),
  ours('dashboard'),
  ...POSTGRES,
  ours('provider-tests'),
  ours('testing'),
];
/** Test runners: the conformance kit runs under any of them, so it imports none (node:assert instead). */
const TEST_RUNNERS = ['^jest$', '^@jest/', '^vitest', '^@vitest/', '^node:test$', '^mocha$'];

/**
 * lib/core is framework-free and knows no layer above it; inside it, three rooms point one way,
 * executor → task → provider: the provider contract (lib/core/provider), what a task sees (lib/core/task), the
 * executor and its run lifecycle (lib/core/executor).
 */
const coreRooms = (aboveCore) => {
  const why = 'lib/core is framework-free and knows no layer above it';
  const rooms = 'lib/core/provider ← task ← executor: a room never imports one after it';
  return [
    layer(['lib/core/**'], aboveCore, why),
    layer(['lib/core/task/**'], aboveCore, why, [['^\\.\\./executor/'], rooms]),
    layer(['lib/core/provider/**'], aboveCore, why, [['^\\.\\./(task|executor)/'], rooms]),
  ];
};

export default tseslint.config(
  // *.generated.ts: string modules written by scripts/embed-assets.mjs from the .lua / .html sources.
  {
    ignores: [
      'dist/',
      '.build/',
      'docs/public/api/',
      'docs/.vitepress/cache/',
      'docs/.vitepress/dist/',
      'node_modules/',
      'test/package/fixtures/',
      'test/types/fixtures/',
      '**/*.generated.ts',
    ],
  },
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
    // Type-aware rules, on lib/ only (the published code): a promise nobody awaits or catches, a promise where a
    // callback's result is ignored, a switch that misses a member of its union.
    files: ['lib/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default:` is a choice made for the other members; a switch without one must name them all.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // Prettier wraps code at 120 columns but leaves strings and comments as they are; a file does one thing:
    // none of lib/ grows past 250 lines.
    files: ['lib/**/*.ts'],
    rules: { 'max-len': ['error', { code: 120, ignoreUrls: true }], 'max-lines': ['error', { max: 250 }] },
  },
  layer(
    ['lib/nest/**'],
    INTEGRATIONS,
    'the module never loads an optional entry point (terminus, opentelemetry, dashboard, postgres): apps without its peer import the main entry',
  ),
  // One block per file set: a later no-restricted-imports for the same file replaces an earlier one.
  layer(
    ['lib/index.ts'],
    INTEGRATIONS,
    'the module never loads an optional entry point (terminus, opentelemetry, dashboard, postgres): apps without its peer import the main entry',
    [['^ioredis$', ours('providers/redis')], NO_STORE_CLIENT_WHY],
  ),
  layer(['lib/provider/**'], ['^ioredis$', ours('providers/redis')], NO_STORE_CLIENT_WHY),
  {
    ...layer(
      ['lib/nest/**'],
      INTEGRATIONS,
      'the module never loads an optional entry point (terminus, opentelemetry, dashboard, postgres): apps without its peer import the main entry',
      [['^ioredis$', ours('providers')], STORES_WHY],
    ),
    ignores: STORE_WIRING,
  },
  layer(
    ['lib/operators/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), ours('providers'), ours('cli'), ...INTEGRATIONS],
    'lib/operators is the console behind its port: it builds on lib/core only, and stores implement it',
  ),
  layer(
    ['lib/dashboard/**'],
    ['^ioredis$', ours('providers'), ours('cli'), ours('terminus'), ours('opentelemetry')],
    'the status page reads the cluster through SchedulerLockAdmin and lib/operators, never a store directly',
  ),
  layer(
    ['lib/opentelemetry/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), ours('providers'), ours('terminus'), ours('dashboard')],
    'the OpenTelemetry integration builds on lib/core only (a run instrumentation and lock events)',
  ),
  layer(
    ['lib/testing/**'],
    [
      '^ioredis$',
      ours('providers/redis'),
      ours('cli'),
      ours('terminus'),
      ours('opentelemetry'),
      '^@opentelemetry/',
      ours('dashboard'),
    ],
    'the testing kit runs the module on the in-memory store: it imports neither the Redis store nor another entry point',
  ),
  layer(
    ['lib/terminus/**'],
    ['^ioredis$', ours('providers'), ours('opentelemetry'), '^@opentelemetry/', ours('dashboard')],
    'the health indicator reads the module and lib/core, never a provider directly',
  ),
  ...coreRooms([
    NEST,
    '^ioredis$',
    ours('nest'),
    ours('occurrence'),
    ours('operators'),
    ours('providers'),
    ...INTEGRATIONS,
  ]),
  layer(
    ['lib/occurrence/**'],
    [NEST, '^ioredis$', ours('nest'), ours('operators'), ours('providers'), ...INTEGRATIONS],
    'lib/occurrence builds on lib/core only',
  ),
  layer(
    ['lib/providers/**'],
    [NEST, ours('nest'), ours('occurrence'), ...INTEGRATIONS],
    'providers implement lib/core interfaces and the operator port (lib/operators), and nothing else',
  ),
  layer(
    ['lib/providers/in-memory/**'],
    [NEST, '^ioredis$', ours('nest'), ours('occurrence'), '^\\.\\./redis/', ...INTEGRATIONS],
    'the in-memory provider implements lib/core interfaces and the operator port, and needs no Redis',
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
    ['lib/locks-store/**'],
    [NEST, ours('nest'), ours('occurrence'), ours('cli'), ...INTEGRATIONS],
    'the @nestjs/locks store adapts the providers through lib/core, and loads neither Nest nor an optional peer',
  ),
  layer(
    ['lib/provider-tests/**'],
    [
      NEST,
      '^ioredis$',
      ours('nest'),
      ours('occurrence'),
      ours('providers'),
      ours('cli'),
      ...INTEGRATIONS,
      ...TEST_RUNNERS,
    ],
    'the provider conformance kit checks any store through the lib/core contract, under any test runner',
  ),
  layer(
    ['lib/provider-tests/module/**'],
    ['^ioredis$', ours('occurrence'), ours('providers'), ours('cli'), ...INTEGRATIONS, ...TEST_RUNNERS],
    "the kit's module checks run the provider under test in an app with the module, and know no store",
  ),
  layer(
    ['lib/cli/**'],
    [
      NEST,
      ours('nest'),
      ours('occurrence'),
      ...INTEGRATIONS.filter((i) => !POSTGRES.includes(i)),
      '^pg$',
      // The PostgreSQL defaults (constants, no pg) are shared; its connection is loaded by import() alone.
      `${ours('providers/postgres')}(?!postgres-options\\.js$)`,
    ],
    'the CLI reads the cluster through lib/core and lib/providers, without Nest or an app; it loads pg (lib/providers/postgres) only for --postgres, by import()',
  ),
  {
    // Build helpers (scripts/), plain Node ES modules run before anything is compiled.
    files: ['**/*.mjs'],
    languageOptions: { globals: { URL: 'readonly', process: 'readonly', console: 'readonly' } },
  },
  {
    // Jest's plug-ins (test/support): CommonJS, which loads its modules with require().
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
