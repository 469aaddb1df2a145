import { formatDuration } from '../core/provider/duration.js';
import { positiveDurationOption, SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import type { RedisLockProviderOptions } from '../providers/redis/redis-lock-provider.js';
import { assertMinReplicasToAck, DEFAULT_REPLICA_ACK_TIMEOUT } from '../providers/redis/replica-ack.js';
import type { SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';
import { MODULE_OPTIONS_SUBJECT as SUBJECT } from './scheduler-lock.constants.js';

/**
 * `minReplicasToAck` and `replicaAckTimeout`, checked: a positive integer, only with `redis` (a provider of
 * one's own is built by the app), and a wait that ends before the attempt is given up (`acquireTimeout`),
 * or every lock would arrive too late and be released.
 */
export function replicaAckOptions(
  options: SchedulerLockModuleOptions,
  acquireTimeout: number,
): Pick<RedisLockProviderOptions, 'minReplicasToAck' | 'replicaAckTimeout'> {
  const { minReplicasToAck, replicaAckTimeout } = options;
  if (minReplicasToAck === undefined) {
    if (replicaAckTimeout !== undefined) {
      throw new SchedulerLockConfigurationError(`${SUBJECT}: replicaAckTimeout needs minReplicasToAck`);
    }
    return {};
  }
  assertMinReplicasToAck(minReplicasToAck, `${SUBJECT}: `);
  if (options.redis === undefined) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: minReplicasToAck goes with "redis"; pass it to your provider instead (RedisLockProvider's options)`,
    );
  }
  const timeout = positiveDurationOption(replicaAckTimeout, DEFAULT_REPLICA_ACK_TIMEOUT, 'replicaAckTimeout', SUBJECT);
  if (timeout >= acquireTimeout) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: replicaAckTimeout ${formatDuration(timeout)} must be shorter than acquireTimeout ` +
        `${formatDuration(acquireTimeout)}, which includes it`,
    );
  }
  return { minReplicasToAck, replicaAckTimeout: timeout };
}
