import type { LockNotHeldReason } from '../core/provider/lock-provider.js';
import { codeDecoder, type CodeTable } from './code-tables.js';

/**
 * What a store found when a lock's owner released, renewed or extended it, by code: `held` (so it did), or
 * why not. The one table the Redis scripts (put in by lua-script.ts) and the Redis decoder take codes from;
 * PostgreSQL answers `mine` and `live` instead, which its decoder names by this table's names.
 */
export const OWNER_CHECKS = { held: 1, expired: 0, 'not-owner': -1 } as const satisfies CodeTable<
  'held' | LockNotHeldReason
>;

export type OwnerCheck = keyof typeof OWNER_CHECKS;

/** The code of an owner check, as a store's reply has it. */
export type OwnerCheckCode = (typeof OWNER_CHECKS)[OwnerCheck];

/** The owner check a store's reply `code` names; a code of no check is a store out of step with this table. */
export const ownerCheckOf: (code: number) => OwnerCheck = codeDecoder(OWNER_CHECKS, 'owner check');
