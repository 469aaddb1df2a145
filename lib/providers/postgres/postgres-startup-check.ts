import { LockProviderMisconfiguredError } from '../../core/provider/errors.js';
import type { PostgresTables } from './postgres-schema.js';
import type { PostgresSession } from './postgres-session.js';
import { statement } from './postgres-statements.js';

/** How long the check waits for PostgreSQL; a server that takes longer is an outage, not a mistake. */
const CHECK_TIMEOUT_MS = 5_000;

/** The privileges the module needs on each table: what its statements do there (`FOR UPDATE` needs UPDATE). */
function neededPrivileges(tables: PostgresTables): [table: string, privilege: string][] {
  const readWrite = ['SELECT', 'INSERT', 'UPDATE'];
  const withDelete = [...readWrite, 'DELETE'];
  const needs: [string, string[]][] = [
    [tables.locks, readWrite],
    [tables.history, readWrite],
    [tables.jobs, readWrite],
    [tables.skips, readWrite],
    [tables.healthTurn, readWrite],
    [tables.nodes, withDelete],
    [tables.triggers, withDelete],
    [tables.triggerResults, withDelete],
    [tables.healthReports, withDelete],
  ];
  return needs.flatMap(([table, privileges]) => privileges.map((privilege): [string, string] => [table, privilege]));
}

/** The table and privilege pairs the connecting user lacks; a missing table is `missing`. */
const LACKING = statement(`
  SELECT t AS table, p AS privilege, to_regclass(t) IS NULL AS missing
  FROM unnest($1::text[], $2::text[]) AS needed(t, p)
  WHERE CASE WHEN to_regclass(t) IS NULL THEN true ELSE NOT has_table_privilege(t, p) END`);

/** SQLSTATEs that say the pool's settings or the database's grants are wrong, and what each means. */
const MISTAKES: Readonly<Record<string, string>> = {
  '28P01': 'refused the credentials',
  '28000': 'refused the credentials',
  '3D000': 'has no such database',
  '3F000': 'has no such schema',
  '42501': 'refused a statement',
  '42P01': 'has no locks table (createTables is false: create the tables, see the README)',
};

/** Whom PostgreSQL refused, for a message: the user, or none and its likeliest cause. */
function whom(user: string | undefined): string {
  if (user !== undefined) return `for user "${user}"`;
  return (
    'with no user given (is DATABASE_URL unset? ' +
    "Neither the pool's options, its connection string nor PGUSER name one)"
  );
}

/**
 * What a failed statement or connection says about the settings or the grants: `refused the credentials for
 * user "ops": <the server's message> (28P01)`, a missing database, schema, table or privilege. `undefined`
 * for anything else, such as an unreachable server. Never a password: the server's messages hold none.
 */
export function postgresMistake(error: unknown, user: string | undefined): string | undefined {
  // A connection-level failure comes as a LockProviderUnavailableError whose cause is the server's reply.
  const reply = ((error as { cause?: unknown }).cause ?? error) as { code?: unknown; message?: unknown };
  const mistake = MISTAKES[String(reply?.code)];
  return mistake && `${mistake} ${whom(user)}: ${String(reply.message)} (${String(reply.code)})`;
}

/**
 * Checks once, at startup, that PostgreSQL accepts the pool's credentials and database, that the tables
 * exist (created now unless `createTables` is false) and that `user` (the one the pool connects as, if any)
 * holds every privilege the module needs on them. Rejects with a {@link LockProviderMisconfiguredError} naming
 * `host:port/database`, the user and the cause, never a password. Resolves when the server is unreachable:
 * that is an outage.
 */
export async function checkPostgresProvider(
  session: PostgresSession,
  tables: PostgresTables,
  user: string | undefined,
): Promise<void> {
  const where = `PostgreSQL ${session.endpoint}`;
  const inspect = async (): Promise<string | undefined> => {
    try {
      await session.createTables();
      const needed = neededPrivileges(tables);
      const lacking = await session.run<{ table: string; privilege: string; missing: boolean }>(LACKING, [
        needed.map(([table]) => table),
        needed.map(([, privilege]) => privilege),
      ]);
      if (lacking.length === 0) return undefined;
      const missing = [...new Set(lacking.filter((row) => row.missing).map((row) => row.table))];
      if (missing.length > 0) return `has no table ${missing.join(', ')} (createTables is false?)`;
      const grants = lacking.map((row) => `${row.privilege} on ${row.table}`).join(', ');
      return `refused user "${user}" the privileges ${grants} (see the README for the GRANT lines)`;
    } catch (error) {
      // Anything but a mistake is an outage (an unreachable server), which the app must survive.
      return postgresMistake(error, user);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>(
    (resolve) => (timer = setTimeout(() => resolve(undefined), CHECK_TIMEOUT_MS).unref()),
  );
  const finding = await Promise.race([inspect(), timeout]).finally(() => clearTimeout(timer));
  if (finding !== undefined) throw new LockProviderMisconfiguredError(`${where} ${finding}`, finding);
}
