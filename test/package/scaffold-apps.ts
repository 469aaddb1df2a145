import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { deleteKeys, SHARED_REDIS_URL, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { niced, seconds, step } from './commands.js';
import { environmentFor, majorOf, type NodeRuntime } from './node-versions.js';

const run = promisify(execFile);

/**
 * An app as a user has it: a directory of test/package/fixtures that is a scaffold copied as it is (Nest's
 * `nest new`, from the templates of `@nestjs/schematics`: package.json with its Jest block or Vitest, tsconfigs,
 * test configs, the scaffold's own specs), plus what a user adds: `@nestjs/schedule` and `ioredis` in package.json,
 * the module in `src/app.module.ts`, a locked job (`src/report.job.ts`, `src/report.service.ts`), a unit spec
 * (`src/report.job.spec.ts`: the job's service mocked) and an e2e spec (`test/report.e2e-spec.ts`: AppModule
 * booted, the job run under its lock on Redis). Its npm scripts must pass, configs unchanged.
 */
export interface TestedApp {
  /** Its fixture directory, and its name in the output. */
  name: string;
  description: string;
  /**
   * The npm scripts that must pass, in order, each with a text its output must show (the added spec's file, so
   * a run that skipped it does not pass), or several.
   */
  scripts: Array<{ script: string; shows: string | string[] }>;
  /** The lowest Node major the app's test runner loads it on (Nest 12's ESM-only packages in Jest's CommonJS). */
  minimumNode?: number;
}

/** `npm test` runs the unit spec, `npm run test:e2e` the e2e spec, as the scaffold's configs have it. */
const UNIT_AND_E2E = [
  { script: 'test', shows: 'report.job.spec.ts' },
  { script: 'test:e2e', shows: 'report.e2e-spec.ts' },
];

export const TESTED_APPS: TestedApp[] = [
  {
    name: 'nest11-jest',
    description: '`nest new` of @nestjs/schematics 11: CommonJS, Jest + ts-jest, `npm test` and `npm run test:e2e`',
    scripts: UNIT_AND_E2E,
  },
  {
    name: 'nest12-vitest',
    description: '`nest new` of @nestjs/schematics 12 (its default): ESM, Vitest, `npm test` and `npm run test:e2e`',
    scripts: UNIT_AND_E2E,
  },
  {
    name: 'nest12-jest',
    description:
      '`nest new` of @nestjs/schematics 12, its CommonJS option: jest.config.ts, Jest 30 with --experimental-vm-modules',
    scripts: UNIT_AND_E2E,
    // Jest's CommonJS runtime loads the ESM-only @nestjs/common 12 only on Node 24.9+ (require of ES modules).
    minimumNode: 24,
  },
  {
    name: 'provider-kit',
    description:
      "a third party's toy provider over a Map, checked by nest-scheduler-lock/provider-tests from node:test and Vitest; its owner-blind twin fails the owner checks",
    scripts: [
      {
        script: 'test',
        shows: ['MapLockProvider (LockProvider conformance)', 'the kit fails OwnerBlindMapLockProvider on its owner'],
      },
      { script: 'test:vitest', shows: 'map-lock-provider.spec.ts' },
    ],
  },
  {
    name: 'mixed-loading',
    description: 'imports the package in one file and requires it in another: one LockEvents, one identity per export',
    scripts: [{ script: 'test', shows: 'one LockEvents' }],
  },
];

/**
 * Installs the tarball into a copy of `app` under `workDir` (plain `npm install <tarball>`, as a user adds a
 * package), then runs the app's scripts on each of `runtimes` it supports, one runtime after the other, each on a
 * key prefix of its own on the shared Redis. Throws on any failure with what the script printed; returns a summary.
 */
export async function checkTestedApp(
  app: TestedApp,
  paths: { tarball: string; fixtures: string; workDir: string },
  runtimes: NodeRuntime[],
  log: (step: string) => void,
): Promise<string> {
  const dir = join(paths.workDir, app.name);
  await cp(join(paths.fixtures, app.name), dir, { recursive: true });
  let startedAt = performance.now();
  const install = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps=false', paths.tarball];
  await step(`npm install in ${dir}`, () => run('nice', niced('npm', install), { cwd: dir, maxBuffer: 16 << 20 }));
  log(`npm install: ${seconds(startedAt)}`);

  const supported = runtimes.filter((runtime) => majorOf(runtime) >= (app.minimumNode ?? 0));
  if (supported.length === 0) throw new Error(`no Node ${app.minimumNode}+ among ${runtimes.map((r) => r.version)}`);
  const passed: string[] = [];
  for (const runtime of supported) {
    const keyPrefix = uniquePrefix(`package-${app.name}`);
    const env = environmentFor(runtime, { ...process.env, REDIS_URL: SHARED_REDIS_URL, LOCK_KEY_PREFIX: keyPrefix });
    try {
      for (const { script, shows } of app.scripts) {
        startedAt = performance.now();
        const what = `npm run ${script} on Node ${runtime.version} in ${dir}`;
        let output = '';
        await step(what, async () => {
          const printed = await run('npm', ['run', script], { cwd: dir, env, maxBuffer: 16 << 20 });
          output = printed.stdout + printed.stderr;
          return printed;
        });
        const missing = [shows].flat().filter((text) => !output.includes(text));
        if (missing.length > 0) throw new Error(`${what} passed without showing "${missing.join('", "')}":\n${output}`);
        log(`npm run ${script} on Node ${runtime.version}: ${seconds(startedAt)}`);
      }
      passed.push(runtime.version);
    } finally {
      const redis = sharedRedis();
      await deleteKeys(redis, keyPrefix).finally(() => redis.quit());
    }
  }
  return `${await installedVersions(dir)}; ${app.scripts.map(({ script }) => `npm run ${script}`).join(', ')} pass on Node ${passed.join(', ')}`;
}

/** `name version` of the packages that tell the app's kind, as installed. */
async function installedVersions(dir: string): Promise<string> {
  const candidates = ['@nestjs/core', '@nestjs/schedule', 'ioredis', 'typescript', 'jest', 'ts-jest', 'vitest'];
  const versions = await Promise.all(
    candidates.map(async (name) => {
      try {
        const manifest = await readFile(join(dir, 'node_modules', name, 'package.json'), 'utf8');
        return [`${name} ${(JSON.parse(manifest) as { version: string }).version}`];
      } catch {
        return [];
      }
    }),
  );
  return versions.flat().join(', ');
}
