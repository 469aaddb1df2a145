import { Redis, type Cluster, type RedisOptions } from 'ioredis';

/** A Redis client the provider can use: a single node (also behind Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Whether `value` is an ioredis client (a `Redis` or a `Cluster`), by the command every lock sends. */
export function isRedisClient(value: unknown): value is RedisClient {
  return typeof (value as RedisClient | undefined)?.evalsha === 'function';
}

/**
 * A client for locks, made from the module's `redis` option. Until its first connection attempt succeeds or
 * fails, commands wait in ioredis's offline queue, so a job due at startup runs; from then on the queue is off
 * (ioredis reads the option on every command), so while Redis is unreachable a lock attempt fails at once and
 * the tick is skipped on time. Its connection errors are the outage report's to log.
 */
export function createLockClient(redis: RedisOptions | string): Redis {
  const options: RedisOptions = { maxRetriesPerRequest: 1 };
  const client = typeof redis === 'string' ? new Redis(redis, options) : new Redis({ ...options, ...redis });
  const failFast = () => (client.options.enableOfflineQueue = false);
  client.on('error', failFast);
  client.on('ready', failFast);
  return client;
}
