import type { PoolClient, QueryConfig, QueryResult } from 'pg';

/** A statement with pg's own answer deadline (`query_timeout`, which @types/pg leaves out of QueryConfig). */
export type TimedQuery = QueryConfig & { query_timeout?: number };

/**
 * SQLSTATEs of a named statement the connection's server backend lacks, or has already: a transaction pooler
 * without prepared-statement support (PgBouncer before 1.21) hands each transaction another backend.
 */
const FOREIGN_PREPARED_STATEMENT = new Set(['26000', '42P05']);

/** Whether `error` says the connection's named statements are not its own backend's (nothing ran). */
export function foreignPreparedStatement(error: unknown): boolean {
  return FOREIGN_PREPARED_STATEMENT.has(String((error as { code?: unknown } | undefined)?.code));
}

/**
 * Whether `client` reaches PostgreSQL through a pooler (PgBouncer, …): a pooler announces a backend PID of its
 * own making at connect, not the PID of the backend that runs the client's statements.
 */
export async function throughPooler(client: PoolClient, query_timeout: number | undefined): Promise<boolean> {
  const probe: TimedQuery = { text: 'SELECT pg_backend_pid() AS pid', query_timeout };
  const { rows } = await client.query<{ pid: number }>(probe);
  return rows[0].pid !== (client as PoolClient & { processID: number | null }).processID;
}

/**
 * Runs `statement` in a transaction of its own with `statement_timeout` set for that transaction alone
 * (`set_config(…, true)`, SET LOCAL): a transaction pooler keeps no session state for its client. `onBackend`
 * hears the PID of the server backend that runs it, which the pooler's own PID is not.
 */
export async function inOwnTransaction(
  client: PoolClient,
  statementTimeout: number,
  statement: TimedQuery,
  onBackend: (pid: number) => void,
): Promise<QueryResult> {
  const { query_timeout } = statement;
  await client.query({ text: 'BEGIN', query_timeout } as TimedQuery);
  try {
    // A parameter, not SQL text: no option value is ever part of a statement.
    const setTimeout = "SELECT set_config('statement_timeout', $1, true), pg_backend_pid() AS pid";
    const set = { text: setTimeout, values: [String(statementTimeout)], query_timeout } as TimedQuery;
    onBackend((await client.query<{ pid: number }>(set)).rows[0].pid);
    const result = await client.query(statement);
    await client.query({ text: 'COMMIT', query_timeout } as TimedQuery);
    return result;
  } catch (error) {
    // An error the server answered (pg's DatabaseError has a severity) leaves the transaction aborted; a lost
    // or given-up connection is destroyed by the caller instead.
    if ((error as { severity?: unknown }).severity !== undefined) {
      await client.query({ text: 'ROLLBACK', query_timeout } as TimedQuery);
    }
    throw error;
  }
}
