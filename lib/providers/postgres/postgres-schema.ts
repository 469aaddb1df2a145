/** Where the provider's table lives: a schema, and a prefix for the table's name. */
export interface PostgresTableName {
  readonly schema: string;
  readonly tablePrefix: string;
}

/** A plain SQL identifier: quoted in statements, so it is kept to what needs no escaping. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,57}$/;

/** The quoted, schema-qualified name of the locks table, e.g. `"public"."scheduler_lock_locks"`. */
export function locksTable({ schema, tablePrefix }: PostgresTableName): string {
  for (const [option, value] of [
    ['schema', schema],
    ['tablePrefix', tablePrefix],
  ] as const) {
    if (typeof value !== 'string' || !IDENTIFIER.test(value) || (option === 'tablePrefix' && value === '')) {
      throw new TypeError(
        `PostgresLockProvider: ${option} must be letters, digits and underscores, starting with a letter or ` +
          `an underscore, at most 58 characters (got ${JSON.stringify(value)})`,
      );
    }
  }
  return `"${schema}"."${tablePrefix}locks"`;
}

/**
 * The locks table: one row per lock name, never deleted (ShedLock's JDBC layout), so the fencing token
 * only grows. A lock is free once `lock_until` has passed on the database's clock. The `run_*` columns
 * are a once-per-occurrence job's record; `paused` is an operator's pause marker (a job is paused while it
 * is not null). The README prints this DDL for DBAs who create the table themselves.
 */
export function locksTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  name text PRIMARY KEY,
  owner text NOT NULL,
  locked_by text NOT NULL,
  locked_at timestamptz NOT NULL,
  lock_until timestamptz NOT NULL,
  fencing_token bigint NOT NULL,
  paused text,
  occurrence bigint,
  run_state text,
  run_owner text,
  run_by text,
  run_started_at timestamptz,
  run_finished_at timestamptz,
  run_attempt integer,
  run_previous_holder text,
  run_orphaned_at timestamptz
)`;
}
