import type { Redis } from 'ioredis';
import { formatDuration, type DurationInput } from '../../core/provider/duration.js';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import {
  MAX_TIMER_MS,
  positiveDurationOption,
  SchedulerLockConfigurationError,
} from '../../core/provider/lock-configuration.js';
import { wholeNumberOption } from '../../core/provider/option-values.js';
import type { SimpleLock } from '../../core/provider/lock-provider.js';
import { redisFailure } from './redis-failures.js';
import type { RedisClient } from './redis-client.js';

/** How long a taken lock waits for replicas unless told otherwise (ms). */
export const DEFAULT_REPLICA_ACK_TIMEOUT = 500;

/**
 * `minReplicasToAck`: a lock counts as taken only once that many replicas have it. After a successful
 * acquisition, `WAIT <replicas> <timeout>` on the connection that took it (Redis's WAIT waits for the
 * connection's own writes); a lock fewer replicas acknowledged in time is released and the attempt fails
 * with a {@link LockProviderUnavailableError}, so the run does not start. One more round trip per lock taken;
 * skips, renewals and releases are not waited for.
 */
export class ReplicaAck {
  private readonly client: Redis;

  constructor(
    client: RedisClient,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {
    // A Cluster client sends a command without keys to any node, so WAIT would not follow the lock's write.
    if (client.isCluster) {
      throw new SchedulerLockConfigurationError(
        'minReplicasToAck needs a single Redis or a Sentinel client, not a Cluster client',
      );
    }
    this.client = client as Redis;
  }

  /** `lock` once enough replicas acknowledged it; otherwise it is released and this rejects. */
  async confirm<L extends SimpleLock>(lock: L, name: string): Promise<L> {
    // Unreplicated (or unknown), the lock would vanish in a failover: give it back. If the release fails too,
    // it expires.
    const giveBack = () => void lock.unlock().catch(() => undefined);
    const acknowledged = await this.client.wait(this.replicas, this.timeoutMs).catch((error: unknown) => {
      giveBack();
      return Promise.reject(redisFailure(this.client, error));
    });
    if (acknowledged >= this.replicas) return lock;
    giveBack();
    const within = formatDuration(this.timeoutMs);
    const reason = `${acknowledged} of ${this.replicas} replicas acknowledged the lock within ${within}`;
    throw new LockProviderUnavailableError(`Lock "${name}" was not taken: ${reason} (minReplicasToAck)`, reason);
  }
}

/** `minReplicasToAck` and `replicaAckTimeout` as a user writes them, before validation. */
export interface ReplicaAckOptions {
  minReplicasToAck?: number;
  replicaAckTimeout?: DurationInput;
}

/**
 * `minReplicasToAck` (a whole number of replicas) and `replicaAckTimeout` (a duration, in whole ms for `WAIT`),
 * checked for the module's options or a provider's (`subject` starts the message); `undefined` without replicas.
 */
export function replicaAckSettings(
  options: ReplicaAckOptions,
  subject: string,
): { minReplicasToAck: number; replicaAckTimeout: number } | undefined {
  const { minReplicasToAck, replicaAckTimeout } = options;
  if (minReplicasToAck === undefined) {
    if (replicaAckTimeout === undefined) return undefined;
    throw new SchedulerLockConfigurationError(`${subject}: replicaAckTimeout needs minReplicasToAck`);
  }
  return {
    minReplicasToAck: wholeNumberOption(minReplicasToAck, 0, 'minReplicasToAck', subject),
    replicaAckTimeout: Math.ceil(
      positiveDurationOption(
        replicaAckTimeout,
        DEFAULT_REPLICA_ACK_TIMEOUT,
        'replicaAckTimeout',
        subject,
        MAX_TIMER_MS,
      ),
    ),
  };
}
