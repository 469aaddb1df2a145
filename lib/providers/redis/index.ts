/**
 * `nest-scheduler-lock/redis`: locks in Redis (or Valkey) through `ioredis` (an optional peer, loaded only by
 * this entry point and by the module's `redis` option). See the README, "Redis".
 *
 * @module nest-scheduler-lock/redis
 */

export { DEFAULT_KEY_PREFIX, RedisLockProvider, type RedisLockProviderOptions } from './redis-lock-provider.js';
export type { IoredisForkClient, RedisClient } from './redis-client.js';
export type { RedisOperatorProvider } from './redis-operator-provider.js';
