import { randomUUID } from 'node:crypto';
import { AbstractSimpleLock } from '../core/abstract-simple-lock.js';
import type { LockConfiguration } from '../core/lock-configuration.js';
import {
  LockNotHeldError,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockProvider,
  type SimpleLock,
} from '../core/lock-provider.js';

interface HeldLock {
  token: string;
  /** `performance.now()` after which the lock is gone. */
  expiresAt: number;
}

/**
 * Locks in this process's memory, with the same semantics as {@link RedisLockProvider}
 * (expiry, `lockAtLeastFor`, owner checks, fencing tokens). For tests and single-process apps.
 */
export class InMemoryLockProvider implements LockProvider {
  private readonly locks = new Map<string, HeldLock>();
  private readonly fences = new Map<string, number>();

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const now = performance.now();
    if (this.holder(configuration.name, now)) return undefined;
    const token = randomUUID();
    const fencingToken = (this.fences.get(configuration.name) ?? 0) + 1;
    this.fences.set(configuration.name, fencingToken);
    this.locks.set(configuration.name, { token, expiresAt: now + configuration.lockAtMostFor });
    return new InMemorySimpleLock(this, token, configuration, fencingToken, now);
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    return renewals.map(({ lock, ttl }) => {
      const held = this.ownedBy(lock.configuration.name, (lock as InMemorySimpleLock).token);
      if (held instanceof LockNotHeldError) return held.reason;
      held.expiresAt = performance.now() + ttl;
      return 'renewed';
    });
  }

  /** @internal The live lock of a name, dropping it if it has expired. */
  holder(name: string, now = performance.now()): HeldLock | undefined {
    const held = this.locks.get(name);
    if (held && held.expiresAt <= now) {
      this.locks.delete(name);
      return undefined;
    }
    return held;
  }

  /** The lock of `name` if `token` still owns it; otherwise why not. */
  ownedBy(name: string, token: string): HeldLock | LockNotHeldError {
    const held = this.holder(name);
    if (!held) return new LockNotHeldError(name, 'expired');
    if (held.token !== token) return new LockNotHeldError(name, 'not-owner');
    return held;
  }

  /** @internal */
  delete(name: string): void {
    this.locks.delete(name);
  }
}

class InMemorySimpleLock extends AbstractSimpleLock {
  constructor(
    private readonly store: InMemoryLockProvider,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
  ) {
    super(configuration, acquiredAt);
  }

  protected async release(keepFor: number): Promise<void> {
    const held = this.store.ownedBy(this.configuration.name, this.token);
    if (held instanceof LockNotHeldError) throw held;
    if (keepFor > 0) held.expiresAt = performance.now() + keepFor;
    else this.store.delete(this.configuration.name);
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const held = this.store.ownedBy(configuration.name, this.token);
    if (held instanceof LockNotHeldError) return undefined;
    const now = performance.now();
    held.expiresAt = now + configuration.lockAtMostFor;
    return new InMemorySimpleLock(this.store, this.token, configuration, this.fencingToken, now);
  }
}
