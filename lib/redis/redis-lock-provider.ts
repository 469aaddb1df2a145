import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AbstractSimpleLock, ttlMillis } from '../core/abstract-simple-lock.js';
import type { LockConfiguration } from '../core/lock-configuration.js';
import {
  LockNotHeldError,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type LockProvider,
  type SimpleLock,
} from '../core/lock-provider.js';
import { OwnerCheck, withLockCommands, type LockCommands, type RedisClient } from './redis-scripts.js';

/** Options of {@link RedisLockProvider}. */
export interface RedisLockProviderOptions {
  /** Prefix of every key, so several apps or environments can share one Redis. Default `job-lock`. */
  keyPrefix?: string;
  /** Stored with each lock so an operator can see who holds it. Default `<hostname>:<pid>`. */
  lockedBy?: string;
}

/** The default key prefix, shared by the module and the provider. */
export const DEFAULT_KEY_PREFIX = 'job-lock';

/** The default `lockedBy`: this host and process. */
export function defaultLockedBy(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * Locks in Redis (single node, Sentinel or Cluster through ioredis). A lock is the hash
 * `<keyPrefix>:{<name>}` (fields `token`, `lockedBy`, `lockedAt`, `fence`) with a TTL of
 * `lockAtMostFor`; its fencing counter is `<keyPrefix>:{<name>}:fence`. The braces keep both keys in
 * one Cluster slot. One round trip to acquire, one to release, both owner-checked Lua scripts.
 *
 * Leases of `keepAlive` runs are renewed in one script call per renewal round on a single node; on a
 * Cluster, where keys live in different slots, one call per lock, sent together.
 *
 * The client is the caller's: the provider never closes it.
 */
export class RedisLockProvider implements LockProvider {
  private readonly client: RedisClient & LockCommands;
  readonly keyPrefix: string;
  readonly lockedBy: string;

  constructor(client: RedisClient, options: RedisLockProviderOptions = {}) {
    this.client = withLockCommands(client);
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.lockedBy = options.lockedBy ?? defaultLockedBy();
  }

  /** The Redis key of a lock name, for operators and tests. */
  lockKey(name: string): string {
    return `${this.keyPrefix}:{${name}}`;
  }

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const key = this.lockKey(configuration.name);
    const token = randomUUID();
    const fence = await this.client.schedulerLockAcquire(
      key,
      `${key}:fence`,
      token,
      ttlMillis(configuration.lockAtMostFor),
      this.lockedBy,
    );
    if (fence === null) return undefined;
    return new RedisSimpleLock(this.client, key, token, configuration, Number(fence), performance.now());
  }

  async renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    const locks = renewals.map(({ lock }) => lock as RedisSimpleLock);
    let outcomes: OwnerCheck[];
    if (this.client.isCluster) {
      outcomes = await Promise.all(
        locks.map((lock, i) => this.client.schedulerLockExtend(lock.key, lock.token, ttlMillis(renewals[i].ttl))),
      );
    } else {
      const tokensAndTtls = locks.flatMap((lock, i) => [lock.token, ttlMillis(renewals[i].ttl)]);
      outcomes = await this.client.schedulerLockRenew(locks.length, ...locks.map((lock) => lock.key), ...tokensAndTtls);
    }
    return outcomes.map((outcome) => (outcome === OwnerCheck.Done ? 'renewed' : notHeldReason(outcome)));
  }
}

class RedisSimpleLock extends AbstractSimpleLock {
  constructor(
    private readonly client: LockCommands,
    readonly key: string,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
  ) {
    super(configuration, acquiredAt);
  }

  protected async release(keepFor: number): Promise<void> {
    const outcome = await this.client.schedulerLockRelease(this.key, this.token, keepFor);
    if (outcome !== OwnerCheck.Done) throw notHeld(this.configuration.name, outcome);
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const outcome = await this.client.schedulerLockExtend(this.key, this.token, ttlMillis(configuration.lockAtMostFor));
    if (outcome !== OwnerCheck.Done) return undefined;
    return new RedisSimpleLock(this.client, this.key, this.token, configuration, this.fencingToken, performance.now());
  }
}

function notHeld(name: string, outcome: OwnerCheck): LockNotHeldError {
  return new LockNotHeldError(name, notHeldReason(outcome));
}

function notHeldReason(outcome: OwnerCheck): LockNotHeldReason {
  return outcome === OwnerCheck.Expired ? 'expired' : 'not-owner';
}
