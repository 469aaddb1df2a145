import { CALLER_OWNER_TAG } from '../../core/provider/owner-value.js';
import type { PostgresTables } from './postgres-schema.js';
import { forgetRows, ms, NOW, statement } from './postgres-statements.js';

/** The caller's owner in lock row `l` (`owned:<epoch ms>:<owner>`); NULL for any other value, a marker too. */
const CALLER_OWNER = `substring(l.owner from '^${CALLER_OWNER_TAG}[0-9]+:(.*)$')`;

/** How lock `$1` stood for the caller's owner `$2`, locked for the write that follows: `mine`, `live`. */
const current = (locks: string) => `current AS (
  SELECT l.name, ${CALLER_OWNER} = $2 AS mine, l.lock_until > ${NOW} AS live
  FROM ${locks} l WHERE l.name = $1 FOR UPDATE OF l
)`;

/**
 * The statements of owner-addressed locks, each one compare-and-set on the owner and the expiry, on the database's
 * clock. Each returns how the lock stood (`mine`, `live`; no row when there is none), and wrote only if both held.
 */
export function ownerStatements({ locks }: PostgresTables) {
  return {
    /** Renews `$1` for the caller's owner `$2` by `$3` ms from now. */
    renewByOwner: statement(`
      WITH ${current(locks)}, renewed AS (
        UPDATE ${locks} l SET lock_until = ${NOW} + ${ms('$3')}
        FROM current c WHERE l.name = c.name AND c.mine AND c.live
      )
      SELECT name, mine, live FROM current`),

    /** Frees `$1` at once for the caller's owner `$2`; deletes the rows of `$3` as the plain unlock does. */
    releaseByOwner: statement(`
      WITH v AS (SELECT ${NOW} AS at), ${forgetRows(locks, '$3', '$4', '$1')}, ${current(locks)}, released AS (
        UPDATE ${locks} l SET lock_until = v.at FROM current c, v
        WHERE l.name = c.name AND c.mine AND c.live
      )
      SELECT name, mine, live FROM current`),
  };
}

export type OwnerStatements = ReturnType<typeof ownerStatements>;
