import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LockConfiguration, LockProvider, SimpleLock } from '../../lib/provider/index.js';
import type { LeaseRenewal, LeaseRenewalOutcome } from '../../lib/core/provider/lock-provider.js';
import type { LeaseRenewingLockProvider } from '../../lib/core/provider/provider-abilities.js';

/** Wraps a provider and records every `lock()` call and every lock it handed out. */
export class RecordingLockProvider implements LockProvider {
  readonly requests: LockConfiguration[] = [];
  readonly locks: SimpleLock[] = [];

  constructor(private readonly inner: LockProvider) {}

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    this.requests.push(configuration);
    const lock = await this.inner.lock(configuration);
    if (lock) this.locks.push(lock);
    return lock;
  }
}

/** A provider whose store is unreachable: every `lock()` rejects with `error`. */
export class UnreachableLockProvider implements LockProvider {
  attempts = 0;

  constructor(private readonly error: Error) {}

  async lock(): Promise<SimpleLock | undefined> {
    this.attempts += 1;
    throw this.error;
  }
}

/**
 * A provider handing out `inner`'s real locks with `unlock()` replaced by `unlock(lock)`, for doubles
 * that change only how a release behaves.
 */
abstract class UnlockReplacingProvider implements LockProvider {
  constructor(private readonly inner: LockProvider) {}

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const lock = await this.inner.lock(configuration);
    if (!lock) return undefined;
    return {
      configuration: lock.configuration,
      fencingToken: lock.fencingToken,
      extend: (lockAtMostFor, lockAtLeastFor) => lock.extend(lockAtMostFor, lockAtLeastFor),
      unlock: () => this.unlock(lock),
    };
  }

  protected abstract unlock(lock: SimpleLock): Promise<void>;
}

/**
 * Takes real locks from `inner`, but their `unlock()` rejects with `error` without releasing, as when
 * the store goes away during a run. The lock then stays until it expires.
 */
export class FailingReleaseLockProvider extends UnlockReplacingProvider {
  constructor(
    inner: LockProvider,
    private readonly error: Error,
  ) {
    super(inner);
  }

  protected unlock(): Promise<void> {
    return Promise.reject(this.error);
  }
}

/**
 * Takes real locks from `inner` whose `unlock()` waits one event-loop turn before releasing, as a store
 * round trip does. Code that does not wait for the release then visibly runs ahead of it, even though
 * `inner` releases at once.
 */
export class SlowReleaseLockProvider extends UnlockReplacingProvider {
  protected async unlock(lock: SimpleLock): Promise<void> {
    await nextTurn();
    await lock.unlock();
  }
}

/**
 * `inner`, as a store that can go away: while `down`, every call rejects, as an unreachable store's does. Its
 * locks are `inner`'s own objects, their releases patched, so `inner.renewLeases()` still knows them.
 */
export class OutageProvider {
  down = false;
  private readonly outage = new Error('connect ECONNREFUSED 127.0.0.1:6390');

  constructor(private readonly inner: LeaseRenewingLockProvider) {}

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    if (this.down) throw this.outage;
    const lock = await this.inner.lock(configuration);
    if (!lock) return lock;
    const { unlock, finish } = { unlock: lock.unlock.bind(lock), finish: lock.finish?.bind(lock) };
    const unlessDown =
      <A extends unknown[]>(release: (...args: A) => Promise<void>) =>
      (...args: A) =>
        this.down ? Promise.reject(this.outage) : release(...args);
    return Object.assign(lock, { unlock: unlessDown(unlock), ...(finish && { finish: unlessDown(finish) }) });
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    if (this.down) throw this.outage;
    return this.inner.renewLeases(renewals);
  }
}
