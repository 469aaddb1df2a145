import { randomUUID } from 'node:crypto';
import { quoted } from './message-text.js';

/**
 * The value a store that keeps a lock's owner as one string (Redis, PostgreSQL) writes into a held lock:
 * `owner:<epoch ms taken>:<unique id>:<node>`. The node's `node` comes last and as given, so that no
 * character of it can change how the fixed fields before it parse.
 */
export const OWNER_TAG = 'owner:';
/**
 * The start of the value an operator's force-release leaves in a lock until the old lock would have expired:
 * `force-unlocked:<epoch ms>:<actor>`. Owner values start with {@link OWNER_TAG}, so none can read as one.
 */
export const FORCE_UNLOCK_TAG = 'force-unlocked:';
/**
 * The start of the value of a lock whose owner the caller chose (owner-addressed locks):
 * `owned:<epoch ms taken>:<owner>`. Renewed and released by `<owner>` alone, the time is not compared.
 */
export const CALLER_OWNER_TAG = 'owned:';

/** A held lock's owner, as operators see it. */
export interface LockOwnerValue {
  /** The node that took it, as its `node` was given; for an owner-addressed lock, the caller's owner. */
  readonly node: string;
  /** When it was taken (epoch ms, the holder's clock). */
  readonly since: number;
}

const OWNER_VALUE = new RegExp(`^${OWNER_TAG}(\\d+):[^:]*:(.*)$`, 's');
const CALLER_OWNER_VALUE = new RegExp(`^${CALLER_OWNER_TAG}(\\d+):(.*)$`, 's');

/** The owner values of one node (one provider): each acquisition gets a value no other one has. */
export class OwnerValues {
  /** Random per provider, so owner values stay unique even when several processes share a `node`. */
  private readonly ownerId = randomUUID().slice(0, 13);
  private acquisitions = 0;

  /** A new owner value. A counter behind a random prefix costs a fraction of a UUID, which the lock cycle feels. */
  next(node: string): string {
    return `${OWNER_TAG}${Date.now()}:${this.ownerId}-${++this.acquisitions}:${node}`;
  }

  /** The value of a lock `lock()` takes: for the caller's `owner` when one is given, else {@link next}. */
  forLock(node: string, options: { readonly owner?: string } | undefined): string {
    return options?.owner === undefined ? this.next(node) : callerOwnerValue(options.owner);
  }
}

/**
 * The value of a lock taken for the caller's `owner` (any non-empty string, kept last and as given): it starts
 * with {@link CALLER_OWNER_TAG}, so no owner can read as a force-release marker or as another node's owner value.
 */
export function callerOwnerValue(owner: string): string {
  assertCallerOwner(owner);
  return `${CALLER_OWNER_TAG}${Date.now()}:${owner}`;
}

/** Throws a `TypeError` naming `owner` unless it is a non-empty string: the owner of an owner-addressed lock. */
export function assertCallerOwner(owner: unknown): asserts owner is string {
  if (typeof owner !== 'string' || owner === '') {
    throw new TypeError(`A lock's owner must be a non-empty string (got ${quoted(owner)})`);
  }
}

/** The value an operator's force-release by `actor` at `at` (epoch ms) leaves in the lock. */
export function forceUnlockMarker(actor: string, at: number): string {
  return `${FORCE_UNLOCK_TAG}${at}:${actor}`;
}

/** The owner a lock's `value` names; undefined for a value that is no owner value (a force-release marker). */
export function readOwnerValue(value: string): LockOwnerValue | undefined {
  const parts = OWNER_VALUE.exec(value) ?? CALLER_OWNER_VALUE.exec(value);
  return parts ? { since: Number(parts[1]), node: parts[2] } : undefined;
}
