import { formatDuration } from '../core/provider/duration.js';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import type { RedisLockProviderOptions } from '../providers/redis/redis-lock-provider.js';
import { replicaAckSettings } from '../providers/redis/replica-ack.js';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';
import { MODULE_OPTIONS_SUBJECT as SUBJECT } from './scheduler-lock.constants.js';

/** The replica acknowledgement options of the module's `redis` store, checked. */
export type ReplicaAckOptions = Pick<RedisLockProviderOptions, 'minReplicasToAck' | 'replicaAckTimeout'>;

/**
 * `minReplicasToAck` and `replicaAckTimeout`, checked ({@link replicaAckSettings}): only with `redis` (a provider of
 * one's own is built by the app), and a wait that ends before the attempt is given up (`acquireTimeout`),
 * or every lock would arrive too late and be released.
 */
export function replicaAckOptions(options: SchedulerLockModuleOptions, acquireTimeout: number): ReplicaAckOptions {
  const replicaAck = replicaAckSettings(options, SUBJECT);
  if (replicaAck === undefined) return {};
  if (options.redis === undefined) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: minReplicasToAck goes with "redis"; pass it to your provider instead (RedisLockProvider's options)`,
    );
  }
  const timeout = replicaAck.replicaAckTimeout;
  if (timeout >= acquireTimeout) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: replicaAckTimeout ${formatDuration(timeout)} must be shorter than acquireTimeout ` +
        `${formatDuration(acquireTimeout)}, which includes it`,
    );
  }
  return replicaAck;
}
