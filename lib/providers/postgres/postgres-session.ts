import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { burstDeadline } from '../../core/provider/burst-deadline.js';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import { describePostgresEndpoint, postgresFailure } from './postgres-failures.js';
import { tablesDdl, type PostgresTables } from './postgres-schema.js';
import type { Statement } from './postgres-statements.js';
import { foreignPreparedStatement, inOwnTransaction, throughPooler, type TimedQuery } from './postgres-pooler.js';

/**
 * SQLSTATEs of a `CREATE TABLE IF NOT EXISTS` that lost a race with another node's (its row type or its
 * catalog entry was created meanwhile): the table is there.
 */
const CREATED_MEANWHILE = new Set(['23505', '42P07', '42710']);

/**
 * How much longer than `statement_timeout` the provider waits for an answer before it gives the connection up:
 * the server enforces `statement_timeout`, so a server that is frozen (SIGSTOP, a VM paused) or cut off never
 * does, and without a deadline of the client's own a release would hang, out of reach of its retries.
 */
const ANSWER_GRACE_MS = 1_000;

/**
 * Runs the provider's statements on the app's pool: each on a connection of its own, checked out for that
 * statement alone (never a client the app holds, so never inside the app's transaction), in autocommit,
 * as a named prepared statement (parsed once per connection; unnamed once a pooler refuses them). A statement
 * runs under the provider's `statement_timeout` (grown for a burst, see `burstDeadline`), so one that cannot
 * finish in time is rolled back by the server instead of taking a lock late: set on the connection when the
 * provider reaches PostgreSQL directly, and in a transaction of the statement's own through a pooler, which
 * keeps no session state. The tables are created before the first statement, unless they exist or
 * `createTables` is off.
 */
export class PostgresSession {
  /** `host:port/database`, for messages. */
  readonly endpoint: string;
  /** The `statement_timeout` the provider last set on each connection (reached directly). */
  private readonly timeouts = new WeakMap<PoolClient, number>();
  /** Whether the pool's connections go through a pooler: asked once, on the first connection. */
  private pooled: Promise<boolean> | undefined;
  /** {@link pooled} once answered: every later statement reads it without an `await` of its own. */
  private pooledAnswer: boolean | undefined;
  /** Whether statements go as named prepared statements: until a pooler shows it does not keep them. */
  private namedStatements = true;
  /** The tables' creation, once; `true` once they are known to exist. */
  private tables: Promise<void> | true | undefined;
  /** Called each time a statement is answered: the server serves again. */
  whenAnswered: (() => void) | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly tableNames: PostgresTables,
    private readonly statementTimeout: number | false,
    createTables: boolean,
  ) {
    this.endpoint = describePostgresEndpoint(pool);
    if (!createTables) this.tables = true;
  }

  /**
   * Runs `statement` with `values`; rejects with what the failure says about the server (see `postgresFailure`).
   * `abandoned` hears of a statement sent whose answer never came (the connection was given up or lost): it may
   * still run, or have run, on the server backend given (its PID). `calls`: how many calls of a burst the
   * statement answers, which grows its deadline.
   */
  run<Row extends QueryResultRow>(
    statement: Statement,
    values: readonly unknown[],
    abandoned?: (backend: number) => void,
    calls = 1,
  ): Promise<Row[]> {
    return this.execute(statement, values, rowsOf<Row>, abandoned, calls);
  }

  /**
   * Runs `statement` as {@link run} does, and resolves to how many rows it changed: for a statement without
   * `RETURNING`, whose answer has no row description or row for pg to parse.
   */
  count(statement: Statement, values: readonly unknown[], abandoned?: (backend: number) => void): Promise<number> {
    return this.execute(statement, values, rowCountOf, abandoned, 1);
  }

  private execute<T>(
    statement: Statement,
    values: readonly unknown[],
    answer: (result: QueryResult) => T,
    abandoned: ((backend: number) => void) | undefined,
    calls: number,
  ): Promise<T> {
    const query = () => this.query(statement.text, values, answer, statement.name, abandoned, calls);
    return this.tables === true ? query() : this.createTables().then(query);
  }

  /** Creates the tables unless they exist; concurrent first uses on several nodes are safe. */
  createTables(): Promise<void> {
    if (this.tables === true) return Promise.resolve();
    this.tables ??= this.createMissingTable().then(
      () => void (this.tables = true),
      (failure: unknown) => {
        this.tables = undefined;
        throw failure;
      },
    );
    return this.tables;
  }

  private async createMissingTable(): Promise<void> {
    // Looked up first: CREATE TABLE IF NOT EXISTS needs the CREATE privilege even when the table exists.
    // The health reports and the health turn came after the others: a schema made before them gets them at the
    // next start.
    const [{ present }] = await this.query(
      'SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL AS present',
      [this.tableNames.locks, this.tableNames.healthReports, this.tableNames.healthTurn],
      rowsOf<{ present: boolean }>,
    );
    if (present) return;
    // The locks table comes last: once it exists, so do the others.
    for (const ddl of tablesDdl(this.tableNames)) {
      await this.query(ddl, [], rowsOf).catch((failure: unknown) => {
        if (!CREATED_MEANWHILE.has(String((failure as { code?: unknown }).code))) throw failure;
      });
    }
  }

  /**
   * Runs `text` on a connection checked out for it. Callbacks, not `await`s: in the steady state (the pooler
   * question answered, the connection's `statement_timeout` set) a statement costs one promise, as `pool.query` does.
   */
  private query<T>(
    text: string,
    values: readonly unknown[],
    answer: (result: QueryResult) => T,
    name?: string,
    abandoned?: (backend: number) => void,
    calls = 1,
  ): Promise<T> {
    const timeout = this.statementTimeout === false ? false : burstDeadline(this.statementTimeout, calls);
    // pg's query_timeout: undefined waits as long as the server takes (a pool whose timeouts are the app's).
    const query_timeout = timeout === false ? undefined : timeout + ANSWER_GRACE_MS;
    const prepared = this.namedStatements ? name : undefined;
    const statement: TimedQuery = { text, values: values as unknown[], name: prepared, query_timeout };
    return new Promise<T>((resolve, reject) => {
      this.pool.connect((connectError, client) => {
        if (connectError || !client) return reject(this.failure(connectError));
        // The pool listens to a client's errors only while it is idle. A connection reset during a statement also
        // rejects the statement, which reports it; unheard, the client's 'error' event would crash the app.
        client.on('error', ignoreClientError);
        let sent = false;
        let backend = (client as PoolClient & { processID: number }).processID;
        const settle = (error: unknown, result?: QueryResult): void => {
          client.off('error', ignoreClientError);
          if (!error) {
            client.release();
            this.whenAnswered?.();
            return resolve(answer(result!));
          }
          const failure = this.failure(error, timeout);
          // A broken connection goes back destroyed; one whose statement was refused or timed out is fine.
          const broken =
            failure instanceof LockProviderUnavailableError && (error as { code?: string }).code !== '57014';
          client.release(broken ? (error as Error) : undefined);
          if (prepared !== undefined && foreignPreparedStatement(error)) {
            // Behind a pooler without prepared statements: nothing ran; from now on every statement is unnamed.
            this.namedStatements = false;
            return resolve(this.query(text, values, answer, undefined, abandoned, calls));
          }
          // A statement the server refused or rolled back did nothing; one on a connection given up may yet run.
          if (broken && sent) abandoned?.(backend);
          reject(failure);
        };
        if (this.pooledAnswer === false && (timeout === false || this.timeouts.get(client) === timeout)) {
          sent = true;
          client.query(statement, settle);
          return;
        }
        const onSent = () => (sent = true);
        const onBackend = (pid: number) => (backend = pid);
        this.firstOn(client, statement, timeout, onSent, onBackend).then((result) => settle(undefined, result), settle);
      });
    });
  }

  /**
   * Sends `statement` on `client` the first time round: asks whether a pooler is in between, and sets the
   * connection's `statement_timeout`, or runs the statement in a transaction of its own through a pooler.
   */
  private async firstOn(
    client: PoolClient,
    statement: TimedQuery,
    timeout: number | false,
    onSent: () => void,
    onBackend: (pid: number) => void,
  ): Promise<QueryResult> {
    const { query_timeout } = statement;
    const pooled = this.pooledAnswer ?? (this.pooledAnswer = await this.askPooled(client, query_timeout));
    if (pooled && timeout !== false) {
      onSent();
      return inOwnTransaction(client, timeout, statement, onBackend);
    }
    if (!pooled && timeout !== false && this.timeouts.get(client) !== timeout) {
      // A parameter, not SQL text: no option value is ever part of a statement.
      const setTimeout = "SELECT set_config('statement_timeout', $1, false)";
      await client.query({ text: setTimeout, values: [String(timeout)], query_timeout } as TimedQuery);
      this.timeouts.set(client, timeout);
    }
    onSent();
    return client.query(statement);
  }

  /** Whether `client` goes through a pooler, asked once for all the statements waiting for the first answer. */
  private askPooled(client: PoolClient, query_timeout: number | undefined): Promise<boolean> {
    this.pooled ??= throughPooler(client, query_timeout).catch((error: unknown) => {
      this.pooled = undefined;
      throw error;
    });
    return this.pooled;
  }

  private failure(error: unknown, timeout: number | false = this.statementTimeout): unknown {
    return postgresFailure(this.endpoint, error, timeout);
  }
}

/** A statement's rows. */
function rowsOf<Row extends QueryResultRow>(result: QueryResult): Row[] {
  return result.rows as Row[];
}

/** How many rows a statement changed. */
function rowCountOf(result: QueryResult): number {
  return result.rowCount ?? 0;
}

/** A checked-out client's error: its statement rejects with it too, and that failure is reported. */
function ignoreClientError(): void {}

/** Fails unless `pool` looks like a `pg` Pool (it has `connect()`), naming what it got. */
export function assertPool(pool: unknown): asserts pool is Pool {
  if (typeof (pool as Partial<Pool> | undefined)?.connect === 'function') return;
  const got =
    typeof pool !== 'object' || pool === null
      ? String(pool)
      : `an instance of ${(pool as object).constructor?.name ?? 'an unnamed class'}`;
  throw new TypeError(`PostgresLockProvider: pool must be a pg Pool (got ${got})`);
}
