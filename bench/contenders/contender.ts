import type { Redis } from 'ioredis';

/**
 * A way to take and release a Redis lock, measured by the lock-cycle benchmark. Worker `w` always
 * uses its own lock names, so uncontended workers never meet and contended ones each hit a lock that
 * another client holds.
 */
export interface Contender {
  readonly label: string;
  /** The one client this contender shares among all its workers, as an app would. */
  readonly client: Redis;
  /** Takes worker `w`'s free lock, calls `whileHeld` while holding it, and releases it; rejects if either step fails. */
  cycle(worker: number, whileHeld?: () => void): Promise<void>;
  /** Makes worker `w`'s contended lock held by `holder`, another client, for the whole run. */
  holdElsewhere(worker: number, holder: Redis): Promise<void>;
  /** One attempt at worker `w`'s contended lock; rejects if the attempt wrongly succeeds. */
  attemptHeld(worker: number): Promise<void>;
}

/** The free lock of worker `w`. */
export function freeLockName(worker: number): string {
  return `free-${worker}`;
}

/** The lock of worker `w` that is held elsewhere. */
export function heldLockName(worker: number): string {
  return `held-${worker}`;
}

/** How long a contended lock is held by the other client: longer than any run, short enough to clean up after a crash. */
export const HOLD_ELSEWHERE_MS = 10 * 60_000;

/** Shared settings of every contender. */
export interface ContenderSettings {
  /** A prefix no one else uses; every key of the contender starts with it. */
  readonly keyPrefix: string;
  /** TTL of a taken lock (lockAtMostFor). */
  readonly ttlMs: number;
}

/** The error for a lock operation that did not do what the benchmark relies on. */
export function unexpected(contender: string, what: string): Error {
  return new Error(`${contender}: ${what}; the measurement would be meaningless`);
}
