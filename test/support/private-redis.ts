import type { Redis } from 'ioredis';
import { openRedis } from './redis-client-choice.js';
import { startPrivateRedisServer, type PrivateRedisServer, type PrivateRedisServerOptions } from './redis-server.js';
import { setByHooks, type HookValues } from './set-by-hooks.js';

/** What {@link usePrivateRedisServer} gives a describe block: set by its hooks, so read inside tests and hooks only. */
export interface UsedPrivateRedisServer {
  /** The block's own server, started before its first test. */
  readonly server: PrivateRedisServer;
  /**
   * A client of the server's default user (with its password, trusting its TLS CA), for the tests' own looks;
   * of the kind `REDIS_CLIENT` chooses.
   */
  readonly admin: Redis;
}

/**
 * Registers, in the describe block (or spec file) that calls it, the hooks of tests that need a Redis of
 * their own (to kill it, or to configure it as no test may configure the shared one): a private
 * `redis-server` started with `options` before the block's first test, with an admin client, both gone
 * after its last test. `options` may be a function, called when the server starts, for options that
 * earlier hooks make (certificates, the port of another private server).
 *
 * Hooks run in the order they are declared: the block's `afterAll` hooks declared after this call run
 * once the server is gone, so stop what must not see it go (apps) in `afterEach`.
 */
export function usePrivateRedisServer(
  options: PrivateRedisServerOptions | (() => PrivateRedisServerOptions) = {},
): UsedPrivateRedisServer {
  const values: HookValues<UsedPrivateRedisServer> = {};
  beforeAll(async () => {
    const server = await startPrivateRedisServer(typeof options === 'function' ? options() : options);
    values.server = server;
    values.admin = openRedis(server.url, server.clientOptions);
    // The tests may kill the server: without a listener ioredis prints the admin's connection errors.
    values.admin.on('error', () => undefined);
  });
  afterAll(async () => {
    const { admin, server } = values;
    // A test may have disconnected it already; a second disconnect() of an ended client leaves a 2 s timer behind.
    if (admin && admin.status !== 'end') admin.disconnect();
    await server?.stop();
  });
  return setByHooks('usePrivateRedisServer()', values, ['server', 'admin']);
}
