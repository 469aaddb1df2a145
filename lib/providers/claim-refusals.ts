import { codeDecoder } from './code-tables.js';

/**
 * Why a store refused to claim a job's lock, by code: the one table that the Redis scripts (put in by
 * lua-script.ts), the PostgreSQL statements (as SQL literals) and each store's decoder take their codes from.
 * A fence taken is a positive number, so every refusal is 0 or below.
 */
export const CLAIM_REFUSALS = { locked: 0, 'already-ran': -1, paused: -2 } as const;

export type ClaimRefusal = keyof typeof CLAIM_REFUSALS;

/** The code of a refusal among `R`, as a store's reply has it. */
export type ClaimRefusalCode<R extends ClaimRefusal = ClaimRefusal> = (typeof CLAIM_REFUSALS)[R];

/** The refusal a store's reply `code` names; a code of no refusal is a store out of step with this table. */
export const claimRefusalOf: (code: number) => ClaimRefusal = codeDecoder(CLAIM_REFUSALS, 'claim refusal');
