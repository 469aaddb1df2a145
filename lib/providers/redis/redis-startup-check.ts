import { LockStoreMisconfiguredError } from '../../core/errors.js';
import { describeRedisEndpoint, misconfiguration, redisFailure, redisUser } from './redis-failures.js';
import { LuaScript, type RedisClient } from './redis-scripts.js';

/** How long the check waits for Redis's first answer; a Redis that takes longer is an outage, not a mistake. */
const CHECK_TIMEOUT_MS = 5_000;

const CHECK_ACL = new LuaScript('check-acl.lua');

/** A SHA1 to ask about: the ACL decides by command and key, never by the script. */
const ANY_SHA = '0'.repeat(40);

/**
 * Every command the module sends, with arguments of the shape it sends them on `key` (one of its keys):
 * the scripts and what they run, the job record's transaction, the cluster view's hashes and lists.
 */
function moduleCommands(key: string): string[][] {
  return [
    ['evalsha', ANY_SHA, '1', key],
    ['eval', 'return 1', '1', key],
    ...['get', 'del', 'incr', 'exists', 'mget', 'pttl', 'hgetall'].map((command) => [command, key]),
    ['set', key, '1'],
    ['pexpire', key, '1'],
    ['hget', key, 'f'],
    ['hmget', key, 'f'],
    ['hset', key, 'f', '1'],
    ['hincrby', key, 'f', '1'],
    ['hdel', key, 'f'],
    ['lpush', key, '1'],
    ['ltrim', key, '0', '1'],
    ['lrange', key, '0', '1'],
    ['time'],
    ['multi'],
    ['exec'],
  ];
}

/**
 * Checks once, at startup, that `client` may work for the module: Redis accepts its credentials and TLS
 * certificate (learnt from the first connection), and its ACL allows every command the module sends on
 * `key` (one `redis.acl_check_cmd` script call, which runs none of them; `extraCommands` beside them).
 * Rejects with a {@link LockStoreMisconfiguredError} naming the endpoint and the cause. Resolves when
 * Redis is unreachable (refused, timed out): that is an outage, which the app must survive.
 */
export async function checkRedisStore(
  client: RedisClient,
  key: string,
  extraCommands: readonly string[][] = [],
): Promise<void> {
  const endpoint = describeRedisEndpoint(client);
  const commands = [...moduleCommands(key), ...extraCommands];
  const args = commands.flatMap((command) => [command.length, ...command]);
  let onError: ((error: Error) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const answered = CHECK_ACL.call<string[] | number>(client, 0, args).then(
    (refused) => (Array.isArray(refused) && refused.length > 0 ? refusal(client, refused, key) : undefined),
    (error: unknown) => misconfiguration(redisFailure(client, error), client),
  );
  // A connection that fails reconnects forever: its first error says whether waiting could help.
  const connectionFailed = new Promise<string | undefined>((resolve) => {
    onError = (error) => resolve(misconfiguration(error, client));
    client.once('error', onError);
  });
  const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CHECK_TIMEOUT_MS)));
  try {
    const cause = await Promise.race([answered, connectionFailed, timedOut]);
    if (cause === undefined) return;
    const message = `Redis ${endpoint} cannot serve the locks (${cause}): fix the configuration`;
    throw new LockStoreMisconfiguredError(message, cause);
  } finally {
    client.off('error', onError!);
    clearTimeout(timer);
  }
}

/** What the ACL refuses, for the message: the commands and the user, never its password. */
function refusal(client: RedisClient, refused: readonly string[], key: string): string {
  const user = redisUser(client) ?? 'default';
  const names = refused.map((command) => command.toUpperCase()).join(', ');
  return `the ACL of user "${user}" refuses ${names}, which the module sends on keys like "${key}"`;
}
