import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { SchedulerLockModuleOptions } from 'nest-scheduler-lock';
import { PostgresLockProvider } from 'nest-scheduler-lock/postgres';
import pg from 'pg';
import { config } from './config.js';

/** The PostgreSQL pool of the locks, when DATABASE_URL is set: the app's own, so the app closes it. */
const pool = config.databaseUrl ? new pg.Pool({ connectionString: config.databaseUrl, max: 3 }) : null;

/** Where the module keeps its locks: the PostgreSQL at DATABASE_URL, else Redis. */
export const lockStore: Pick<SchedulerLockModuleOptions, 'provider' | 'redis' | 'keyPrefix' | 'node'> = pool
  ? { provider: new PostgresLockProvider(pool, { node: config.instanceId }) }
  : { redis: config.redisUrl, keyPrefix: config.keyPrefix, node: config.instanceId };

/**
 * Ends the pool when the app closes, or the process would not exit. Nest runs every `onModuleDestroy` first,
 * so the module has released its locks by then.
 */
@Injectable()
export class LockPoolCloser implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await pool?.end();
  }
}
