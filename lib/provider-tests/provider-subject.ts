import type { LockProvider } from '../core/provider/lock-provider.js';

/**
 * A store under test, as the conformance kit reaches it: nodes (providers) onto one shared store, made
 * and closed by the kit, one set per check.
 */
export interface LockProviderSubject<P extends LockProvider = LockProvider> {
  /** Names the store in the checks' names, e.g. `MongoLockProvider`. */
  readonly name: string;
  /**
   * What the ability sections are chosen by: the provider's class (its prototype's methods tell its
   * abilities) or one provider object. Nothing is called on it.
   */
  readonly provider: (abstract new (...args: never[]) => P) | P;
  /**
   * A node on the store under test, like a provider in another process: with its own connection
   * where the store has connections. Every node of a check, two or nine, must reach the same store.
   * With `node`, the node's name in its locks (the identity checks give names that look like the store's
   * own markers); a store whose nodes have no name ignores it, one that refuses a name throws naming `node`.
   */
  create(node?: string): P | Promise<P>;
  /** Closes a node {@link create} made, after its check (e.g. quits its connection). */
  cleanup?(provider: P): unknown;
  /** The provider's locks carry a `fencingToken` that increases strictly per name: check it. */
  readonly fencingTokens?: boolean;
  /** A lock object refuses a second `unlock()` / `extend()`, as `AbstractSimpleLock` does: check it. */
  readonly singleUseLocks?: boolean;
  /**
   * The lock, in ms, that checks watch expire; default 50. Make it longer for a store whose round trip
   * is a sizeable part of 50 ms.
   */
  readonly shortLock?: number;
  /**
   * How much earlier than by this process's clock, in ms, an expiry may come (a store that keeps TTLs on
   * its own clock, or rounds them); default 5.
   */
  readonly clockTolerance?: number;
  /**
   * The kit's clock: `now()` in ms (monotonic, as `performance.now()`), and `sleep(ms)`, which resolves once `ms`
   * have passed. Every wait and time reading of the kit goes through it; default: the process's real clock.
   * When the store reads the process's clock (an in-memory store), a test may run the kit on fake timers. With
   * Jest's, `now` reads `performance.now()` and `sleep` calls `jest.advanceTimersByTimeAsync(ms)`, one call after
   * the other: the kit's waits overlap (the fuzz workers, two apps), and overlapping advances could set the clock
   * back. The checks then run one at a time (no `concurrent` in the `TestRunner`). The dates the kit gives the
   * store (occurrences, heartbeats) come from `Date`, which Jest's fake timers move too.
   */
  readonly clock?: {
    now(): number;
    sleep(ms: number): Promise<void>;
  };
}

/** What the kit reads the time from and waits on: see {@link LockProviderSubject.clock}. */
export type KitClock = NonNullable<LockProviderSubject['clock']>;

/** One named check of the kit: `run()` resolves when the provider passed, and rejects with why not. */
export interface ProviderCheck {
  /** The section: `lock` (every provider), or the ability it checks, e.g. `renewLeases`. */
  readonly section: string;
  readonly name: string;
  /**
   * The check waits on an app's schedule and times nothing itself: it may run alongside other checks (see
   * `TestRunner.concurrent`).
   */
  readonly concurrent: boolean;
  run(): Promise<void>;
}

/** What a check is given: two nodes on the store, a way to make more, and the subject's timing. */
export interface CheckNodes<P extends LockProvider = LockProvider> {
  /** The node under test. */
  readonly provider: P;
  /** Another node on the same store. */
  readonly other: P;
  /** One more node on the store (named `node`, if given), closed after the check like the first two. */
  connect(node?: string): Promise<P>;
  /** Closes a node {@link connect} made before the check ends, for a check that makes many. */
  close(node: P): Promise<void>;
  readonly shortLock: number;
  readonly clockTolerance: number;
  /** The subject's {@link LockProviderSubject.clock}, or the real one. */
  readonly clock: KitClock;
}

/** A check before it is given its nodes. */
export interface CheckDefinition<P extends LockProvider = LockProvider> {
  readonly name: string;
  /** See {@link ProviderCheck.concurrent}; default `false`. */
  readonly concurrent?: boolean;
  run(nodes: CheckNodes<P>): Promise<void>;
}
