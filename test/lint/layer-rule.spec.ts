import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint, type Linter } from 'eslint';

/**
 * The layer rule of lib/ (docs/architecture.md: `nest → occurrence → core ← providers`, and the console's port,
 * `nest → operators → core ← providers`), as the repo's
 * own eslint.config.js enforces it: a probe file's one import, linted as if it stood in a layer's folder.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The folders of the layers, each with files to lint. */
const LAYERS = [
  'lib/core/provider/',
  'lib/core/task/',
  'lib/core/executor/',
  'lib/occurrence/',
  'lib/operators/',
  'lib/providers/redis/',
  'lib/providers/in-memory/',
  'lib/providers/postgres/',
  'lib/nest/',
  'lib/dashboard/',
  'lib/provider-tests/',
  'lib/cli/',
  'lib/testing/',
];

/** What every layer-rule message ends with: where the layers are explained. */
const WHY = '(docs/architecture.md)';

let eslint: ESLint;
beforeAll(() => {
  // The probes exist only as text, which TypeScript's project service cannot see; the layer rule needs no types.
  // Only the layer rule runs: every other rule is `npm run lint`'s, and would cost this spec its CPU.
  eslint = new ESLint({
    cwd: REPO,
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    overrideConfig: {
      files: ['lib/**/*.ts'],
      languageOptions: { parserOptions: { projectService: false } },
      rules: {
        '@typescript-eslint/no-floating-promises': 'off',
        '@typescript-eslint/no-misused-promises': 'off',
        '@typescript-eslint/switch-exhaustiveness-check': 'off',
      },
    },
  });
});

/** The messages ESLint gives a file `path` (from the repo's root) whose only code imports `specifier`. */
async function lintImport(path: string, specifier: string): Promise<Linter.LintMessage[]> {
  const code = `import { probe } from '${specifier}';\n\nexport const imported = probe;\n`;
  const [result] = await eslint.lintText(code, { filePath: `${REPO}${path}` });
  return result.messages;
}

describe('the layer rule of lib/', () => {
  it.each([
    ['lib/core/probe.ts', '@nestjs/common'],
    ['lib/core/provider/probe.ts', '../task/x.js'],
    ['lib/core/provider/probe.ts', '../executor/x.js'],
    ['lib/core/provider/probe.ts', '../../nest/x.js'],
    ['lib/core/task/probe.ts', '../executor/x.js'],
    ['lib/core/task/probe.ts', '../../operators/x.js'],
    ['lib/core/probe.ts', 'ioredis'],
    ['lib/core/probe.ts', '../nest/x.js'],
    ['lib/core/probe.ts', '../occurrence/x.js'],
    ['lib/core/probe.ts', '../providers/redis/x.js'],
    ['lib/core/probe.ts', '../operators/x.js'],
    ['lib/occurrence/probe.ts', '../operators/x.js'],
    ['lib/operators/probe.ts', '@nestjs/common'],
    ['lib/operators/probe.ts', 'ioredis'],
    ['lib/operators/probe.ts', '../nest/x.js'],
    ['lib/operators/probe.ts', '../occurrence/x.js'],
    ['lib/operators/probe.ts', '../providers/redis/x.js'],
    ['lib/operators/probe.ts', '../providers/in-memory/x.js'],
    ['lib/nest/probe.ts', '../providers/redis/x.js'],
    ['lib/nest/probe.ts', 'ioredis'],
    ['lib/dashboard/probe.ts', '../providers/redis/x.js'],
    ['lib/providers/redis/probe.ts', '../../nest/x.js'],
    ['lib/occurrence/probe.ts', '../nest/x.js'],
    ['lib/occurrence/probe.ts', '../providers/x.js'],
    ['lib/providers/in-memory/probe.ts', '../redis/x.js'],
    ['lib/providers/in-memory/probe.ts', 'ioredis'],
    ['lib/providers/redis/probe.ts', '../../occurrence/x.js'],
    ['lib/providers/redis/probe.ts', '../postgres/x.js'],
    ['lib/providers/postgres/probe.ts', '../redis/x.js'],
    ['lib/providers/postgres/probe.ts', 'ioredis'],
    ['lib/nest/probe.ts', 'pg'],
    ['lib/index.ts', './providers/postgres/index.js'],
    ['lib/core/probe.ts', 'pg'],
    ['lib/nest/probe.ts', '../provider-tests/index.js'],
    ['lib/index.ts', './provider-tests/index.js'],
    ['lib/provider-tests/probe.ts', '../providers/in-memory/x.js'],
    ['lib/provider-tests/probe.ts', '@nestjs/common'],
    ['lib/provider-tests/probe.ts', 'vitest'],
    ['lib/provider-tests/probe.ts', 'node:test'],
    // The CLI loads pg (through the PostgreSQL connection) only by import(), for --postgres.
    ['lib/cli/probe.ts', 'pg'],
    ['lib/cli/probe.ts', '../providers/postgres/postgres-cli-connection.js'],
    ['lib/nest/probe.ts', '../testing/x.js'],
    ['lib/index.ts', './testing/index.js'],
    ['lib/testing/probe.ts', '../providers/redis/x.js'],
    ['lib/testing/probe.ts', 'ioredis'],
    ['lib/testing/probe.ts', '../dashboard/x.js'],
  ])('fails the lint when %s imports %s', async (path, specifier) => {
    const messages = await lintImport(path, specifier);

    expect(messages).toEqual([
      expect.objectContaining({
        ruleId: 'no-restricted-imports',
        severity: 2,
        message: expect.stringContaining(`'${specifier}' import is restricted`),
      }),
    ]);
    expect(messages[0].message).toContain(WHY);
  });

  it.each([
    ['lib/nest/probe.ts', '../core/x.js'],
    ['lib/nest/probe.ts', '../occurrence/x.js'],
    ['lib/occurrence/probe.ts', '../core/x.js'],
    ['lib/providers/redis/probe.ts', '../../core/x.js'],
    ['lib/providers/redis/probe.ts', 'ioredis'],
    ['lib/providers/postgres/probe.ts', 'pg'],
    ['lib/providers/postgres/probe.ts', '../../core/x.js'],
    ['lib/operators/probe.ts', '../core/x.js'],
    ['lib/core/executor/probe.ts', '../task/x.js'],
    ['lib/core/executor/probe.ts', '../provider/x.js'],
    ['lib/core/task/probe.ts', '../provider/x.js'],
    ['lib/nest/probe.ts', '../operators/x.js'],
    ['lib/dashboard/probe.ts', '../operators/x.js'],
    ['lib/providers/redis/probe.ts', '../../operators/x.js'],
    ['lib/providers/in-memory/probe.ts', '../../operators/x.js'],
    // The PostgreSQL defaults: constants, no pg.
    ['lib/cli/probe.ts', '../providers/postgres/postgres-options.js'],
    ['lib/testing/probe.ts', '../nest/x.js'],
    ['lib/testing/probe.ts', '../providers/in-memory/x.js'],
    // The wiring of the `redis:` option builds the default provider.
    ['lib/nest/redis-option.ts', '../providers/redis/x.js'],
    ['lib/provider-tests/probe.ts', '../core/provider/x.js'],
    ['lib/provider-tests/probe.ts', 'node:assert'],
  ])('lets %s import %s', async (path, specifier) => {
    expect(await lintImport(path, specifier)).toEqual([]);
  });

  // `npm run lint` applies the rule to every file of lib/; here, that it covers a file in every layer's folder.
  it.each(LAYERS)('applies to the files of %s', async (folder) => {
    const [file] = readdirSync(`${REPO}${folder}`).filter((name) => name.endsWith('.ts'));
    expect(await eslint.isPathIgnored(`${REPO}${folder}${file}`)).toBe(false);
    const config = (await eslint.calculateConfigForFile(`${REPO}${folder}${file}`)) as Linter.Config;
    expect(config.rules?.['no-restricted-imports']).toEqual(expect.arrayContaining([expect.anything()]));
  });
});
