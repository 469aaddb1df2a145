import { Redis, type Cluster, type RedisOptions } from 'ioredis';

/** A Redis client the provider can use: a single node (also behind Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * A `Redis` or `Cluster` of a fork of ioredis with the same API under its own types: `iovalkey`, the Valkey
 * project's. Accepted wherever a {@link RedisClient} is, and called as one (the suites that decode script
 * replies run on iovalkey too). Only what tells such a client apart is spelled out here.
 */
export interface IoredisForkClient {
  readonly isCluster: boolean;
  readonly status: string;
  evalsha(sha: string, numberOfKeys: number, ...keysThenArguments: (string | number)[]): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...keysThenArguments: (string | number)[]): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
}

/** `client`, a fork's too, as the {@link RedisClient} whose API it has. */
export function asRedisClient(client: RedisClient | IoredisForkClient): RedisClient {
  return client as RedisClient;
}

/** Whether `value` is an ioredis (or iovalkey) client, a `Redis` or a `Cluster`, by the command every lock sends. */
export function isRedisClient(value: unknown): value is RedisClient | IoredisForkClient {
  return typeof (value as IoredisForkClient | undefined)?.evalsha === 'function';
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
