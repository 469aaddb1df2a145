import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { DEFAULT_REDIS_URL, NoRedisForRunError, redisForRun } from './redis-for-run.js';

/**
 * `node with-redis.js <command> [args…]`: runs the command with REDIS_URL set to the run's Redis
 * ({@link redisForRun}: REDIS_URL, else 6379, else a private redis-server stopped when the command ends).
 * `npm test` and `npm run test:package` run through it; it exits with the command's code.
 */

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (!command) throw new Error('usage: node with-redis.js <command> [args…]');
  const redis = await redisForRun();
  if (redis.privatePid !== undefined)
    console.error(
      `No Redis at ${DEFAULT_REDIS_URL} and REDIS_URL is unset: started a private redis-server ` +
        `(pid ${redis.privatePid}) at ${redis.url}; it stops when this run ends`,
    );
  try {
    return await runToEnd(command, args, { ...process.env, REDIS_URL: redis.url });
  } finally {
    await redis.stop();
  }
}

/** Runs `command` with the terminal, passing on SIGINT and SIGTERM; resolves with its exit code. */
function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(command, args, { stdio: 'inherit', env });
  const passOn = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', passOn).on('SIGTERM', passOn);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', passOn).off('SIGTERM', passOn);
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof NoRedisForRunError ? error.message : error);
    process.exitCode = 1;
  },
);
