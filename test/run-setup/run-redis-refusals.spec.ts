import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { redisForRun } from '../support/redis-for-run.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';

/**
 * The Redis of `npm test` and `npm run demo` (test/support/redis-for-run.ts) behind a password: a wrong one is
 * said as such, not as "No Redis answers"; the password is never printed.
 */

const DEMO = fileURLToPath(new URL('../../.build/sample-app/demo.js', import.meta.url));
const SAMPLE_APP = fileURLToPath(new URL('../../.build/sample-app/main.js', import.meta.url));
const PASSWORD = 'RightPass42';

let server: PrivateRedisServer;
beforeAll(async () => {
  server = await startPrivateRedisServer({ requirepass: PASSWORD });
});
afterAll(() => server.stop());

it('REDIS_URL with a wrong password: says Redis refuses the run, and why, not that none answers', async () => {
  const failure = await redisForRun({ REDIS_URL: `redis://:WrongPass42@127.0.0.1:${server.port}` }).then(
    () => undefined,
    (error: Error) => error.message,
  );
  expect(failure).toBe(
    `The Redis at REDIS_URL=redis://:***@127.0.0.1:${server.port} answers but refuses this run ` +
      '(authentication failed: WRONGPASS): fix REDIS_URL.',
  );
});

it('npm run demo never prints the password of REDIS_URL', async () => {
  const env = { ...process.env, REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${server.port}`, DEMO_SECONDS: '1' };
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [DEMO], { env, timeout: 60_000 });
  expect(stdout.split('\n')[0]).toContain(`(Redis redis://:***@127.0.0.1:${server.port}, key prefix`);
  expect(stdout + stderr).not.toContain(PASSWORD);
});

it('the sample app names REDIS_URL in its first line, never its password', async () => {
  const env = { ...process.env, REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${server.port}`, NO_COLOR: '1' };
  const app = spawn(process.execPath, [SAMPLE_APP], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const lines = createInterface({ input: app.stdout! });
    let running: string | undefined;
    for await (const line of lines) {
      expect(line).not.toContain(PASSWORD);
      if (line.includes('is running its jobs')) {
        running = line;
        break;
      }
    }
    expect(running).toContain('(Redis at REDIS_URL, key prefix "sample-app")');
  } finally {
    if (app.exitCode === null && app.signalCode === null) {
      const exited = once(app, 'exit');
      app.kill('SIGTERM');
      await exited;
    }
  }
});
