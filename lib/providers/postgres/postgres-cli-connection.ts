import { Pool } from 'pg';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import { describeError } from '../../core/provider/message-text.js';
import type { OperatorProvider } from '../../operators/operator-provider.js';
import { describePostgresEndpoint, postgresFailure, postgresUser } from './postgres-failures.js';
import { PostgresLockProvider } from './postgres-lock-provider.js';
import { postgresMistake } from './postgres-startup-check.js';

/** Where the CLI reads the apps' records: their database, schema and table prefix. */
export interface PostgresCliTarget {
  /** A `postgres://` URL, as node-postgres reads `connectionString`. */
  readonly url: string;
  readonly schema: string;
  readonly tablePrefix: string;
}

/**
 * How long connecting and each statement may take: an operator waits for the answer, so a database that does
 * not answer fails the command rather than hanging it (as the CLI does on Redis).
 */
const CONNECT_TIMEOUT_MS = 5_000;
const STATEMENT_TIMEOUT_MS = 10_000;

/** A missing table: no app has run on this schema and table prefix (the CLI never creates tables). */
const UNDEFINED_TABLE = '42P01';

/**
 * The CLI's connection to the apps' PostgreSQL (the `nest-scheduler-lock` command's `--postgres`): a pool of one
 * connection, checked with a first statement, and the operator store of a provider on it that never creates
 * tables. Loaded by the CLI only for `--postgres`, so `pg` stays an optional peer.
 * @throws LockProviderUnavailableError naming `host:port/database` and why, never a password; for refused
 * credentials or a missing database an Error that also names the user.
 */
export async function connectPostgresStore(target: PostgresCliTarget): Promise<{
  operatorProvider: OperatorProvider;
  scope: string;
  failureLine(error: unknown): string | undefined;
  close(): Promise<void>;
}> {
  const pool = new Pool({
    connectionString: target.url,
    max: 1,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'nest-scheduler-lock cli',
  });
  // node-postgres throws an idle connection's error at the pool: a command then fails on its next statement.
  pool.on('error', () => undefined);
  const endpoint = describePostgresEndpoint(pool);
  const failureLine = (error: unknown): string | undefined => {
    const failure = postgresFailure(endpoint, error, STATEMENT_TIMEOUT_MS);
    if (failure instanceof LockProviderUnavailableError) return failure.message;
    const code = (error as { code?: unknown } | undefined)?.code;
    if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
    const hint =
      code === UNDEFINED_TABLE
        ? ` (no app has created its tables under schema "${target.schema}", table prefix "${target.tablePrefix}")`
        : '';
    return `PostgreSQL ${endpoint} answered: ${(error as Error).message}${hint}`;
  };
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    // Refused credentials or a missing database, said as the module's startup check says them: not an outage.
    const mistake = postgresMistake(error, postgresUser(pool));
    if (mistake) throw new Error(`PostgreSQL ${endpoint} ${mistake}`, { cause: error });
    const failure = postgresFailure(endpoint, error, STATEMENT_TIMEOUT_MS);
    if (failure instanceof LockProviderUnavailableError) throw failure;
    throw new Error(failureLine(error) ?? `PostgreSQL ${endpoint}: ${describeError(error)}`, { cause: error });
  }
  const provider = new PostgresLockProvider(pool, {
    schema: target.schema,
    tablePrefix: target.tablePrefix,
    createTables: false,
    statementTimeout: STATEMENT_TIMEOUT_MS,
  });
  return {
    operatorProvider: provider.operatorProvider(),
    scope: `schema "${target.schema}", table prefix "${target.tablePrefix}"`,
    failureLine,
    close: () => pool.end(),
  };
}
