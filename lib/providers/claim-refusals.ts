/**
 * Why a store refused to claim a job's lock, by code: the one table that the Redis scripts (put in by
 * lua-script.ts), the PostgreSQL statements (as SQL literals) and each store's decoder take their codes from.
 * A fence taken is a positive number, so every refusal is 0 or below.
 */
export const CLAIM_REFUSALS = { locked: 0, 'already-ran': -1, paused: -2 } as const;

export type ClaimRefusal = keyof typeof CLAIM_REFUSALS;

/** The code of a refusal among `R`, as a store's reply has it. */
export type ClaimRefusalCode<R extends ClaimRefusal = ClaimRefusal> = (typeof CLAIM_REFUSALS)[R];

const BY_CODE = new Map<number, ClaimRefusal>(
  Object.entries(CLAIM_REFUSALS).map(([refusal, code]) => [code, refusal as ClaimRefusal]),
);

/** The refusal a store's reply `code` names; a code of no refusal is a store out of step with this table. */
export function claimRefusalOf(code: number): ClaimRefusal {
  const refusal = BY_CODE.get(code);
  if (refusal === undefined)
    throw new Error(`No claim refusal has the code ${code}: ${JSON.stringify(CLAIM_REFUSALS)}`);
  return refusal;
}

/** The Lua line that defines each code as a local (`local LOCKED, ALREADY_RAN, PAUSED = 0, -1, -2`). */
export const LUA_CLAIM_REFUSALS = `local ${Object.keys(CLAIM_REFUSALS)
  .map((refusal) => refusal.toUpperCase().replace('-', '_'))
  .join(', ')} = ${Object.values(CLAIM_REFUSALS).join(', ')}`;
