/** Options of {@link PostgresLockProvider}. */
export interface PostgresLockProviderOptions {
  /** The schema of the tables; it must exist. Default `public`. */
  schema?: string;
  /** Prefix of the tables' names: `<tablePrefix>locks`, `<tablePrefix>history`, … Default `scheduler_lock_`. */
  tablePrefix?: string;
  /** Stored with each lock so an operator can see who holds it. Default `<hostname>:<pid>`. */
  lockedBy?: string;
  /** Creates the tables on first use when they are missing (`CREATE TABLE IF NOT EXISTS`). Default `true`. */
  createTables?: boolean;
  /** How many runs (and operator actions) each job's history keeps. Default 50. */
  historyLimit?: number;
  /**
   * The `statement_timeout` (ms) the provider sets on each pool connection it uses, so that a statement that
   * cannot finish in time is rolled back instead of taking a lock late. Make it your `acquireTimeout`
   * (default 2 s, the module's). `false` leaves the connections' setting alone: for a pool the app shares.
   */
  statementTimeout?: number | false;
}

export const DEFAULT_TABLE_PREFIX = 'scheduler_lock_';
/** The module's default `acquireTimeout`: a statement gets as long as a lock attempt. */
export const DEFAULT_STATEMENT_TIMEOUT = 2_000;

/** A plain SQL identifier: quoted in statements, so it is kept to what needs no escaping. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,57}$/;

/**
 * What is wrong with `value` as a schema or table prefix, after the option's name; `undefined` when it is a
 * plain identifier. The CLI asks before it connects.
 */
export function identifierProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && IDENTIFIER.test(value)) return undefined;
  return (
    'must be letters, digits and underscores, starting with a letter or an underscore, at most 58 characters ' +
    `(got ${JSON.stringify(value)})`
  );
}
