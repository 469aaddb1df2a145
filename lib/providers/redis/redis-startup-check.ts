import { LockProviderMisconfiguredError } from '../../core/provider/errors.js';
import { describeRedisEndpoint } from './redis-endpoint.js';
import { misconfiguration, redisUser } from './redis-failures.js';
import type { RedisClient } from './redis-client.js';
import type { RedisScripts } from './redis-scripts.js';

/** How long the check waits for Redis's first answer; a Redis that takes longer is an outage, not a mistake. */
const CHECK_TIMEOUT_MS = 5_000;

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
    ...['get', 'del', 'exists', 'mget', 'pttl', 'hgetall'].map((command) => [command, key]),
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

/** A check call that could not reach Redis: whether it is a mistake, the next connection attempt says. */
const UNREACHABLE = Symbol('unreachable');

/** What a check call found: a mistake's cause, nothing wrong, or {@link UNREACHABLE}. */
type Finding = string | undefined | typeof UNREACHABLE;

/**
 * Checks once, at startup, that `client` may work for the module: Redis accepts its credentials and TLS
 * certificate, and its ACL allows every command the module sends on `key` (one `redis.acl_check_cmd`
 * script call, which runs none of them; `extraCommands` beside them). Rejects with a
 * {@link LockProviderMisconfiguredError} naming the endpoint and the cause. Resolves when Redis is
 * unreachable (refused, timed out): that is an outage, which the app must survive.
 */
export async function checkRedisProvider(
  scripts: RedisScripts,
  key: string,
  extraCommands: readonly string[][] = [],
): Promise<void> {
  const { client } = scripts;
  const commands = [...moduleCommands(key), ...extraCommands];
  const args = commands.flatMap((command) => [command.length, ...command]);
  const ask = () =>
    scripts.checkAcl(args).then(
      (refused): Finding => (Array.isArray(refused) && refused.length > 0 ? refusal(client, refused, key) : undefined),
      // Already said in terms of Redis (redisFailure): a refusal, or the cause of an unreachable Redis.
      (failure: unknown): Finding => misconfiguration(failure, client) ?? UNREACHABLE,
    );
  const stops: (() => void)[] = [];
  // A connection that fails reconnects forever: its next error says whether waiting could help.
  const connectionFailed = new Promise<string | undefined>((resolve) => {
    const onError = (error: Error) => resolve(misconfiguration(error, client));
    client.once('error', onError);
    stops.push(() => client.off('error', onError));
  });
  const timedOut = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), CHECK_TIMEOUT_MS);
    stops.push(() => clearTimeout(timer));
  });
  try {
    let cause = await Promise.race([ask(), connectionFailed, timedOut]);
    if (cause === UNREACHABLE) {
      // The connection failed before the check began (its error already emitted): ask again once it is back.
      const reconnected = new Promise<Finding>((resolve) => {
        const onReady = () => resolve(ask());
        client.once('ready', onReady);
        stops.push(() => client.off('ready', onReady));
      });
      cause = await Promise.race([reconnected, connectionFailed, timedOut]);
    }
    if (cause === undefined || cause === UNREACHABLE) return;
    const endpoint = describeRedisEndpoint(client);
    const message = `Redis ${endpoint} cannot serve the locks (${cause}): fix the configuration`;
    throw new LockProviderMisconfiguredError(message, cause);
  } finally {
    for (const stop of stops) stop();
  }
}

/** What the ACL refuses, for the message: the commands and the user, never its password. */
function refusal(client: RedisClient, refused: readonly string[], key: string): string {
  const user = redisUser(client) ?? 'default';
  const names = refused.map((command) => command.toUpperCase()).join(', ');
  return `the ACL of user "${user}" refuses ${names}, which the module sends on keys like "${key}"`;
}
