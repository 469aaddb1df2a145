import type { DurationInput } from '../../core/provider/duration.js';
import { defaultLockedBy } from '../../core/provider/default-locked-by.js';
import { nonEmptyStringOption, optionsObject, wholeNumberOption } from '../../core/provider/option-values.js';
import { DEFAULT_HISTORY_LIMIT } from '../../operators/operator-provider.js';
import { replicaAckSettings } from './replica-ack.js';

/**
 * Options of {@link RedisLockProvider}, checked when it is constructed: a value outside what each option says,
 * or a key that is none of these, throws a `SchedulerLockConfigurationError` naming the option and the value.
 */
export interface RedisLockProviderOptions {
  /** Prefix of every key, so several apps or environments can share one Redis: a non-empty string. Default job-lock. */
  keyPrefix?: string;
  /**
   * Stored with each lock and run so an operator can see who holds it: a non-empty string. Default
   * `<hostname>:<pid>`. The module's own `node` option does not reach a provider the app builds: set it here.
   */
  node?: string;
  /** How many runs (and operator actions) each job's history keeps: a whole number from 1 to 2^31-1. Default 50. */
  historyLimit?: number;
  /**
   * A lock counts as taken only once this many replicas acknowledged it (Redis `WAIT`, one more round trip
   * per lock taken), so a failover right after it was taken does not lose it: a whole number from 1 to 2^31-1.
   * Not on a Cluster client. Default: none (the lock is taken once the primary has it).
   */
  minReplicasToAck?: number;
  /**
   * How long a taken lock waits for `minReplicasToAck` replicas before it is released unused: ms or a duration
   * string (`'500ms'`), greater than 0 and at most 2^31-1 ms, rounded up to whole ms. Only with
   * `minReplicasToAck`. Default 500 ms.
   */
  replicaAckTimeout?: DurationInput;
}

/** The default key prefix, shared by the module and the provider. */
export const DEFAULT_KEY_PREFIX = 'job-lock';

const SUBJECT = 'RedisLockProvider options';

/** Every option of {@link RedisLockProviderOptions}: any other key is a typo that would be ignored. */
const OPTIONS: readonly (keyof RedisLockProviderOptions)[] = [
  'keyPrefix',
  'node',
  'historyLimit',
  'minReplicasToAck',
  'replicaAckTimeout',
];

/** The provider's options, checked, with their defaults. */
export function redisProviderSettings(options: RedisLockProviderOptions | undefined) {
  const given = optionsObject(options, OPTIONS, SUBJECT);
  return {
    keyPrefix: nonEmptyStringOption(given.keyPrefix, DEFAULT_KEY_PREFIX, 'keyPrefix', SUBJECT),
    node: nonEmptyStringOption(given.node, defaultLockedBy(), 'node', SUBJECT),
    historyLimit: wholeNumberOption(given.historyLimit, DEFAULT_HISTORY_LIMIT, 'historyLimit', SUBJECT),
    replicaAck: replicaAckSettings(given, SUBJECT),
  };
}
