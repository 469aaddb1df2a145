import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type LockConfiguration, type LockProvider, type SimpleLock } from '../../lib/provider/index.js';
import { LockNotHeldError } from '../../lib/provider/index.js';

/**
 * Sets the lock's TTL to ARGV[2] ms (deletes it for 0) if ARGV[1] still owns it. Replies 1 when done,
 * 0 when the lock is gone, -1 when another owner holds it.
 */
const OWNER_CHECKED_EXPIRE = `
local owner = redis.call('GET', KEYS[1])
if not owner then return 0 end
if owner ~= ARGV[1] then return -1 end
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) else redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * A provider written from the README's `LockProvider` contract alone, the way an app would write its
 * own: only `lock()`, and locks with only `unlock()` and `extend()` — no `configuration`, fencing
 * token, `finish()` or optional capability, not built on `AbstractSimpleLock`, and lock objects are
 * not single-use. A lock is `SET <prefix>:<name> <owner> NX PX <lockAtMostFor>`.
 */
export class MinimalRedisLockProvider implements LockProvider {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async lock({ name, lockAtMostFor, lockAtLeastFor }: LockConfiguration): Promise<SimpleLock | undefined> {
    const key = `${this.keyPrefix}:${name}`;
    const owner = randomUUID();
    const taken = await this.redis.set(key, owner, 'PX', Math.max(1, Math.ceil(lockAtMostFor)), 'NX');
    if (taken !== 'OK') return undefined;
    return new MinimalRedisLock(this.redis, name, key, owner, performance.now() + lockAtLeastFor);
  }
}

class MinimalRedisLock implements SimpleLock {
  constructor(
    private readonly redis: Redis,
    private readonly name: string,
    private readonly key: string,
    private readonly owner: string,
    /** Until when a release keeps the lock (`lockAtLeastFor`), as `performance.now()`. */
    private readonly keepUntil: number,
  ) {}

  async unlock(): Promise<void> {
    const keepFor = Math.max(0, Math.ceil(this.keepUntil - performance.now()));
    const outcome = await this.redis.eval(OWNER_CHECKED_EXPIRE, 1, this.key, this.owner, keepFor);
    if (outcome !== 1) throw new LockNotHeldError(this.name, outcome === 0 ? 'expired' : 'not-owner');
  }

  async extend(lockAtMostFor: number, lockAtLeastFor: number): Promise<SimpleLock | undefined> {
    const ttl = Math.max(1, Math.ceil(lockAtMostFor));
    const outcome = await this.redis.eval(OWNER_CHECKED_EXPIRE, 1, this.key, this.owner, ttl);
    if (outcome !== 1) return undefined;
    return new MinimalRedisLock(this.redis, this.name, this.key, this.owner, performance.now() + lockAtLeastFor);
  }
}
