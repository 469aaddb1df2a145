import type { DurationInput } from '../core/provider/duration.js';
import { createLockConfiguration, positiveDurationOption } from '../core/provider/lock-configuration.js';
import { nonEmptyStringOption, optionsObject } from '../core/provider/option-values.js';
import type { SimpleLock } from '../core/provider/lock-provider.js';
import { InMemoryLockProvider } from '../providers/in-memory/in-memory-lock-provider.js';
import { InMemoryStore } from '../providers/in-memory/in-memory-store.js';
import { assertRanOnce, runsOf, type TestRun } from './test-runs.js';

/** Who holds a lock the test took "as another node", by default. */
const ANOTHER_NODE = 'another-node';
/** How long a lock held "until released" lasts: longer than any test. */
const UNTIL_RELEASED = 365 * 24 * 3_600_000;
/** How many runs and operator actions each job's history keeps in a test: all of a test's, in practice. */
const TEST_HISTORY_LIMIT = 10_000;

/** Options of {@link TestLockProvider.hold}; another key, or another value, throws naming it. */
export interface HoldOptions {
  /** The node that holds it, as history and the console show it: a non-empty string. Default `'another-node'`. */
  as?: string;
  /**
   * How long it is held (its `lockAtMostFor`), as `'10m'`, an ISO-8601 duration or ms, greater than 0. Default:
   * until released.
   */
  for?: DurationInput;
}

const HOLD_OPTIONS: readonly (keyof HoldOptions)[] = ['as', 'for'];

/** A lock a test holds "as another node": a tick of its job is skipped (`locked`) meanwhile. */
export interface HeldTestLock {
  /** The lock's name. */
  readonly name: string;
  /** The node that holds it. */
  readonly node: string;
  /** Gives the lock back; does nothing once it has expired or was lost. */
  release(): Promise<void>;
}

/**
 * One in-memory store shared by the nodes of a simulated cluster in one process: the locks, the job records of
 * once-per-occurrence jobs and the console's records, with the same semantics as Redis (it is the store of
 * `InMemoryLockProvider`). Each node gets its own provider from {@link provider}, with its own `node`.
 *
 * Time: locks expire on `performance.now()` and records use `Date.now()`, read on every call, so they follow
 * Jest's and Vitest's fake timers.
 */
export class TestLockProvider {
  private readonly store = new InMemoryStore(TEST_HISTORY_LIMIT);

  /** A provider that is the node `node` of this store's cluster. */
  provider(node: string): InMemoryLockProvider {
    return new InMemoryLockProvider({ node, store: this.store });
  }

  /**
   * Takes the lock `name` as another node, for a while (`for`) or until released: the skip path of a job whose
   * lock is held elsewhere.
   *
   * @throws Error when the lock is held already.
   */
  async hold(name: string, options?: HoldOptions): Promise<HeldTestLock> {
    const subject = `TestLockProvider.hold("${name}") options`;
    const given = optionsObject(options, HOLD_OPTIONS, subject);
    const node = nonEmptyStringOption(given.as, ANOTHER_NODE, 'as', subject);
    const lockAtMostFor = positiveDurationOption(given.for, UNTIL_RELEASED, 'for', subject);
    const configuration = createLockConfiguration(name, { lockAtMostFor }, { lockAtMostFor, lockAtLeastFor: 0 });
    const lock = await this.provider(node).lock(configuration);
    if (!lock) throw new Error(`Cannot hold lock "${name}" as ${node}: ${this.holderOf(name)} holds it`);
    return { name, node, release: () => releaseIfHeld(lock) };
  }

  /**
   * Makes the lock `name` expire now, whoever holds it: the next tick takes it, and a run that still holds it finds
   * it lost (`expired`) at its next lease renewal, its signal aborted, or at its release. Returns who held it.
   */
  expire(name: string): string | undefined {
    return this.store.locks.expire(name);
  }

  /**
   * Another node takes the lock `name` from its holder, as after a store failover or an expiry the holder did not
   * see: a run that still holds it finds it lost (`not-owner`) at its next lease renewal, its signal aborted.
   */
  lose(name: string, options?: HoldOptions): Promise<HeldTestLock> {
    this.expire(name);
    return this.hold(name, options);
  }

  /**
   * The runs of the job whose lock is `name` (its job name unless it sets `name`) that ended since the last
   * {@link reset}, oldest first: which node ran which occurrence, and how it ended.
   */
  async runs(name: string): Promise<TestRun[]> {
    return runsOf(await this.store.operators.history(name, TEST_HISTORY_LIMIT));
  }

  /**
   * Asserts that the job whose lock is `name` ran exactly once, for `occurrence` when given (a cron job's fire
   * time), else since the last {@link reset}; resolves to that run (its `node` says where it ran). Every attempt
   * counts: a run whose node died (`crashed`) and its re-run are two.
   *
   * @throws AssertionError naming each run (node, occurrence, outcome) when it ran twice or more, or never.
   */
  async expectRanOnce(name: string, occurrence?: Date): Promise<TestRun> {
    return assertRanOnce(name, await this.runs(name), occurrence);
  }

  /**
   * A clean slate between tests: every lock, fencing counter, job record, history, pause, trigger and skip count
   * is forgotten. The nodes and their jobs stay known to the console: they are the apps still running.
   */
  reset(): void {
    this.store.clear();
  }

  private holderOf(name: string): string {
    return this.store.locks.holder(name)?.node ?? 'another node';
  }
}

async function releaseIfHeld(lock: SimpleLock): Promise<void> {
  try {
    await lock.unlock();
  } catch {
    // Expired or lost: nothing left to give back.
  }
}
