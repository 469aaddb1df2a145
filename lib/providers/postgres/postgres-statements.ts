import { createHash } from 'node:crypto';
import { FORCE_UNLOCK_TAG } from '../../core/provider/owner-value.js';
import { CLAIM_REFUSALS, claimRefusalOf, type ClaimRefusal, type ClaimRefusalCode } from '../claim-refusals.js';
import type { PostgresTables } from './postgres-schema.js';

/** A statement the provider prepares once per connection, under a name derived from its text. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** A statement named after its text: the same text gets the same name in every process. */
export function statement(text: string): Statement {
  const compact = text.replace(/\s+/g, ' ').trim();
  return { name: `nsl_${createHash('sha1').update(compact).digest('hex').slice(0, 16)}`, text: compact };
}

/** The database's clock: `clock_timestamp()`, which moves on within a transaction, unlike the frozen `now()`. */
export const NOW = 'clock_timestamp()';
/** An interval of `value` milliseconds. */
export const ms = (value: string) => `${value}::bigint * interval '1 millisecond'`;
/**
 * Whether the owner of lock row `row` is an operator's force-release marker (kept until the old lock would
 * have expired, so that its holder learns it lost it): the lock is free. Told by the marker's fixed tag.
 */
export const forceUnlocked = (row: string) => `starts_with(${row}.owner, '${FORCE_UNLOCK_TAG}')`;
/** Whether the lock of row `l` is held at instant `at`. */
export const held = (at: string) => `(l.lock_until > ${at} AND NOT ${forceUnlocked('l')})`;
/** {@link held} now. */
export const HELD = held(NOW);
/**
 * Why a claim statement refused a lock, as the SQL writes it: an integer literal of claim-refusals.ts' table,
 * decoded by {@link claimRefusal} alone. Held by a run (or by a row another node created during the statement,
 * which it cannot see), paused by an operator, or an occurrence as late already claimed.
 */
const { locked: LOCKED, paused: PAUSED, 'already-ran': ALREADY_RAN } = CLAIM_REFUSALS;

/** A claim statement's refusal of `row`, decoded; no row is one another node created meanwhile: held. */
export function claimRefusal<R extends ClaimRefusal>(
  row: { readonly refusal: ClaimRefusalCode<R> | null } | undefined,
): R | 'locked' {
  return row?.refusal == null ? 'locked' : (claimRefusalOf(row.refusal) as R);
}
/**
 * The fencing token of a new lock row, drawn at instant `at`: the database's clock in µs. A taken-over row counts
 * on from its last token (`l.fencing_token + 1`), so tokens grow while the database's clock does not go back.
 * `date_part`'s double, not `extract`'s numeric: the same µs (2^53 holds them), and a skip computes it too.
 */
export const fenceAt = (at: string) => `(date_part('epoch', ${at}) * 1000000)::bigint`;
/**
 * Whether lock row `l` may be deleted at instant `at`: free, a plain lock's (no job record, pause or history), and
 * its token drawn over `settle` ms ago, so that no insert still running drew a token below it.
 */
export const forgettable = (at: string, settle: string) =>
  `(l.lock_until <= ${at} AND l.occurrence IS NULL AND l.paused IS NULL AND l.history_seq = 0
    AND l.fencing_token < ${fenceAt(`${at} - ${ms(settle)}`)})`;
/**
 * Deletes the rows of the names `due` (text[]) that are {@link forgettable} at `v.at`: released plain locks
 * (`postgres-released-names.ts`), never `except`, the row the statement releases.
 */
export const forgetRows = (locks: string, due: string, settle: string, except: string) => `forgotten AS (
  DELETE FROM ${locks} l USING v WHERE l.name = ANY(${due}::text[]) AND l.name <> ${except}
    AND ${forgettable('v.at', settle)}
)`;
/** A lock's columns set to a new holder, from the row an INSERT proposes (`excluded`). */
const TAKE_OVER = `owner = excluded.owner, locked_by = excluded.locked_by, locked_at = excluded.locked_at,
  lock_until = excluded.lock_until, fencing_token = l.fencing_token + 1`;

/**
 * Adds the rows of `source` (`name`, `seq`: the lock row's new `history_seq`, `entry`) to a history, each in
 * slot `seq % limit` of its lock name: a ring that keeps the newest `limit` entries without a delete.
 */
export function appendHistory(history: string, source: string, limit: string): string {
  return `INSERT INTO ${history} (name, slot, seq, entry) SELECT name, seq % ${limit}, seq, entry FROM ${source}
    ON CONFLICT (name, slot) DO UPDATE SET seq = excluded.seq, entry = excluded.entry`;
}

/**
 * The lock statements of one set of tables. Statements that touch several rows lock them in name order, so
 * two nodes' batches cannot deadlock; a batch never names a row twice.
 */
export function postgresStatements({ locks, history }: PostgresTables) {
  return {
    /**
     * ShedLock's acquire: `[fencing_token]` when taken, no row when held. `$1` name, `$2` owner, `$3` node,
     * `$4` ms.
     */
    lock: statement(`
      INSERT INTO ${locks} AS l (name, owner, locked_by, locked_at, lock_until, fencing_token)
      SELECT $1, $2, $3, at, at + ${ms('$4')}, ${fenceAt('at')} FROM (SELECT ${NOW} AS at) v
      ON CONFLICT (name) DO UPDATE SET ${TAKE_OVER}
      WHERE NOT ${HELD}
      RETURNING l.fencing_token`),

    /**
     * Job locks (arrays: name, owner, node, ms, manual): per name `fencing_token` when taken, else the
     * `refusal` ({@link claimRefusal}). As in `claimOccurrences`: a new name's row is inserted, an existing one taken
     * by an `UPDATE`, so a refused lock holds no row lock; the refusal is judged on the statement's snapshot at
     * `input.at` (a lock expiring during the statement reads `locked`, not `paused`). `refused` is materialized:
     * inlined, a generic plan (10 rows guessed per `unnest`) ran it once per name, quadratic in the batch.
     */
    lockJobs: statement(`
      WITH input AS (
        SELECT i.*, ${NOW} AS at FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[])
          AS i(name, owner, locked_by, ttl, manual)
      ), created AS (
        INSERT INTO ${locks} AS l (name, owner, locked_by, locked_at, lock_until, fencing_token)
        SELECT name, owner, locked_by, at, at + ${ms('ttl')}, ${fenceAt('at')} FROM input ORDER BY name
        ON CONFLICT (name) DO NOTHING
        RETURNING l.name, l.fencing_token
      ), taken AS (
        UPDATE ${locks} l SET owner = input.owner, locked_by = input.locked_by, locked_at = input.at,
          lock_until = input.at + ${ms('input.ttl')}, fencing_token = l.fencing_token + 1
        FROM (SELECT * FROM input ORDER BY name) input
        WHERE l.name = input.name AND NOT ${held('input.at')} AND (l.paused IS NULL OR input.manual)
        RETURNING l.name, l.fencing_token
      ), refused AS MATERIALIZED (
        SELECT l.name, CASE WHEN NOT ${held('input.at')} AND l.paused IS NOT NULL AND NOT input.manual
          THEN ${PAUSED} ELSE ${LOCKED} END AS refusal
        FROM ${locks} l JOIN input USING (name)
        WHERE l.name NOT IN (SELECT name FROM taken)
      )
      SELECT input.name, coalesce(created.fencing_token, taken.fencing_token) AS fencing_token, refused.refusal
      FROM input LEFT JOIN created USING (name) LEFT JOIN taken USING (name) LEFT JOIN refused USING (name)`),

    /**
     * Occurrence claims (arrays: name, owner, node, ms, occurrence) with the job record, graphile-worker's
     * `known_crontabs` rule: taken only if no occurrence as late was claimed. Per name `fencing_token`, or the
     * `refusal` ({@link claimRefusal}) with the refused row's `occurrence` and `run_state`. A new name's row is
     * inserted; an existing one is taken by an `UPDATE`, which locks only the rows it changes (in name order, as
     * planned). So a refused claim holds no row lock, and no release or other claim queues behind it. The
     * refusal is judged on the statement's snapshot at `input.at`; a row another node took meanwhile reads `locked`.
     * `refused` is materialized, as in `lockJobs`.
     */
    claimOccurrences: statement(`
      WITH input AS (
        SELECT i.*, ${NOW} AS at FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
          AS i(name, owner, locked_by, ttl, occurrence)
      ), created AS (
        INSERT INTO ${locks} AS l (name, owner, locked_by, locked_at, lock_until, fencing_token, occurrence,
          run_state, run_owner, run_by, run_started_at, run_attempt)
        SELECT name, owner, locked_by, at, at + ${ms('ttl')}, ${fenceAt('at')}, occurrence,
          'running', owner, locked_by, at, 1 FROM input ORDER BY name
        ON CONFLICT (name) DO NOTHING
        RETURNING l.name, l.fencing_token
      ), taken AS (
        UPDATE ${locks} l SET owner = input.owner, locked_by = input.locked_by, locked_at = input.at,
          lock_until = input.at + ${ms('input.ttl')}, fencing_token = l.fencing_token + 1,
          occurrence = input.occurrence, run_state = 'running', run_owner = input.owner, run_by = input.locked_by,
          run_started_at = input.at, run_finished_at = NULL, run_attempt = 1, run_previous_holder = NULL,
          run_orphaned_at = NULL
        FROM (SELECT * FROM input ORDER BY name) input
        WHERE l.name = input.name AND (l.occurrence IS NULL OR l.occurrence < input.occurrence)
          AND NOT ${held('input.at')} AND l.paused IS NULL
        RETURNING l.name, l.fencing_token
      ), refused AS MATERIALIZED (
        SELECT l.name, l.occurrence, l.run_state, CASE
          WHEN l.occurrence >= input.occurrence THEN ${ALREADY_RAN}
          WHEN NOT ${held('input.at')} AND l.paused IS NOT NULL THEN ${PAUSED}
          ELSE ${LOCKED} END AS refusal
        FROM ${locks} l JOIN input USING (name)
        WHERE l.name NOT IN (SELECT name FROM taken)
      )
      SELECT input.name, coalesce(created.fencing_token, taken.fencing_token) AS fencing_token, refused.occurrence,
        refused.run_state, refused.refusal
      FROM input LEFT JOIN created USING (name) LEFT JOIN taken USING (name) LEFT JOIN refused USING (name)`),

    /**
     * Releases (arrays: name, owner, lockAtLeastFor ms, outcome or null, whether the job record holds the
     * run, the history entry or null; `$7` history limit): a lock still ours is kept until `lockAtLeastFor`
     * after `locked_at` (ShedLock's unlock); a run's outcome goes into the job record if the record is still
     * that run's, even when the lock expired; the entry, with its outcome (`lost` when the lock was no longer
     * the run's), into the history. Per name: `mine`, `live` as the lock stood.
     */
    release: statement(`
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::boolean[], $6::jsonb[])
          AS i(name, owner, at_least, outcome, recorded, entry)
      ), current AS (
        SELECT l.name, l.owner = input.owner AS mine, l.lock_until > ${NOW} AS live,
          input.recorded AND input.outcome IS NOT NULL AND l.run_owner = input.owner AS records
        FROM ${locks} l JOIN input USING (name) ORDER BY l.name FOR UPDATE OF l
      ), released AS (
        UPDATE ${locks} l SET
          lock_until = CASE WHEN c.mine AND c.live
            THEN greatest(l.locked_at + ${ms('input.at_least')}, ${NOW}) ELSE l.lock_until END,
          run_state = CASE WHEN c.records THEN input.outcome ELSE l.run_state END,
          run_finished_at = CASE WHEN c.records THEN ${NOW} ELSE l.run_finished_at END,
          history_seq = l.history_seq + (input.entry IS NOT NULL)::integer
        FROM current c JOIN input USING (name)
        WHERE l.name = c.name AND ((c.mine AND c.live) OR c.records OR input.entry IS NOT NULL)
        RETURNING l.name, l.history_seq AS seq, input.entry || jsonb_build_object('outcome',
          CASE WHEN c.mine AND c.live THEN input.outcome ELSE 'lost' END) AS entry
      ), recorded AS (
        ${appendHistory(history, '(SELECT * FROM released WHERE entry IS NOT NULL) AS ended', '$7::integer')}
      )
      SELECT input.name, current.mine, current.live FROM input LEFT JOIN current USING (name)`),

    /**
     * `unlock()` of a lock that records nothing (`$1` name, `$2` owner, `$3` lockAtLeastFor ms): ShedLock's
     * unlock, one `UPDATE` of one row, as cheap as the batch release above is not. It changes one row when
     * released (its count is the answer: no `RETURNING`), none when the lock was no longer ours, and then
     * {@link ownerCheck} tells why.
     */
    unlock: statement(`
      UPDATE ${locks} l SET lock_until = greatest(l.locked_at + ${ms('$3')}, ${NOW})
      WHERE l.name = $1 AND l.owner = $2 AND l.lock_until > ${NOW}`),

    /**
     * {@link unlock} that also deletes the rows of `$4` (names released earlier) that {@link forgettable} allows
     * after `$5` ms: sent only when some are due, as its `DELETE` costs a lock cycle a tenth of its time.
     */
    unlockForgetting: statement(`
      WITH v AS (SELECT ${NOW} AS at), ${forgetRows(locks, '$4', '$5', '$1')}
      UPDATE ${locks} l SET lock_until = greatest(l.locked_at + ${ms('$3')}, v.at) FROM v
      WHERE l.name = $1 AND l.owner = $2 AND l.lock_until > v.at`),

    /** How lock `$1` stands for owner `$2`: `mine`, `live`. */
    ownerCheck: statement(`SELECT name, owner = $2 AS mine, lock_until > ${NOW} AS live FROM ${locks} WHERE name = $1`),

    /**
     * Lease renewals, one statement for all of a node's leases (arrays: name, owner, ms, restart): each lock
     * still ours expires `ms` from now; `restart` (an extension) also counts `lockAtLeastFor` from now.
     * Per name: `mine`, `live` as the lock stood.
     */
    renew: statement(`
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[]) AS i(name, owner, ttl, restart)
      ), current AS (
        SELECT l.name, l.owner = input.owner AS mine, l.lock_until > ${NOW} AS live
        FROM ${locks} l JOIN input USING (name) ORDER BY l.name FOR UPDATE OF l
      ), renewed AS (
        UPDATE ${locks} l SET lock_until = ${NOW} + ${ms('input.ttl')},
          locked_at = CASE WHEN input.restart THEN ${NOW} ELSE l.locked_at END
        FROM current c JOIN input USING (name)
        WHERE l.name = c.name AND c.mine AND c.live
      )
      SELECT input.name, current.mine, current.live FROM input LEFT JOIN current USING (name)`),

    /** A job record and whether its lock is held. `$1` name. */
    readRecord: statement(`
      SELECT occurrence, run_state, run_by, run_started_at, run_finished_at, run_attempt, run_previous_holder,
        ${HELD} AS held
      FROM ${locks} l WHERE name = $1`),
  };
}

export type PostgresStatements = ReturnType<typeof postgresStatements>;
