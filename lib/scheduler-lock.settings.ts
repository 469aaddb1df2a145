import { Logger } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { FaultLog } from './core/fault-log.js';
import {
  SchedulerLockConfigurationError,
  durationOption,
  lockDurations,
  positiveDurationOption,
  resolveLease,
  type LockDefaults,
} from './core/lock-configuration.js';
import type { LockProvider } from './core/lock-provider.js';
import type { SchedulerLockModuleOptions } from './interfaces/scheduler-lock-module-options.interface.js';
import { DEFAULT_KEY_PREFIX, defaultLockedBy, RedisLockProvider } from './redis/redis-lock-provider.js';
import type { RedisClient } from './redis/redis-scripts.js';

/** The module's options, validated once at startup. */
export interface SchedulerLockSettings {
  readonly provider: LockProvider;
  readonly defaults: LockDefaults;
  readonly lockedBy: string;
  /** How long `app.close()` waits for runs in progress, in ms. */
  readonly shutdownTimeout: number;
  /** How long a lock attempt may take before the tick is skipped, in ms. */
  readonly acquireTimeout: number;
  /** The Redis client the module created, and so must close; never one it was handed. */
  readonly ownedClient?: Redis;
}

const SUBJECT = 'SchedulerLockModule options';
const DEFAULT_SHUTDOWN_TIMEOUT = 10_000;
const DEFAULT_ACQUIRE_TIMEOUT = 2_000;

/** Validates the module options and builds the lock provider they describe. */
export function createSchedulerLockSettings(options: SchedulerLockModuleOptions): SchedulerLockSettings {
  if (!options || typeof options !== 'object') {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: expected an object, got ${String(options)}`);
  }
  if ((options.redis === undefined) === (options.provider === undefined)) {
    const got = options.redis === undefined ? 'neither' : 'both';
    throw new SchedulerLockConfigurationError(`${SUBJECT}: set exactly one of "redis" and "provider" (got ${got})`);
  }
  if (options.defaultLockAtMostFor === undefined) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: defaultLockAtMostFor is required (for example '10m')`);
  }
  const { lockAtMostFor, lockAtLeastFor } = lockDurations(
    { lockAtMostFor: options.defaultLockAtMostFor, lockAtLeastFor: options.defaultLockAtLeastFor },
    { lockAtMostFor: 0, lockAtLeastFor: 0 },
    ['defaultLockAtMostFor', 'defaultLockAtLeastFor'],
    SUBJECT,
  );
  const lockedBy = options.lockedBy ?? defaultLockedBy();
  const defaults = { lockAtMostFor, lockAtLeastFor, lease: resolveLease(options.keepAlive, undefined, SUBJECT) };
  const shutdownTimeout = durationOption(options.shutdownTimeout, DEFAULT_SHUTDOWN_TIMEOUT, 'shutdownTimeout', SUBJECT);
  const acquireTimeout = positiveDurationOption(options.acquireTimeout, DEFAULT_ACQUIRE_TIMEOUT, 'acquireTimeout', SUBJECT);
  const common = { defaults, lockedBy, shutdownTimeout, acquireTimeout };
  if (options.provider) return { provider: options.provider, ...common };

  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  if (isRedisClient(options.redis)) {
    return { provider: new RedisLockProvider(options.redis, { keyPrefix, lockedBy }), ...common };
  }
  const ownedClient = createClient(options.redis!);
  return { provider: new RedisLockProvider(ownedClient, { keyPrefix, lockedBy }), ...common, ownedClient };
}

function isRedisClient(value: unknown): value is RedisClient {
  return typeof (value as RedisClient | undefined)?.evalsha === 'function';
}

/**
 * A client for locks. Until its first connection attempt succeeds or fails, commands wait in ioredis's
 * offline queue, so a job due at startup runs; from then on the queue is off (ioredis reads the option
 * on every command), so while Redis is unreachable a lock attempt fails at once and the tick is skipped
 * on time.
 */
function createClient(redis: RedisOptions | string): Redis {
  const options: RedisOptions = { maxRetriesPerRequest: 1 };
  const client = typeof redis === 'string' ? new Redis(redis, options) : new Redis({ ...options, ...redis });
  const faults = new FaultLog(new Logger('SchedulerLock'));
  const failFast = () => (client.options.enableOfflineQueue = false);
  client.on('error', (error: Error) => {
    failFast();
    faults.error('redis', `Redis connection error: ${error.message}`);
  });
  client.on('ready', () => {
    failFast();
    faults.clear('redis');
  });
  return client;
}
