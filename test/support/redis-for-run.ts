import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { withoutCredentials } from '../../lib/core/provider/message-text.js';
import { misconfiguration } from '../../lib/providers/redis/redis-failures.js';
import { startPrivateRedisServer } from './redis-server.js';

/**
 * The Redis a run (`npm test`, `npm run test:package`, `npm run demo`) uses, decided once, the same way
 * everywhere:
 * - `REDIS_URL` when it is set: it must answer, or the run stops at once naming it;
 * - else the default server on 6379, when it answers;
 * - else a private `redis-server` on a free port, stopped when the run ends;
 * - else (no `redis-server` installed) the run stops at once with the install line.
 */

/** Where a Redis is looked for when `REDIS_URL` is unset. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** How to get a `redis-server`, printed when none is installed. */
export const REDIS_INSTALL_LINE = 'sudo apt-get install redis-server   (Debian, Ubuntu; macOS: brew install redis)';

/** The Redis of one run. */
export interface RunRedis {
  readonly url: string;
  /** The PID of the private `redis-server` this run started, if it started one. */
  readonly privatePid?: number;
  /** Stops the private server, if the run started one. */
  stop(): Promise<void>;
}

/** Why a run has no Redis; its message says what to do. */
export class NoRedisForRunError extends Error {
  override name = 'NoRedisForRunError';
}

/** Finds or starts the run's Redis (see the module comment); rejects with {@link NoRedisForRunError}. */
export async function redisForRun(env: NodeJS.ProcessEnv = process.env): Promise<RunRedis> {
  const asked = env.REDIS_URL;
  if (asked) {
    const answer = await redisAnswer(asked);
    if (answer === 'ready') return { url: asked, stop: async () => undefined };
    const where = `REDIS_URL=${withoutCredentials(asked)}`;
    throw new NoRedisForRunError(
      answer === 'unreachable'
        ? `No Redis answers at ${where}. Start it there, or unset REDIS_URL to let this run start a private ` +
            'redis-server.'
        : `The Redis at ${where} answers but refuses this run (${answer}): fix REDIS_URL.`,
    );
  }
  if ((await redisAnswer(DEFAULT_REDIS_URL)) === 'ready')
    return { url: DEFAULT_REDIS_URL, stop: async () => undefined };
  if (!(await redisServerInstalled()))
    throw new NoRedisForRunError(
      `No Redis at ${DEFAULT_REDIS_URL} (REDIS_URL is unset) and no redis-server to start one. Install it:\n\n` +
        `  ${REDIS_INSTALL_LINE}\n\nor set REDIS_URL to a running Redis.`,
    );
  const server = await startPrivateRedisServer();
  return { url: server.url, privatePid: server.pid, stop: () => server.stop() };
}

/**
 * Whether a Redis server answers PING at `url` within a second: `ready`, `unreachable`, or why it refuses the
 * client (a wrong password, an untrusted certificate, a refused command).
 */
async function redisAnswer(url: string): Promise<string> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let failure: unknown;
  client.on('error', (error: unknown) => (failure = error)); // the failed connection is the answer, not an error to report
  try {
    await client.connect();
    return (await client.ping()) === 'PONG' ? 'ready' : 'unreachable';
  } catch (error) {
    // A wrong password or certificate as the module says it; another reply (PING refused by the ACL) as Redis said it.
    const cause = failure ?? error;
    const replied = (cause as Error | undefined)?.name === 'ReplyError';
    return misconfiguration(cause, client) ?? (replied ? (cause as Error).message : 'unreachable');
  } finally {
    // disconnect() of a client whose connection failed (status 'end') would keep the process up for 2 s.
    if (client.status !== 'end') client.disconnect();
  }
}

/** Whether `redis-server` is on the PATH (it runs `--version`). */
function redisServerInstalled(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}
