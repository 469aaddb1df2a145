import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WITHOUT_PACKAGES = fileURLToPath(
  new URL('../../.build/test/integrations/fixtures/without-packages.js', import.meta.url),
);

/** The optional peers, each loaded only by its own entry point. */
const OPTIONAL_PEERS = ['@nestjs/terminus', '@opentelemetry/api', 'pg'];

/**
 * Imports `entry` (a specifier of this package, resolved to the built dist/ by its `exports`) in a fresh
 * Node process where the optional peers are not installed; resolves to what the import left, or the error.
 */
async function importWithoutOptionalPeers(entry: string): Promise<{ exports: string[] } | { error: string }> {
  const script = `const entry = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(entry)));`;
  try {
    const { stdout } = await run(
      process.execPath,
      ['--import', WITHOUT_PACKAGES, '--input-type=module', '--eval', script],
      { cwd: REPO, env: { ...process.env, NSL_HIDDEN_PACKAGES: OPTIONAL_PEERS.join(',') } },
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
      exports: expect.arrayContaining(['SchedulerLockTest', 'TestLockStore', 'TestNode']),
    });
  });

  it.each([
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
