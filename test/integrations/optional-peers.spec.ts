import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WITHOUT_PACKAGES = fileURLToPath(
  new URL('../../.build/test/integrations/fixtures/without-packages.js', import.meta.url),
);

/** The optional peers, each loaded only by its own entry point (ioredis also by the module's `redis` option). */
const OPTIONAL_PEERS = ['@nestjs/terminus', '@opentelemetry/api', 'ioredis', 'pg'];

/**
 * Imports `entry` (a specifier of this package, resolved to the built dist/ by its `exports`) in a fresh
 * Node process where the optional peers are not installed; resolves to what the import left, or the error.
 */
async function importWithoutOptionalPeers(
  entry: string,
  hidden: readonly string[] = OPTIONAL_PEERS,
): Promise<{ exports: string[] } | { error: string }> {
  const script = `const entry = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(entry)));`;
  return runWithoutOptionalPeers(script, hidden);
}

/** Runs the ES module `script` as importWithoutOptionalPeers does; resolves to what it printed (JSON), or the error. */
async function runWithoutOptionalPeers(
  script: string,
  hidden: readonly string[] = OPTIONAL_PEERS,
): Promise<{ exports: string[] } | { error: string }> {
  try {
    const { stdout } = await run(
      process.execPath,
      ['--import', WITHOUT_PACKAGES, '--input-type=module', '--eval', script],
      { cwd: REPO, env: { ...process.env, NSL_HIDDEN_PACKAGES: hidden.join(',') } },
    );
    return { exports: JSON.parse(stdout) as string[] };
  } catch (error) {
    return { error: (error as { stderr?: string }).stderr ?? String(error) };
  }
}

describe('optional peers', () => {
  it('an app without them imports the main entry: it never loads them', async () => {
    expect(await importWithoutOptionalPeers('nest-scheduler-lock')).toEqual({
      exports: expect.arrayContaining(['SchedulerLockModule', 'SchedulerLock', 'LockEvents']),
    });
  });

  it('nest-scheduler-lock/testing needs none of them', async () => {
    expect(await importWithoutOptionalPeers('nest-scheduler-lock/testing')).toEqual({
      exports: expect.arrayContaining(['SchedulerLockTest', 'TestLockProvider', 'TestNode']),
    });
  });

  it('nest-scheduler-lock/provider-tests loads no peer at all: Nest only when its module checks run', async () => {
    const everyPeer = [...OPTIONAL_PEERS, '@nestjs/common', '@nestjs/core', '@nestjs/schedule', 'ioredis', 'rxjs'];
    expect(await importWithoutOptionalPeers('nest-scheduler-lock/provider-tests', everyPeer)).toEqual({
      exports: expect.arrayContaining(['describeLockProvider', 'lockProviderChecks']),
    });
  });

  it('the main entry loads no store client, even where ioredis and pg are installed', async () => {
    const script = [
      "import { createRequire } from 'node:module';",
      "await import('nest-scheduler-lock');",
      "createRequire(process.cwd() + '/')('nest-scheduler-lock');",
      'const loaded = Object.keys(createRequire(process.cwd() + "/").cache);',
      'const clients = loaded.filter((path) => /[\\/]node_modules[\\/](ioredis|pg)[\\/]/.test(path));',
      'console.log(JSON.stringify([loaded.length > 0, ...clients]));',
    ].join('\n');
    expect(await runWithoutOptionalPeers(script, [])).toEqual({ exports: [true] });
  });

  it("the module's redis option, in an app without ioredis, fails the startup naming the package", async () => {
    const script = [
      "import 'reflect-metadata';",
      "import { NestFactory } from '@nestjs/core';",
      "import { ScheduleModule } from '@nestjs/schedule';",
      "import { SchedulerLockModule } from 'nest-scheduler-lock';",
      "const lock = SchedulerLockModule.forRoot({ redis: 'redis://127.0.0.1:1', defaultLockAtMostFor: '1m' });",
      'const app = { module: class App {}, imports: [ScheduleModule.forRoot(), lock] };',
      'await NestFactory.createApplicationContext(app, { logger: false, abortOnError: false });',
    ].join('\n');
    expect(await runWithoutOptionalPeers(script)).toEqual({
      error: expect.stringContaining(
        'SchedulerLockModule options: "redis" needs the ioredis package, which is not installed: run `npm install ioredis`',
      ),
    });
  });

  it('the CLI starts without ioredis: an app on PostgreSQL runs it with --postgres', async () => {
    const cli = fileURLToPath(new URL('../../dist/cjs/cli/main.js', import.meta.url));
    const { stdout } = await run(process.execPath, ['--import', WITHOUT_PACKAGES, cli, '--help'], {
      cwd: REPO,
      env: { ...process.env, NSL_HIDDEN_PACKAGES: 'ioredis' },
    });
    expect(stdout).toContain('--postgres');
  });

  it.each([
    ['nest-scheduler-lock/redis', 'ioredis'],
    ['nest-scheduler-lock/terminus', '@nestjs/terminus'],
    ['nest-scheduler-lock/opentelemetry', '@opentelemetry/api'],
  ])('%s is the entry point that needs %s', async (entry, peer) => {
    expect(await importWithoutOptionalPeers(entry)).toEqual({
      error: expect.stringContaining(`Cannot find package '${peer}': not installed in this app`),
    });
  });

  it("nest-scheduler-lock/postgres takes the app's pg Pool and imports only the types of pg: pg is a peer for them", async () => {
    expect(await importWithoutOptionalPeers('nest-scheduler-lock/postgres')).toEqual({
      exports: ['PostgresLockProvider'],
    });
  });
});
