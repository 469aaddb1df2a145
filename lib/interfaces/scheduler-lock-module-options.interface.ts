import type { RedisOptions } from 'ioredis';
import type { Duration } from '../core/duration.js';
import type { KeepAlive } from '../core/lock-configuration.js';
import type { LockProvider } from '../core/lock-provider.js';
import type { RedisClient } from '../redis/redis-scripts.js';

/** Options of `SchedulerLockModule.forRoot()` / `forRootAsync()`. */
export interface SchedulerLockModuleOptions {
  /**
   * Where locks live: an ioredis `Redis` or `Cluster` instance (used as is, never closed by the
   * module), or ioredis options / a `redis://` URL (the module creates that client and closes it on
   * shutdown). Set exactly one of `redis` and `provider`.
   */
  redis?: RedisClient | RedisOptions | string;
  /** Any {@link LockProvider} instead of `redis`, for example `new InMemoryLockProvider()` in tests. */
  provider?: LockProvider;
  /** Prefix of every Redis key, so several apps or environments can share one Redis. Default `job-lock`. */
  keyPrefix?: string;
  /** How long a lock is held at most when a job does not say: a node that dies holding it blocks the job this long. Required. */
  defaultLockAtMostFor: Duration;
  /** How long a lock is held at least when a job does not say. Default 0. */
  defaultLockAtLeastFor?: Duration;
  /** Stored with each lock so an operator can see who holds it. Default `<hostname>:<pid>`. */
  lockedBy?: string;
  /**
   * Renew every job's lock while it runs (`true` = 30 s lease, or `{ lease }`), unless the job sets its
   * own `keepAlive`. Default `false`.
   */
  keepAlive?: KeepAlive;
  /** On `app.close()`, how long runs in progress are awaited before their signal is aborted. Default 10 s. */
  shutdownTimeout?: Duration;
  /**
   * How long a lock attempt may wait for Redis before the tick is skipped (`store-error`). Default 2 s.
   * A lock that arrives later is released at once.
   */
  acquireTimeout?: Duration;
}
