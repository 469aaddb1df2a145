import { ttlMillis } from '../core/provider/abstract-simple-lock.js';
import { quoted } from '../core/provider/message-text.js';
import { describeProvider } from '../core/provider/provider-checks.js';
import { canAddressOwners, type OwnerAddressedLockProvider } from '../core/provider/provider-abilities.js';

/** What {@link LockStore.acquire} resolves to, as `@nestjs/locks` 0.0.1 declares it. */
export type LockAcquireResult = { acquired: true; fencingToken: number } | { acquired: false };

/**
 * The store contract of `@nestjs/locks` 0.0.1, declared here by its documented shape, so that this entry
 * compiles and loads without that package. Each method is one compare-and-set on the store.
 */
export interface LockStore {
  acquire(key: string, owner: string, ttl: number): Promise<LockAcquireResult>;
  renew(key: string, owner: string, ttl: number): Promise<boolean>;
  release(key: string, owner: string): Promise<boolean>;
}

/**
 * A `LockStore` for `@nestjs/locks` on one of this package's stores (Redis, PostgreSQL, in memory): a key is a
 * lock name, kept exactly; its owner is the lock's stored owner, which operators see; `ttl` runs on the store's
 * clock. Fencing tokens are the store's, which grow per key across releases and expiries.
 */
export class SchedulerLockStore implements LockStore {
  constructor(readonly provider: OwnerAddressedLockProvider) {
    if (!canAddressOwners(provider)) {
      throw new TypeError(
        `SchedulerLockStore: provider ${describeProvider(provider)} cannot renew or release by owner ` +
          '(renewByOwner, releaseByOwner): use RedisLockProvider, PostgresLockProvider or InMemoryLockProvider',
      );
    }
  }

  async acquire(key: string, owner: string, ttl: number): Promise<LockAcquireResult> {
    const configuration = { name: checkedKey(key), lockAtMostFor: checkedTtl(ttl), lockAtLeastFor: 0 };
    const lock = await this.provider.lock(configuration, { owner });
    if (!lock) return { acquired: false };
    const { fencingToken } = lock;
    if (!Number.isSafeInteger(fencingToken)) {
      throw new TypeError(`SchedulerLockStore: ${describeProvider(this.provider)} drew no fencing token`);
    }
    return { acquired: true, fencingToken: fencingToken as number };
  }

  async renew(key: string, owner: string, ttl: number): Promise<boolean> {
    return (await this.provider.renewByOwner(checkedKey(key), owner, checkedTtl(ttl))) === 'renewed';
  }

  async release(key: string, owner: string): Promise<boolean> {
    return (await this.provider.releaseByOwner(checkedKey(key), owner)) === 'released';
  }
}

/** A key as given, refused when it is no string or empty (on Redis Cluster, `{}` would split a lock's keys). */
function checkedKey(key: string): string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`SchedulerLockStore: a key must be a non-empty string (got ${quoted(key)})`);
  }
  return key;
}

/** A TTL in whole milliseconds, at least 1, as the contract passes it. */
function checkedTtl(ttl: number): number {
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 1) {
    throw new TypeError(`SchedulerLockStore: ttl must be a number of milliseconds, at least 1 (got ${quoted(ttl)})`);
  }
  return ttlMillis(ttl);
}
