import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { MODULE_OPTIONS_SUBJECT as SUBJECT } from './scheduler-lock.constants.js';

/** What builds the store of the module's `redis` option (./redis-option.ts). */
export type RedisOption = typeof import('./redis-option.js');

/**
 * Loads the wiring of the `redis` option, and with it ioredis (an optional peer): only when the option is given,
 * so an app on another store starts without ioredis installed. A missing ioredis fails the startup by name.
 */
export async function loadRedisOption(): Promise<RedisOption> {
  try {
    return await import('./redis-option.js');
  } catch (error) {
    if (!isMissingIoredis(error)) throw error;
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: "redis" needs the ioredis package, which is not installed: run \`npm install ioredis\`, ` +
        'or pass a provider of another store (for example nest-scheduler-lock/postgres)',
    );
  }
}

/** Node's "module not found" for ioredis itself (not for a module ioredis failed to find inside itself). */
function isMissingIoredis(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && /['"]ioredis['"]/.test(message);
}
