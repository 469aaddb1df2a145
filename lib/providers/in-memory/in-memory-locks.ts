import { randomUUID } from 'node:crypto';
import { AbstractSimpleLock } from '../../core/provider/abstract-simple-lock.js';
import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import {
  LockNotHeldError,
  type RunOutcome,
  type RunReport,
  type SimpleLock,
} from '../../core/provider/lock-provider.js';

/** A lock as the table keeps it. */
export interface HeldLock {
  token: string;
  /** `performance.now()` after which the lock is gone. */
  expiresAt: number;
  /** Who took it, and when (epoch ms), for operators. */
  readonly node: string;
  readonly since: number;
  readonly fencingToken: number;
  /** Force-released by an operator: free to take, but its former holder finds it lost (`not-owner`). */
  readonly released?: boolean;
}

/** What a lock of a scheduled job's run tells its provider when the run ends. */
export interface RunEnd {
  readonly lock: InMemorySimpleLock;
  readonly outcome: RunOutcome;
  readonly report?: RunReport;
  /** Whether the lock was still the run's when it ended. */
  readonly held: boolean;
}

/**
 * The locks of one {@link InMemoryLockProvider}, by name, with their fencing counters. Times are
 * `performance.now()` values, so a wall-clock jump cannot shorten or stretch a lock.
 */
export class InMemoryLocks {
  private readonly locks = new Map<string, HeldLock>();
  /** The last fencing token: one counter for every name, so a name leaves nothing behind once it is free. */
  private lastFence = 0;

  constructor(
    /** Called when a lock's run ends (`finish()`), before the lock is released: records it. */
    private readonly runEnded: (end: RunEnd) => void,
  ) {}

  /** The live lock of a name, dropping it if it has expired; a force-released one is free. */
  holder(name: string, now = performance.now()): HeldLock | undefined {
    const held = this.locks.get(name);
    if (held && held.expiresAt <= now) {
      this.locks.delete(name);
      return undefined;
    }
    return held?.released ? undefined : held;
  }

  /** The fencing token the holder of `name` drew. */
  fence(name: string): number | undefined {
    return this.locks.get(name)?.fencingToken;
  }

  /**
   * Takes the lock of `configuration` (free, as the caller checked) for the node `node` and draws its fencing
   * token. `ofJob`: the lock of a scheduled job's run, whose end goes into the job's history. `token`: the lock's
   * value, a random one unless the caller chose its owner.
   */
  take(configuration: LockConfiguration, node: string, ofJob = false, token: string = randomUUID()) {
    const now = performance.now();
    const fencingToken = ++this.lastFence;
    const held = { token, expiresAt: now + configuration.lockAtMostFor, node, since: Date.now(), fencingToken };
    this.locks.set(configuration.name, held);
    return new InMemorySimpleLock(this, token, configuration, fencingToken, now, { ofJob, node });
  }

  /** Makes the live lock of `name` expire now: its holder finds it lost (`expired`). Returns who held it. */
  expire(name: string): string | undefined {
    const held = this.holder(name);
    if (held) held.expiresAt = performance.now();
    return held?.node;
  }

  /** Forgets every lock and the fencing counter: a clean slate, whose first token is 1 again. */
  clear(): void {
    this.locks.clear();
    this.lastFence = 0;
  }

  /** The lock of `name` if `token` still owns it; otherwise why not. */
  ownedBy(name: string, token: string): HeldLock | LockNotHeldError {
    const held = this.locks.get(name);
    if (!held || held.expiresAt <= performance.now()) return new LockNotHeldError(name, 'expired');
    if (held.token !== token) return new LockNotHeldError(name, 'not-owner');
    return held;
  }

  /**
   * Renews (`ttl` ms from now) or, without `ttl`, releases the live lock of `name` if its value is `token`;
   * otherwise why not, changing nothing.
   */
  settle(name: string, token: string, ttl?: number): LockNotHeldError | undefined {
    const held = this.ownedBy(name, token);
    if (held instanceof LockNotHeldError) return held;
    if (ttl === undefined) this.locks.delete(name);
    else held.expiresAt = performance.now() + ttl;
    return undefined;
  }

  /**
   * An operator's force-release: the lock is free at once, while its holder finds it lost (`not-owner`) until
   * it would have expired. Returns the former holder's `node`.
   */
  forceRelease(name: string): string | undefined {
    const held = this.holder(name);
    if (!held) return undefined;
    this.locks.set(name, { ...held, token: 'unlocked', released: true });
    return held.node;
  }

  /** @internal */
  release(lock: InMemorySimpleLock, keepFor: number, outcome?: RunOutcome, report?: RunReport): void {
    const { name } = lock.configuration;
    const held = this.ownedBy(name, lock.token);
    if (outcome !== undefined) this.runEnded({ lock, outcome, report, held: !(held instanceof LockNotHeldError) });
    if (held instanceof LockNotHeldError) throw held;
    if (keepFor > 0) held.expiresAt = performance.now() + keepFor;
    else this.locks.delete(name);
  }

  /** @internal */
  prolong(lock: InMemorySimpleLock, configuration: LockConfiguration): InMemorySimpleLock | undefined {
    const held = this.ownedBy(configuration.name, lock.token);
    if (held instanceof LockNotHeldError) return undefined;
    const now = performance.now();
    held.expiresAt = now + configuration.lockAtMostFor;
    return new InMemorySimpleLock(this, lock.token, configuration, lock.fencingToken, now, lock);
  }
}

/** Whose a lock of the table is. */
interface LockOwner {
  /** The lock of a scheduled job's run (not of `executeWithLock`): its end goes into the job's history. */
  readonly ofJob: boolean;
  /** The node that took it. */
  readonly node: string;
}

/** A lock of the table: its name held with `token`. */
export class InMemorySimpleLock extends AbstractSimpleLock implements LockOwner {
  readonly ofJob: boolean;
  readonly node: string;

  constructor(
    private readonly table: InMemoryLocks,
    readonly token: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    acquiredAt: number,
    { ofJob, node }: LockOwner,
  ) {
    super(configuration, acquiredAt);
    this.ofJob = ofJob;
    this.node = node;
  }

  // unlock() records no outcome: an occurrence given back unused still reads running, as after a crash.
  protected async release(keepFor: number, outcome?: RunOutcome, report?: RunReport): Promise<void> {
    this.table.release(this, keepFor, outcome, report);
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    return this.table.prolong(this, configuration);
  }
}
