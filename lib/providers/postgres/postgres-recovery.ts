import type { JobRecord, JobRunState, RecoveryClaim, SimpleLock } from '../../core/provider/lock-provider.js';
import type { PostgresTables } from './postgres-schema.js';
import { appendHistory, forceUnlocked, ms, statement, type Statement } from './postgres-statements.js';

/** The recovery statement's row. */
export interface RecoveryRow {
  readonly verdict: 'moved' | 'settled' | 'held' | 'paused' | 'orphaned' | 'grace' | 'exhausted' | 'taken';
  readonly run_state: JobRunState | null;
  readonly run_by: string | null;
  readonly fencing_token: string | null;
  readonly run_attempt: number | null;
}

/** Epoch ms of a timestamp column, as the history's entries write times. */
const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`;

/**
 * Takes over an occurrence for its next attempt. A recovery (`recover`): its run died, its record still says
 * `running`, but its lock has been gone for the grace period. The first watcher that finds the lock gone notes
 * when (`run_orphaned_at`, the database's clock, so node clocks do not matter); until the grace has passed, the
 * run's node may still come back and record how it ended. The crashed attempt goes into the history. A retry
 * (`retry`): its last attempt failed at least grace × 2^(attempt − 1) ms ago, by the database's clock.
 * `$1` name, `$2` owner, `$3` node, `$4` ms, `$5` occurrence, `$6` most attempts, `$7` grace ms, and for a
 * recovery `$8` history limit. One row: the `verdict`, the record's `run_state` and `run_by` as they stood, and
 * for a take-over (`taken`) the new `fencing_token` and `run_attempt`.
 */
export function recoveryStatement({ locks, history }: PostgresTables, kind: 'recover' | 'retry'): Statement {
  const verdicts =
    kind === 'recover'
      ? `WHEN c.run_state IS DISTINCT FROM 'running' THEN 'settled'
        WHEN c.lock_until > c.at AND NOT ${forceUnlocked('c')} THEN 'held'
        WHEN c.paused IS NOT NULL THEN 'paused'
        WHEN c.run_orphaned_at IS NULL AND $7::bigint > 0 THEN 'orphaned'
        WHEN c.at - coalesce(c.run_orphaned_at, c.at) < ${ms('$7')} THEN 'grace'
        WHEN c.run_attempt + 1 > $6::integer THEN 'exhausted'`
      : `WHEN c.run_state = 'running' THEN 'held'
        WHEN c.run_state IS DISTINCT FROM 'failed' OR c.run_attempt + 1 > $6::integer THEN 'settled'
        WHEN c.lock_until > c.at AND NOT ${forceUnlocked('c')} THEN 'held'
        WHEN c.paused IS NOT NULL THEN 'paused'
        WHEN c.at - c.run_finished_at < ${ms('$7')} * power(2, c.run_attempt - 1) THEN 'grace'`;
  const crashed = `, orphaned AS (
      UPDATE ${locks} l SET run_orphaned_at = v.at FROM verdict v WHERE l.name = v.name AND v.verdict = 'orphaned'
    ), exhausted AS (
      UPDATE ${locks} l SET run_state = 'crashed', history_seq = l.history_seq + 1
      FROM verdict v WHERE l.name = v.name AND v.verdict = 'exhausted'
      RETURNING l.name, l.history_seq AS seq
    ), crashed AS (
      ${appendHistory(
        history,
        `(SELECT ended.name, ended.seq, jsonb_build_object('type', 'run', 'occurrence', $5::bigint, 'node', v.run_by,
            'startedAt', ${epochMs('v.run_started_at')}, 'finishedAt', null, 'durationMs', null, 'outcome', 'crashed',
            'error', null, 'fencingToken', null, 'attempt', v.run_attempt, 'manual', null,
            'foundAt', ${epochMs('v.at')}) AS entry
          FROM (SELECT name, seq FROM exhausted UNION ALL SELECT name, seq FROM taken) ended JOIN verdict v USING (name)
        ) AS found`,
        '$8::integer',
      )}
    )`;
  // A recovery's crashed attempt is a history entry of its own; a retry's failed one is there already.
  const historySeq = kind === 'recover' ? 'l.history_seq + 1' : 'l.history_seq';
  return statement(`
    WITH current AS (
      SELECT l.*, clock_timestamp() AS at FROM ${locks} l WHERE name = $1 FOR UPDATE
    ), verdict AS (
      SELECT c.name, c.run_state, c.run_by, c.run_started_at, c.run_attempt, c.at, CASE
        WHEN c.occurrence IS DISTINCT FROM $5::bigint THEN 'moved'
        ${verdicts}
        ELSE 'taken' END AS verdict
      FROM current c
    ), taken AS (
      UPDATE ${locks} l SET owner = $2, locked_by = $3, locked_at = v.at, lock_until = v.at + ${ms('$4')},
        fencing_token = l.fencing_token + 1, run_state = 'running', run_owner = $2, run_by = $3,
        run_started_at = v.at, run_finished_at = NULL, run_attempt = l.run_attempt + 1,
        run_previous_holder = l.run_by, run_orphaned_at = NULL, history_seq = ${historySeq}
      FROM verdict v WHERE l.name = v.name AND v.verdict = 'taken'
      RETURNING l.name, l.history_seq AS seq, l.fencing_token, l.run_attempt
    )${kind === 'recover' ? crashed : ''}
    SELECT verdict.verdict, verdict.run_state, verdict.run_by, taken.fencing_token, taken.run_attempt
    FROM verdict LEFT JOIN taken ON true`);
}

/** What the recovery statement's `row` means; `lockOf(fencingToken)` makes the lock of a take-over. */
export function recoveryClaim(
  row: RecoveryRow | undefined,
  lockOf: (fencingToken: number) => SimpleLock,
): RecoveryClaim {
  switch (row?.verdict) {
    case 'taken':
      return { lock: lockOf(Number(row.fencing_token)), attempt: row.run_attempt!, previousNode: row.run_by ?? '' };
    case 'held':
    case 'orphaned':
    case 'grace':
      return { refused: 'running' };
    case 'paused':
      return { refused: 'paused' };
    case 'exhausted':
      return { refused: 'settled', state: 'crashed' };
    case 'settled':
      return { refused: 'settled', state: row.run_state ?? '' };
    default:
      return { refused: 'settled', state: '' };
  }
}

/** The job record statement's row. */
export interface JobRecordRow {
  readonly occurrence: string | null;
  readonly run_state: JobRunState;
  readonly run_by: string;
  readonly run_started_at: Date;
  readonly run_finished_at: Date | null;
  readonly run_attempt: number;
  readonly run_previous_holder: string | null;
  readonly held: boolean;
}

/** The job record a row of the job record statement holds; `undefined` before the job's first occurrence. */
export function jobRecordOf(row: JobRecordRow | undefined): JobRecord | undefined {
  if (row?.occurrence == null) return undefined;
  return {
    occurrence: new Date(Number(row.occurrence)),
    state: row.run_state,
    node: row.run_by,
    startedAt: row.run_started_at,
    finishedAt: row.run_finished_at,
    attempt: row.run_attempt,
    previousNode: row.run_previous_holder,
    held: row.held,
  };
}
