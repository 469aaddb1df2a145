import type { Redis } from 'ioredis';
import { type LockConfiguration } from 'nest-scheduler-lock/provider';
import {
  freeLockName,
  heldLockName,
  HOLD_ELSEWHERE_MS,
  unexpected,
  type Contender,
  type ContenderSettings,
} from './contender.js';
import { RedisLockProvider, type RedisLockProviderOptions } from 'nest-scheduler-lock/redis';

const LABEL = 'ours RedisLockProvider';

/** `RedisLockProvider.lock()` + `SimpleLock.unlock()`, configurations built once as the module does at startup. */
export function oursContender(client: Redis, settings: ContenderSettings, maxWorkers: number): Contender {
  return providerContender(LABEL, client, settings, maxWorkers);
}

/** {@link oursContender} with `minReplicasToAck: 1`: a `WAIT 1` after each lock taken (needs a replica). */
export function replicaAckedContender(client: Redis, settings: ContenderSettings, maxWorkers: number): Contender {
  return providerContender('ours, minReplicasToAck 1', client, settings, maxWorkers, { minReplicasToAck: 1 });
}

function providerContender(
  label: string,
  client: Redis,
  { keyPrefix, ttlMs }: ContenderSettings,
  maxWorkers: number,
  options: Pick<RedisLockProviderOptions, 'minReplicasToAck'> = {},
): Contender {
  const provider = new RedisLockProvider(client, { keyPrefix, node: 'bench', ...options });
  const configuration = (name: string): LockConfiguration => ({ name, lockAtMostFor: ttlMs, lockAtLeastFor: 0 });
  const free = Array.from({ length: maxWorkers }, (_, worker) => configuration(freeLockName(worker)));
  const held = Array.from({ length: maxWorkers }, (_, worker) => configuration(heldLockName(worker)));
  return {
    label: label,
    client,
    async cycle(worker, whileHeld) {
      const lock = await provider.lock(free[worker]);
      if (!lock) throw unexpected(label, 'a free lock was not taken');
      whileHeld?.();
      await lock.unlock();
    },
    holdElsewhere: (worker, holder) => holdWithProvider(holder, keyPrefix, heldLockName(worker), label),
    async attemptHeld(worker) {
      if (await provider.lock(held[worker])) throw unexpected(label, 'a lock held elsewhere was taken');
    },
  };
}

/** Takes `name` for {@link HOLD_ELSEWHERE_MS} through a provider of another client and another `node`. */
export async function holdWithProvider(
  holder: Redis,
  keyPrefix: string,
  name: string,
  contender: string,
): Promise<void> {
  const elsewhere = new RedisLockProvider(holder, { keyPrefix, node: 'bench-holder' });
  const lock = await elsewhere.lock({ name, lockAtMostFor: HOLD_ELSEWHERE_MS, lockAtLeastFor: 0 });
  if (!lock) throw unexpected(contender, 'the holder could not take its lock');
}
