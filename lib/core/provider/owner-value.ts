import { randomUUID } from 'node:crypto';

/**
 * The value a store that keeps a lock's owner as one string (Redis, PostgreSQL) writes into a held lock:
 * `owner:<epoch ms taken>:<unique id>:<lockedBy>`. The node's `lockedBy` comes last and as given, so that no
 * character of it can change how the fixed fields before it parse.
 */
export const OWNER_TAG = 'owner:';
/**
 * The start of the value an operator's force-release leaves in a lock until the old lock would have expired:
 * `force-unlocked:<epoch ms>:<actor>`. Owner values start with {@link OWNER_TAG}, so none can read as one.
 */
export const FORCE_UNLOCK_TAG = 'force-unlocked:';

/** A held lock's owner, as operators see it. */
export interface LockOwnerValue {
  /** The node that took it, as its `lockedBy` was given. */
  readonly lockedBy: string;
  /** When it was taken (epoch ms, the holder's clock). */
  readonly since: number;
}

const OWNER_VALUE = new RegExp(`^${OWNER_TAG}(\\d+):[^:]*:(.*)$`, 's');

/** The owner values of one node (one provider): each acquisition gets a value no other one has. */
export class OwnerValues {
  /** Random per provider, so owner values stay unique even when several processes share a `lockedBy`. */
  private readonly ownerId = randomUUID().slice(0, 13);
  private acquisitions = 0;

  /** A new owner value. A counter behind a random prefix costs a fraction of a UUID, which the lock cycle feels. */
  next(lockedBy: string): string {
    return `${OWNER_TAG}${Date.now()}:${this.ownerId}-${++this.acquisitions}:${lockedBy}`;
  }
}

/** The value an operator's force-release by `actor` at `at` (epoch ms) leaves in the lock. */
export function forceUnlockMarker(actor: string, at: number): string {
  return `${FORCE_UNLOCK_TAG}${at}:${actor}`;
}

/** The owner a lock's `value` names; undefined for a value that is no owner value (a force-release marker). */
export function readOwnerValue(value: string): LockOwnerValue | undefined {
  const parts = OWNER_VALUE.exec(value);
  return parts ? { since: Number(parts[1]), lockedBy: parts[2] } : undefined;
}
