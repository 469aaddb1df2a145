import type { Logger } from '@nestjs/common';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { withoutCredentials, quoted } from '../core/provider/message-text.js';
import { RedisLockProvider, type RedisLockProviderOptions } from '../providers/redis/redis-lock-provider.js';
import {
  asRedisClient,
  createLockClient,
  isRedisClient,
  type IoredisForkClient,
  type RedisClient,
} from '../providers/redis/redis-client.js';
import { RedisOutageReport } from '../providers/redis/redis-outage-report.js';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';
import { MODULE_OPTIONS_SUBJECT as SUBJECT } from './scheduler-lock.constants.js';

/** The store the module's `redis` option describes: its provider, its outage report, and how to close it. */
export interface RedisOptionStore {
  readonly provider: RedisLockProvider;
  readonly outages: RedisOutageReport;
  /** Closes the client the module created; undefined for a client the app handed over (the app closes it). */
  readonly closeStore?: () => Promise<unknown>;
}

/**
 * Builds the Redis store of the module's `redis` option, its other options checked already. Loaded by `import()`
 * only when that option is given (scheduler-lock.settings.ts), so an app on another store never loads ioredis.
 */
export function redisOptionStore(
  redis: NonNullable<SchedulerLockModuleOptions['redis']>,
  settings: RedisLockProviderOptions,
  logger: Logger,
): RedisOptionStore {
  const owned = isRedisClient(redis) ? undefined : createLockClient(redis);
  const client = owned ?? asRedisClient(redis as RedisClient | IoredisForkClient);
  const outages = new RedisOutageReport(client, logger);
  const provider = new RedisLockProvider(client, settings);
  const closeStore = owned && (() => owned.quit().catch(() => owned.disconnect()));
  return { provider, outages, closeStore };
}

/**
 * `redis` is an ioredis client, an ioredis options object, or a connection string ioredis reads (a
 * `redis://` / `rediss://` URL, `host:port`, a socket path). The message quotes the value without a
 * password.
 */
export function assertRedisOption(redis: unknown): void {
  const expected = 'an ioredis Redis or Cluster, ioredis options, or a redis:// URL';
  if (isRedisClient(redis)) return;
  if (typeof redis === 'string') {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(redis)?.[1].toLowerCase();
    if (redis.trim() !== '' && (scheme === undefined || scheme === 'redis' || scheme === 'rediss')) return;
    const got = JSON.stringify(withoutCredentials(redis));
    throw new SchedulerLockConfigurationError(`${SUBJECT}: redis must be ${expected} (got ${got})`);
  }
  const prototype = typeof redis === 'object' && redis !== null ? Object.getPrototypeOf(redis) : undefined;
  if (prototype === Object.prototype || prototype === null) return;
  const className = String(prototype?.constructor?.name ?? 'an unnamed class');
  const got = prototype ? `an instance of ${className}` : quoted(redis);
  throw new SchedulerLockConfigurationError(`${SUBJECT}: redis must be ${expected} (got ${got})`);
}
